/**
 * Audit rows, written in the same batch as the change they describe (so a write stays one round
 * trip and no change goes unrecorded). Old values are read by the audit statement itself, placed
 * before the change in the batch with the same WHERE, so both match the same rows or none.
 * Secret columns (token values) are recorded as changed, never with their values.
 *
 * `changes` is always an object of `{ old, new }` pairs, each value as the API knows it: a JSON
 * column's arrays and objects as JSON (not as their text), a boolean column's values as booleans
 * (not 0/1), numbers as numbers. `auditValue` gives that value of a column in SQL (a `Change`'s
 * `as: column` asks for it); the importers' audit rows are `auditRows` over their own FROM.
 */
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../lib/context";
import { auditLog } from "./schema/audit-log";
import { searchCopyKeys } from "./search";
import { Column, getTableColumns, type SQL, type SQLWrapper, sql } from "./sql";
import { insertedId, type Statement } from "./write";

export const REDACTED = "[redacted]";

export interface AuditTarget {
  /** The entity name in the trail: `document`, `device-token`. */
  entity: string;
  table: SQLiteTable & { id: SQLiteColumn; schoolId?: SQLiteColumn };
  /** Column keys whose values are never written to the trail. */
  secret?: readonly string[];
}

/** Columns the trail leaves out: bookkeeping every row has (and search copies, derived from their column). */
const SKIP = new Set(["id", "schoolId", "createdAt", "updatedAt"]);

function actorValues(ctx: Ctx) {
  const { actor } = ctx;
  return {
    actorType: actor.type,
    actorId: actor.type === "user" ? actor.userId : actor.type === "import" ? actor.bulkProcessId : null,
    actorName: actor.type === "job" ? actor.name : null,
  };
}

const columnsOf = (target: AuditTarget) => {
  const copies = searchCopyKeys(target.table);
  return Object.entries(getTableColumns(target.table)).filter(([k]) => !SKIP.has(k) && !copies.has(k));
};

/** A value as the column stores it (booleans as 0/1, JSON as text), so old and new compare alike. */
const driverValue = (column: SQLiteColumn, value: unknown) =>
  value === null || value === undefined || isSql(value) ? value : column.mapToDriverValue(value);

const isSql = (v: unknown): v is SQL => typeof v === "object" && v !== null && "queryChunks" in v;

const isWrapper = (v: unknown): v is SQLWrapper =>
  typeof v === "object" && v !== null && "getSQL" in v && typeof v.getSQL === "function";

/**
 * The SQL of `stored` (a value as `column` stores it: the column itself, a bound value, an
 * expression) as the JSON value the trail records: a JSON column's text as JSON, a boolean
 * column's 0/1 as false/true, anything else as it is (NULL stays null).
 */
export function auditValue(column: SQLiteColumn, stored: unknown): SQL {
  if (column.columnType === "SQLiteTextJson") return sql`json(${stored})`;
  if (column.columnType === "SQLiteBoolean") {
    return sql`CASE WHEN ${stored} IS NULL THEN NULL WHEN ${stored} THEN json('true') ELSE json('false') END`;
  }
  return sql`${stored}`;
}

/** A value given to a write as the JSON value the trail records (booleans stay booleans, JSON stays JSON). */
const givenValue = (column: SQLiteColumn, value: unknown) =>
  column.columnType === "SQLiteTextJson" || column.columnType === "SQLiteBoolean" ? value : driverValue(column, value);

/**
 * The audit row of a record inserted earlier in the same batch. A value given as SQL (the id of a
 * user the same batch invited: `insertedId(users)`) is recorded as what it evaluates to there.
 */
export function auditCreate(
  ctx: Ctx,
  target: AuditTarget,
  values: Record<string, unknown>,
  schoolId: number | null,
): Statement {
  const secret = new Set(target.secret ?? []);
  const entries: [string, { old: null; new: unknown } | SQL][] = [];
  for (const [key, column] of columnsOf(target)) {
    const value = values[key];
    if (value === undefined) continue;
    if (isSql(value) && !secret.has(key)) {
      entries.push([key, sql`json_object('old', NULL, 'new', ${auditValue(column, value)})`]);
    } else entries.push([key, { old: null, new: secret.has(key) ? REDACTED : givenValue(column, value) }]);
  }
  const changes = entries.some(([, v]) => isSql(v))
    ? sql`json_object(${sql.join(
        entries.map(([key, v]) => (isSql(v) ? sql`${key}, ${v}` : sql`${key}, json(${JSON.stringify(v)})`)),
        sql`, `,
      )})`
    : JSON.stringify(Object.fromEntries(entries));
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.insert(auditLog).values({
    createdAt: now,
    updatedAt: now,
    schoolId,
    ...actorValues(ctx),
    entity: target.entity,
    recordId: insertedId(target.table),
    action: "create",
    changes,
    requestId: ctx.requestId,
  });
}

