/**
 * The one way to write: read -> decide -> one `db.batch([...])` (one transaction, one round trip).
 *
 * - `guard()` after a conditional UPDATE or DELETE aborts the whole batch when that statement
 *   matched no row (`write_guard`'s CHECK fails), so statements after it (audit rows, side
 *   tables) never outlive a change that did not happen.
 * - `commit()` runs the batch and maps constraint errors to the problem a caller can act on.
 */

import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { integer, type SQLiteTable, sqliteTable } from "drizzle-orm/sqlite-core";
import type { Ctx, Unchanged } from "../lib/context";
import { ApiError, conflict } from "../lib/errors";
import { type Message, m } from "../lib/message";
import type { Db } from "./client";
import { databaseOf } from "./shards";
import { getTableColumns, getTableName, type SQL, type SQLWrapper, sql } from "./sql";

export type Statement = BatchItem<"sqlite">;

/** `(SELECT value FROM json_each(?))`: a list as one bound parameter, however long it is. */
export const jsonValues = (values: readonly (number | string)[]) =>
  sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`;

/** Lists this short are bound value by value (`IN (?, ?)`), longer ones as one JSON parameter. */
const SHORT_LIST = 4;

/**
 * `column IN (values)`. A long list is ONE bound parameter (`jsonValues`), however long it is: D1
 * binds at most 100 parameters per statement, and a request's list of 100 ids plus the statement's
 * own parameters would pass it. A short one (at most SHORT_LIST values: the users a caller acts for,
 * a few ids) is bound value by value, which SQLite's planner sees through: over `json_each` it
 * cannot tell one value from many, and a parent's children (`parent.user_id IN json_each(...)`)
 * were found by walking every guardian of the school instead of the parent's own rows (measured by
 * bench:peak, docs/scaling.md; test/query-plans.test.ts). A subquery is taken as it is. The code's
 * only `IN`: biome refuses drizzle's `inArray` elsewhere in src (biome.json).
 */
export function inList(column: SQLWrapper, values: readonly (number | string)[] | SQLWrapper): SQL {
  if (!Array.isArray(values)) return sql`${column} IN ${values}`;
  if (values.length === 0 || values.length > SHORT_LIST) return sql`${column} IN ${jsonValues(values)}`;
  return sql`${column} IN (${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )})`;
}

/** True when a database error (or its cause) matches: D1 and libSQL word constraint errors alike. */
function isConstraint(err: unknown, pattern: RegExp): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (pattern.test(e.message)) return true;
  }
  return false;
}

export const isUniqueViolation = (err: unknown) => isConstraint(err, /UNIQUE constraint failed/i);
export const isForeignKeyViolation = (err: unknown) => isConstraint(err, /FOREIGN KEY constraint failed/i);
const isGuardFailure = (err: unknown) => isConstraint(err, /CHECK constraint failed: write_guard/i);

/** Thrown by `commit` when a guarded statement matched no row: the caller tells 404 from 409. */
export class GuardFailed extends Error {
  constructor() {
    super("a guarded write matched no row");
    this.name = "GuardFailed";
  }
}

/**
 * The guard table (migration 0007; kept out of the drizzle schema files because it is not data):
 * its CHECK (ok = 1) refuses every row, so inserting one aborts the batch.
 */
const writeGuard = sqliteTable("write_guard", { ok: integer("ok").notNull() });

/** Aborts the batch when the statement just before it changed no row. */
export function guard(db: Db): Statement {
  return db.insert(writeGuard).select(sql`SELECT 0 WHERE changes() = 0`);
}

/**
 * The id of the row a batch just inserted into `table`, usable by later statements of the same
 * batch (tables use AUTOINCREMENT, and D1 runs one transaction at a time).
 */
export function insertedId(table: SQLiteTable) {
  return sql<number>`(SELECT seq FROM sqlite_sequence WHERE name = ${getTableName(table)})`;
}

export interface CommitMessages {
  /** The 409 when a unique index refuses the write. */
  conflict?: Message;
  /** The 409 when a foreign key refuses it. */
  reference?: Message;
}

/**
 * Runs the statements as one batch; constraint errors become 409s, a failed guard `GuardFailed`.
 * In a request whose `If-Match` named a record (`ctx.unchanged`), the first batch to commit starts
 * with a guard that its row's `updated_at` is still the one read: a change in between is a 412.
 * `writes`: false for a batch of reads alone (served even while the school is paused for a move).
 */
export async function commit<T extends readonly [Statement, ...Statement[]]>(
  ctx: Ctx,
  statements: T,
  messages: CommitMessages = {},
  source?: { readonly tenancy?: string },
  writes = true,
): Promise<BatchResponse<T>> {
  // The school's database (src/db/shards.ts), or the platform's (across schools, or a batch about
  // a platform table): every statement runs there. A batch that writes is refused (503) while the
  // school is paused for a move: the one place. A batch of reads alone is not guarded by the
  // request's If-Match and has nothing before it.
  const db = await databaseOf(ctx, source, writes);
  if (writes) await beforeCommit?.(ctx, db);
  return commitOn(ctx, db, statements, messages, writes);
}

/**
 * What runs before every batch on a database (src/db/anchors.ts: the acting user's anchor in a
 * shard, the first time this isolate writes there for them).
 */
let beforeCommit: ((ctx: Ctx, db: Db) => Promise<void>) | undefined;

/** Sets what every batch starts with (src/db/anchors.ts, once when it loads). */
export function startEveryBatchWith(hook: (ctx: Ctx, db: Db) => Promise<void>): void {
  beforeCommit = hook;
}

/**
 * `commit` on the database `db` (the platform's, for the platform step of a write that is also a
 * school's: src/db/anchors.ts). `guarded`: the request's `If-Match` guards this batch (a school's
 * own batch, not a platform step).
 */
export async function commitOn<T extends readonly [Statement, ...Statement[]]>(
  ctx: Ctx,
  db: Db,
  statements: T,
  messages: CommitMessages = {},
  guarded = false,
): Promise<BatchResponse<T>> {
  const version = guarded && ctx.unchanged && !ctx.unchanged.spent ? ctx.unchanged : undefined;
  try {
    if (!version) return await db.batch(statements);
    const withGuard: [Statement, ...T] = [stillAsRead(db, version), ...statements];
    // The results of `statements`, in their order: the guard's own is dropped.
    const [, ...results] = await db.batch(withGuard);
    version.spent = true;
    return results;
  } catch (err) {
    if (isGuardFailure(err)) {
      if (version && (await changedSince(db, version))) throw new ApiError(412, version.message);
      throw new GuardFailed();
    }
    if (isUniqueViolation(err)) throw conflict(messages.conflict ?? m`A record with these values already exists`);
    if (isForeignKeyViolation(err)) {
      throw conflict(
        messages.reference ?? m`The change refers to a record that no longer exists, or one that is still referenced`,
      );
    }
    throw err;
  }
}

/** Aborts the batch unless the row an `If-Match` named still has the `updated_at` it was read with. */
function stillAsRead(db: Db, version: Unchanged): Statement {
  const { table, id, updatedAt } = version;
  return db
    .insert(writeGuard)
    .select(
      sql`SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ${table.id} = ${id} AND ${table.updatedAt} = ${updatedAt})`,
    );
}

/** Whether that row changed (or went) since it was read: why a guarded batch failed. */
async function changedSince(db: Db, version: Unchanged): Promise<boolean> {
  const { table, id, updatedAt } = version;
  const rows = await db
    .select({ one: sql<number>`1` })
    .from(table)
    .where(sql`${table.id} = ${id} AND ${table.updatedAt} = ${updatedAt}`)
    .limit(1);
  return rows.length === 0;
}

/** Aborts the batch when `condition` holds once the statements before it have run (a rule over many rows). */
export function abortIf(db: Db, condition: SQL): Statement {
  return db.insert(writeGuard).select(sql`SELECT 0 WHERE ${condition}`);
}

/**
 * Aborts the batch unless the statement just before it changed exactly `expected` rows (a
 * conditional UPDATE of a set of rows that must all qualify).
 */
export function guardCount(db: Db, expected: number): Statement {
  return db.insert(writeGuard).select(sql`SELECT 0 WHERE changes() <> ${expected}`);
}

/**
 * The select list of a set-based `INSERT INTO table SELECT ...`: drizzle's insert-select lists every
 * column of the table in declaration order, so the values are given by column key (an SQL
 * expression or a value to bind) and every column not given is NULL (`id`: the next id).
 * @example db.insert(taskTargets).select(sql`SELECT ${columnList(taskTargets, { taskId: id, kind: sql`j.value->>0` })} FROM json_each(${rows}) j`)
 */
export function columnList(table: SQLiteTable, values: Record<string, unknown>): SQL {
  return sql.join(
    Object.keys(getTableColumns(table)).map((key) => (Object.hasOwn(values, key) ? sql`${values[key]}` : sql`NULL`)),
    sql`, `,
  );
}

/**
 * Runs `statements` as one batch on the context's database (the school's: src/db/shards.ts), its
 * errors as the database raised them: an import's batch, whose process records a failure as it is.
 */
export async function runBatch<T extends readonly [Statement, ...Statement[]]>(
  ctx: Ctx,
  statements: T,
): Promise<BatchResponse<T>> {
  return (await databaseOf(ctx)).batch(statements);
}
