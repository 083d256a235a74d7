/**
 * The shapes a resource is declared with: its config, list filters, guards of a state change, and
 * the record fields every resource shares.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Fields, Query, RowOf } from "../../db/query";
import type { SQL } from "../../db/sql";
import type { Data, RecordTable } from "../../db/table";
import type { Scope } from "../access";
import type { AppModuleKey } from "../app-modules";
import type { Ctx, SchoolCtx } from "../context";
import type { Message } from "../message";
import { recordId } from "../params";
import type { ContextLoader, Tag } from "../route";

export const IdParams = z.object({
  id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "Record id (integer, min 1)" }),
});

export const RecordBase = z.object({
  id: z.number().int().min(1).openapi({ example: 1, description: "The record's id" }),
  createdAt: z.iso
    .datetime()
    .openapi({ example: "2026-11-21T08:00:00.000Z", description: "When the record was created (UTC)" }),
  updatedAt: z.iso
    .datetime()
    .openapi({ example: "2026-11-21T08:00:00.000Z", description: "When the record last changed (UTC)" }),
});

/** ISO 8601 text from the database as the API's date-time string. */
export const timestamps = (row: { id: number; createdAt: string; updatedAt: string }) => ({
  id: row.id,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/**
 * A list filter: its query schema, the condition it adds, and a valid example value (the query
 * plan suite calls every list with every filter's example and checks an index serves it).
 */
export interface Filter<V, X extends Ctx = SchoolCtx> {
  schema: z.ZodType<V | undefined>;
  /** (A method: a filter of any value type is one of `Filters`.) */
  where(ctx: X, value: V): SQL | undefined;
  example: string;
}

/** A list's filters, keyed by query parameter. */
export type Filters<X extends Ctx = SchoolCtx> = Record<string, Filter<unknown, X>>;

/** A nested resource's parent: `/api/v1/school-configuration/{schoolConfigurationId}/...`. */
export interface Parent {
  /** The path parameter: `schoolConfigurationId`. */
  param: string;
  label: Message;
  data: Data<RecordTable>;
  /** The child's column that points at the parent. */
  column: SQLiteColumn;
}

export interface ResourceConfig<
  T extends RecordTable,
  R extends z.ZodObject,
  V extends Fields,
  X extends Ctx = SchoolCtx,
> {
  /** Singular and plural in camelCase: they make the operationIds (`listDocuments`, `getDocument`). */
  name: string;
  plural: string;
  /**
   * The record's name in messages (`` m`Document` ``): "Document 42 not found". Its English also
   * names the operations in the OpenAPI document.
   */
  label: Message;
  /** The collection path; for a nested resource it contains the parent's `{param}`. */
  path: string;
  tag: Tag;
  scope: Scope;
  /**
   * The application module every operation of the resource belongs to (`x-module`): where the
   * current school has it disabled, they answer 403 naming it (src/middleware/authorize.ts).
   */
  module?: AppModuleKey;
  /** The table's accessor (src/db/table.ts): its tenancy and audit entity. */
  data: Data<T, X>;
  /** The returned record (registered as a named OpenAPI schema). */
  record: R;
  /**
   * What a read selects: the table's columns by default, or joined fields (another table's
   * columns, JSON sub-selects) under distinct keys.
   */
  view?: { fields: V; join?: Join };
  /** The record of a row, as this caller may see it (e.g. a secret shown to its owner only). */
  toRecord: (ctx: X, row: NoInfer<RowOf<V>>) => z.output<R>;
  /**
   * A condition every read (list, get) and write (update, delete, action) adds for this caller,
   * e.g. a user's own rows only. Required for a `school`-scoped table that has no school of its
   * own: it is then what keeps the school's rows apart.
   */
  visibleTo?: (ctx: X, access: "read" | "write") => SQL | undefined;
  /** The 409 message when a unique index refuses a write. */
  conflictMessage?: Message;
  parent?: Parent;
  /** What every operation's context needs read first (who the caller acts for). */
  context?: ContextLoader;
  /**
   * A platform resource whose rows shards keep copies of (docs/scaling.md "Anchors"): the shards
   * that keep row `id`'s. Its create, update and delete write the platform database, then the
   * same row to each (src/db/platform-copies.ts).
   */
  anchors?: (ctx: X, id: number) => Promise<readonly string[]> | readonly string[];
  /**
   * A school-scoped resource over platform rows (a user's devices, served in a school): its writes
   * run on the platform database, as a platform resource's do, not on the school's shard.
   */
  platformRows?: true;
}

/** Adds the joins a view's fields read from (the fields name the joined tables' columns). */
export type Join = <Row>(query: Query<Row>) => Query<Row>;

/** A condition the row must meet for a change, else 422 with `message`. */
export interface Rule {
  when: SQL;
  message: Message;
}

/** The conditions of a state change: allowed states (else 409) and business rules (else 422). */
export interface Guards {
  /** The states the record may be in (its status column and the allowed values), else 409. */
  from?: { column: SQLiteColumn; states: readonly string[] };
  /** Business rules over the row, else 422. */
  rules?: Rule[];
  /** The 409's detail for the state the record is in (default: names the states `action` needs). */
  conflict?: (state: string) => Message;
}

export type { Fields, RowOf };