/**
 * The audit rows of an UPDATE of `set` on the rows matching `where`, one per row: only the fields
 * whose value changes, with old and new. Place it just before the UPDATE in the batch.
 */
export function auditUpdate(
  ctx: Ctx,
  target: AuditTarget,
  where: SQL | undefined,
  set: Record<string, unknown>,
  action = "update",
): Statement {
  const secret = new Set(target.secret ?? []);
  const parts: SQL[] = [];
  for (const [key, column] of columnsOf(target)) {
    if (!(key in set) || set[key] === undefined) continue;
    const next = driverValue(column, set[key]);
    const changed = sql`${column} IS NOT ${next}`;
    const entry = secret.has(key)
      ? sql`json_object('old', ${REDACTED}, 'new', ${REDACTED})`
      : sql`json_object('old', ${auditValue(column, column)}, 'new', ${auditValue(column, next)})`;
    parts.push(sql`(${key}, CASE WHEN ${changed} THEN ${entry} END)`);
  }
  return insertSelect(
    ctx,
    target,
    where,
    action,
    parts.length
      ? sql`(SELECT json_group_object(column1, json(column2)) FROM (VALUES ${sql.join(parts, sql`, `)}) WHERE column2 IS NOT NULL)`
      : sql`'{}'`,
  );
}

/**
 * One named field of an audit payload: its value before and after the change, each a value (a
 * string, a number, null; an array, an object or a boolean recorded as JSON) or SQL over the
 * audited row (`auditValue` for a column's typed value). `ifChanged`: recorded only when the two
 * differ (`IS NOT`), as an update records only the fields it changes.
 */
export interface Change {
  old: unknown;
  new: unknown;
  /**
   * `true`: recorded only when old and new differ (`IS NOT`); `"given"`: only when new is not null
   * and differs (a file's empty cell keeps the stored value, so it changes nothing).
   */
  ifChanged?: boolean | "given";
  /** Both values typed as this column's values are recorded (a JSON column's text as JSON, 0/1 as booleans). */
  as?: SQLiteColumn;
}

/** An audit payload named field by field: `{ roleIds: { old: [1], new: [1, 4] } }`. */
export type Changes = Readonly<Record<string, Change>>;

/** A name or a constant written into the statement's text (code's own words, never a request's). */
const literal = (text: string) => sql.raw(`'${text.replaceAll("'", "''")}'`);

/** A value of a `Change` in SQL, as the trail records it. */
function changeValue(value: unknown): SQL {
  if (isSql(value)) return value;
  // A column, a subquery (a `Query`): written where it stands.
  if (value instanceof Column || isWrapper(value)) return sql`${value}`;
  if (value === null || value === undefined) return sql.raw("NULL");
  if (typeof value === "boolean") return sql.raw(value ? "json('true')" : "json('false')");
  if (typeof value === "object") return sql`json(${JSON.stringify(value)})`;
  return sql`${value}`;
}

/**
 * The SQL JSON object of named changes (`{ key: { old, new } }`): the one place a payload of
 * named fields is written. Fields with `ifChanged` drop out when their values are the same.
 */
export function changesOf(changes: Changes): SQL {
  const entries = Object.entries(changes);
  if (entries.length === 0) return sql`'{}'`;
  const typed = (c: Change, value: unknown) => (c.as ? auditValue(c.as, changeValue(value)) : changeValue(value));
  const pair = (c: Change) => sql`json_object('old', ${typed(c, c.old)}, 'new', ${typed(c, c.new)})`;
  const differs = (c: Change) =>
    c.ifChanged === "given"
      ? sql`${changeValue(c.new)} IS NOT NULL AND ${changeValue(c.old)} IS NOT ${changeValue(c.new)}`
      : sql`${changeValue(c.old)} IS NOT ${changeValue(c.new)}`;
  if (!entries.some(([, c]) => c.ifChanged)) {
    return sql`json_object(${sql.join(
      entries.map(([key, c]) => sql`${literal(key)}, ${pair(c)}`),
      sql`, `,
    )})`;
  }
  const rows = entries.map(([key, c]) =>
    c.ifChanged
      ? sql`(${literal(key)}, CASE WHEN ${differs(c)} THEN ${pair(c)} END)`
      : sql`(${literal(key)}, ${pair(c)})`,
  );
  return sql`(SELECT json_group_object(column1, json(column2)) FROM (VALUES ${sql.join(rows, sql`, `)}) WHERE column2 IS NOT NULL)`;
}

/**
 * The audit rows (`create`, or `action`) of rows a set-based INSERT wrote, those matching `where`:
 * each the columns `keys` with old null and new the stored value (typed as the trail records it).
 * Place it after the INSERT.
 */
export function auditCreated(
  ctx: Ctx,
  target: AuditTarget,
  where: SQL | undefined,
  keys: readonly string[],
  action = "create",
): Statement {
  return insertSelect(ctx, target, where, action, createdChanges(target, keys));
}

