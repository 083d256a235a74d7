/**
 * The data layer's read: a query over one table and the tables joined to it, where every table
 * that takes part brings its own tenant condition (`Data.scope`). `where` adds conditions (it
 * never replaces the scope, unlike drizzle's), `join` adds the joined table's scope to its ON
 * clause, and every selected field is aliased by its key (D1's `batch()` maps rows by column
 * name, so two `id`s of joined tables would scramble a row).
 *
 * A query is a value: each method returns a new one. It runs alone (`all`, `first`), goes into a
 * batch (`commit`'s reads), or is embedded in other SQL as a subquery (`EXISTS ${q}`,
 * `inArray(column, q)`), where drizzle puts it in parentheses.
 */
import { and, getTableColumns, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../lib/context";
import type { Db } from "./client";

/** Selected fields of a read: columns and SQL expressions, each under its own key. */
export type Fields = Record<string, SQLiteColumn | SQL | SQL.Aliased>;

/** The row a set of fields reads. */
export type RowOf<F extends Fields> = {
  [K in keyof F]: F[K] extends SQLiteColumn
    ? F[K]["_"]["notNull"] extends true
      ? F[K]["_"]["data"]
      : F[K]["_"]["data"] | null
    : F[K] extends SQL.Aliased<infer X>
      ? X
      : F[K] extends SQL<infer X>
        ? X
        : never;
};

/** The columns of a table as fields. */
export type ColumnsOf<T extends SQLiteTable> = T["_"]["columns"];

/** Something a query can read from or join: a table with the condition that keeps it in the school. */
export interface Source {
  readonly table: SQLiteTable;
  /** The tenant condition for this caller, or undefined for a table every school shares. */
  scope(ctx: Ctx, how: "read" | "write"): SQL | undefined;
}

interface Join {
  source: Source;
  on: SQL;
  kind: "inner" | "left";
}

interface Parts {
  from: Source;
  fields: Fields;
  joins: readonly Join[];
  where: readonly (SQL | undefined)[];
  orderBy: readonly SQL[];
  limit?: number;
  offset?: number;
  groupBy: readonly (SQLiteColumn | SQL)[];
}

/**
 * A field under its key as alias. Columns keep their decoding (booleans, JSON modes), and the
 * field is wrapped once more so drizzle never strips the table from a column in it (it does
 * so for the top-level columns of a one-table select, which would make a correlated subquery's
 * `${outer.id}` bind to the inner table).
 */
export function aliased(key: string, f: SQLiteColumn | SQL | SQL.Aliased): SQL.Aliased {
  if ("mapFromDriverValue" in f) return sql`${sql`${f}`}`.mapWith(f).as(key);
  // An expression's own decoder is not kept: SQL fields read what the database gives.
  return sql`${"fieldAlias" in f ? f.sql : f}`.as(key);
}

export class Query<Row> implements SQLWrapper {
  declare readonly _row: Row;
  constructor(
    private readonly ctx: Ctx,
    private readonly parts: Parts,
  ) {}

  private with(change: Partial<Parts>): Query<Row> {
    return new Query<Row>(this.ctx, { ...this.parts, ...change });
  }

  /** Adds conditions (ANDed with the scope and with conditions given before). */
  where(...conditions: (SQL | undefined)[]): Query<Row> {
    return this.with({ where: [...this.parts.where, ...conditions] });
  }

  /** Joins a table on `on`; the joined table's tenant condition goes into the ON clause. */
  join(source: Source, on: SQL, kind: "inner" | "left" = "inner"): Query<Row> {
    return this.with({ joins: [...this.parts.joins, { source, on, kind }] });
  }

  leftJoin(source: Source, on: SQL): Query<Row> {
    return this.join(source, on, "left");
  }

  orderBy(...terms: SQL[]): Query<Row> {
    return this.with({ orderBy: terms });
  }

  groupBy(...terms: (SQLiteColumn | SQL)[]): Query<Row> {
    return this.with({ groupBy: terms });
  }

  limit(limit: number): Query<Row> {
    return this.with({ limit });
  }

  offset(offset: number): Query<Row> {
    return this.with({ offset });
  }

  /** The same query reading other fields (a count, an id list for `IN`, one value). */
  select<F extends Fields>(fields: F): Query<RowOf<F>> {
    return new Query<RowOf<F>>(this.ctx, { ...this.parts, fields });
  }

  /** `count(*)` of the rows this query matches (its limit, offset and order dropped). */
  count(): Query<{ n: number }> {
    return new Query<{ n: number }>(this.ctx, {
      ...this.parts,
      fields: { n: sql<number>`count(*)` },
      orderBy: [],
      limit: undefined,
      offset: undefined,
    });
  }

  /** The drizzle statement: what a batch runs. */
  statement() {
    const { ctx } = this;
    const { from, fields, joins, where, orderBy, limit, offset, groupBy } = this.parts;
    const selection = Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, aliased(key, f)]));
    let q = db(ctx).select(selection).from(from.table).$dynamic();
    for (const j of joins) {
      const on = and(j.on, j.source.scope(ctx, "read"));
      q = j.kind === "left" ? q.leftJoin(j.source.table, on) : q.innerJoin(j.source.table, on);
    }
    q = q.where(and(from.scope(ctx, "read"), ...where));
    if (groupBy.length) q = q.groupBy(...groupBy);
    if (orderBy.length) q = q.orderBy(...orderBy);
    if (limit !== undefined) q = q.limit(limit);
    if (offset !== undefined) q = q.offset(offset);
    return q;
  }

  getSQL(): SQL {
    return this.statement().getSQL();
  }

  /** Every row. */
  async all(): Promise<Row[]> {
    return rowsOf<Row>(await this.statement());
  }

  /** The first row, or undefined. */
  async first(): Promise<Row | undefined> {
    return rowsOf<Row>(await this.limit(1).statement())[0];
  }
}

/**
 * The rows drizzle decoded for a query's fields. Drizzle types a dynamic select's rows from the
 * aliased selection, which TypeScript cannot relate to `RowOf<F>`; they are the same keys and
 * decoders, so this is the one place the row type is asserted.
 */
export function rowsOf<Row>(rows: unknown): Row[] {
  // The same keys and decoders as RowOf<F>, which drizzle's aliased selection type cannot express.
  return rows as Row[];
}

const db = (ctx: Ctx): Db => ctx.deps.db;

/** A query over `source` reading `fields` (default: every column of its table). */
export function query<F extends Fields>(ctx: Ctx, source: Source, fields: F): Query<RowOf<F>> {
  return new Query<RowOf<F>>(ctx, { from: source, fields, joins: [], where: [], orderBy: [], groupBy: [] });
}

/** Every column of a table as fields. */
export const columnsOf = <T extends SQLiteTable>(table: T): ColumnsOf<T> => getTableColumns(table);
