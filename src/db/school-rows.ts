import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx, SchoolCtx } from "../lib/context";
import type { Source } from "./query";
import { eq, type SQL, sql } from "./sql";
import { columnList } from "./write";

/**
 * A table of a school's rows that are not records (no timestamps, no audit rows: a log a record's
 * change writes, `route_list_change`): its accessor writes the school of what a module inserts.
 */
export class SchoolRows<T extends SQLiteTable & { schoolId: SQLiteColumn }> implements Source {
  constructor(readonly table: T) {}

  scope(ctx: Ctx): SQL | undefined {
    return ctx.schoolId === null ? undefined : eq(this.table.schoolId, ctx.schoolId);
  }

  /** The INSERT of one row in the current school (the school written here; columns not given are NULL). */
  insertRow(ctx: SchoolCtx, values: { [K in keyof Omit<T["$inferInsert"], "schoolId">]: T["$inferInsert"][K] | SQL }) {
    return ctx.deps.db
      .insert(this.table)
      .select(sql`SELECT ${columnList(this.table, { ...values, schoolId: ctx.schoolId })}`);
  }
}