/** The payload of a created row: the columns `keys`, old null and new the stored value (typed as the trail records it). */
export function createdChanges(target: AuditTarget, keys: readonly string[]): SQL {
  const secret = new Set(target.secret ?? []);
  const columns = getTableColumns(target.table);
  const parts = keys.map((key) => {
    const column = columns[key];
    if (!column) throw new Error(`${target.entity}: no column ${key}`);
    const value = secret.has(key) ? sql`${REDACTED}` : auditValue(column, column);
    return sql`${literal(key)}, json_object('old', NULL, 'new', ${value})`;
  });
  return sql`json_object(${sql.join(parts, sql`, `)})`;
}

/**
 * The audit row of a change that has no row of its own to read (the platform's reset: entity
 * `reset-data`, record 0), with named `changes`, in no school.
 */
export function auditEntry(
  ctx: Ctx,
  entry: { entity: string; recordId: number; action: string; changes: Changes },
): Statement {
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.insert(auditLog).values({
    createdAt: now,
    updatedAt: now,
    schoolId: null,
    ...actorValues(ctx),
    entity: entry.entity,
    recordId: entry.recordId,
    action: entry.action,
    changes: changesOf(entry.changes),
    requestId: ctx.requestId,
  });
}

/** The audit rows of a DELETE of the rows matching `where`: every field's last value. */
export function auditDelete(ctx: Ctx, target: AuditTarget, where: SQL | undefined, action = "delete"): Statement {
  const secret = new Set(target.secret ?? []);
  const parts = columnsOf(target).map(([key, column]) =>
    secret.has(key)
      ? sql`${key}, json_object('old', ${REDACTED}, 'new', NULL)`
      : sql`${key}, json_object('old', ${auditValue(column, column)}, 'new', NULL)`,
  );
  return insertSelect(ctx, target, where, action, sql`json_object(${sql.join(parts, sql`, `)})`);
}

/**
 * The audit rows of a change that is not a column update of the target's rows (an action that
 * writes other tables, like initialising a school's modules): one row per target row matching
 * `where`, with `changes` an SQL expression giving its JSON object. Place it before the change in
 * the batch, with a `where` that holds only when there is something to change. `changes` gives
 * `{ old, new }` pairs too (`auditValue` for a column's typed value).
 */
export function auditAction(
  ctx: Ctx,
  target: AuditTarget,
  where: SQL | undefined,
  action: string,
  changes: SQL,
): Statement {
  return insertSelect(ctx, target, where, action, changes);
}

/**
 * The audit rows of a set-based write in hand-written SQL (an import's rows over `json_each`): one
 * per row that `rows` (`FROM ... WHERE ...`, naming the target's table under its own name: an
 * alias) selects, its record the target row's id, its school the row's (or the current one for a
 * platform table), recorded at `at`.
 */
export function auditRows(
  ctx: Ctx,
  target: AuditTarget,
  rows: SQL,
  action: string,
  changes: SQL,
  at = ctx.deps.clock.now().toISOString(),
): Statement {
  return ctx.deps.db
    .insert(auditLog)
    .select(sql`SELECT ${sql.join(auditColumns(ctx, target, action, changes, at), sql`, `)} ${rows}`);
}

/** The select list of an audit row of the target's row in SQL (drizzle names every column of audit_log, in order). */
function auditColumns(ctx: Ctx, target: AuditTarget, action: string, changes: SQL, now: string): SQL[] {
  const { actorType, actorId, actorName } = actorValues(ctx);
  const values: Record<keyof typeof auditLog.$inferSelect, SQL> = {
    id: sql`NULL`,
    createdAt: sql`${now}`,
    updatedAt: sql`${now}`,
    schoolId: target.table.schoolId ? sql`${target.table.schoolId}` : sql`${ctx.schoolId}`,
    actorType: sql`${actorType}`,
    actorId: sql`${actorId}`,
    actorName: sql`${actorName}`,
    entity: sql`${target.entity}`,
    recordId: sql`${target.table.id}`,
    action: sql`${action}`,
    changes,
    requestId: sql`${ctx.requestId}`,
  };
  // Drizzle lists every column of the table, in declaration order: select them in that order.
  const given = new Map<string, SQL>(Object.entries(values));
  return Object.keys(getTableColumns(auditLog)).map((key) => given.get(key) ?? sql`NULL`);
}

/** `INSERT INTO audit_log SELECT ... FROM <table> WHERE <where>`: one audit row per matching row. */
function insertSelect(ctx: Ctx, target: AuditTarget, where: SQL | undefined, action: string, changes: SQL): Statement {
  const select = auditColumns(ctx, target, action, changes, ctx.deps.clock.now().toISOString());
  const filter = where ? sql` WHERE ${where}` : sql``;
  return ctx.deps.db.insert(auditLog).select(sql`SELECT ${sql.join(select, sql`, `)} FROM ${target.table}${filter}`);
}
