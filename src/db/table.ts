/**
 * The data layer: one accessor per table, built once next to the table (`dataTable(students, {...})`),
 * that every read and write of its rows goes through. It takes the service context as a required
 * argument and is the only code that writes a `school_id` condition:
 *
 * - `scope(ctx)` is the table's tenant condition: its rows of the current school; for a table with
 *   shared rows (the built-in roles, which belong to no school) reads also see the shared rows and
 *   writes never touch them; a table every school shares (users, schools) has none.
 * - `select(ctx, fields)` starts a `Query` (src/db/query.ts) scoped to the school; joined
 *   accessors bring their own scope.
 * - `insert`, `update`, `delete` (and the guarded one-row `updateOne`, `deleteOne`) give the
 *   statements of a write with its audit row, for one `commit` (src/db/write.ts); the folded
 *   copies of searched columns (src/db/search.ts) are written with the values.
 * - hand-written set-based SQL (over `json_each` rows) names the table through the accessor too:
 *   `insertFrom` (INSERT ... SELECT, the school and timestamps written here), `insertRow` (one row
 *   for an upsert), `joinOn` (a JOIN item with its scope), `where(ctx, ...)` (its WHERE),
 *   `exists` and `pick` (one-table subqueries). A module never calls `scope` itself
 *   (scripts/architecture.ts refuses it).
 * - the audit trail is written here too, never by a module: `update`/`delete` are set-based (one
 *   audit row per row touched, by an `INSERT ... SELECT` before the change), `action` records an
 *   action that writes other tables, `insertMany` the rows of a set-based insert, `completed` a
 *   trigger-made row; a payload more than the row's columns is named `changes`
 *   (`{ roleIds: { old, new } }`), which the data layer renders (src/db/audit.ts `changesOf`).
 *
 * @example
 * export const Documents = dataTable(documents, { entity: "document" });
 * const rows = await Documents.select(ctx, { id: documents.id, name: documents.name })
 *   .where(contains(documents.name, "report")).orderBy(asc(documents.id)).limit(20).all();
 * await commit(ctx, Documents.updateOne(ctx, id, { name }));
 */
import type { SQLiteColumn, SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type Ctx, now, type SchoolCtx } from "../lib/context";
import { KeptAliasHandler } from "./alias";
import {
  type AuditTarget,
  auditAction,
  auditCreate,
  auditCreated,
  auditDelete,
  auditRows,
  auditUpdate,
  type Changes,
  changesOf,
  createdChanges,
} from "./audit";
import { type ColumnsOf, columnsOf, type Fields, type Query, query, type RowOf, type Source } from "./query";
import { withSearch } from "./search";
import { and, Column, eq, getTableColumns, getTableName, is, ne, type SQL, type SQLWrapper, sql } from "./sql";
import { columnList, guard, inList, insertedId, type Statement } from "./write";

export { auditEntry, type Change, type Changes, REDACTED } from "./audit";

/** A table the data layer serves: every stored record has an integer id and its timestamps. */
export type RecordTable = SQLiteTable & {
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
  schoolId?: SQLiteColumn;
};

/**
 * How a table's rows belong to schools:
 * - `school`: each row to one school (`school_id`, not null);
 * - `shared`: rows of one school, and rows of none that every school reads and none may write;
 * - `none`: the platform's rows every school shares (schools, users, the permission catalogue);
 * - `school-or-platform`: rows of one school (or of none), read by school on school routes and
 *   all together on platform routes, where no school is current (the audit trail).
 */
export type Tenancy = "school" | "shared" | "none" | "school-or-platform";

export interface DataSpec<T extends RecordTable> {
  /** The name in the audit trail and in permissions: `student`. */
  entity: string;
  /** Default: `school` when the table has a `school_id` column. */
  tenancy?: Tenancy;
  /** Columns never written to the audit trail (token values). */
  secret?: readonly (keyof T["$inferSelect"] & string)[];
}

/** Column values an insert may set: everything but what the data layer writes itself. */
export type InsertValues<T extends RecordTable> = Omit<
  T["$inferInsert"],
  "id" | "schoolId" | "createdAt" | "updatedAt"
>;
/**
 * Column values an insert may set: a value, or an SQL expression (the id of a row the same batch
 * inserted before it: `X.insertedId()`).
 */
export type InsertSet<T extends RecordTable> = { [K in keyof InsertValues<T>]: InsertValues<T>[K] | SQL };
/** Column values an update may set (a value or an SQL expression over the row). */
export type SetValues<T extends RecordTable> = { [K in keyof InsertValues<T>]?: InsertValues<T>[K] | SQL };

/**
 * The select list of one row of `insertFrom`, in the table's column order (a method's type, so an
 * accessor of a given table is still a `Data<RecordTable>`).
 */
export type SelectList<T extends RecordTable> = { list(values: InsertSet<T>): SQL }["list"];

export interface WriteOptions {
  /** The audit action (`update`, `delete`, or the action's name: `confirm`). */
  action?: string;
  /** Further conditions the row must meet (states, rules). */
  where?: SQL;
  /**
   * The audit row's `changes`, named field by field (`{ roleIds: { old, new } }`, src/db/audit.ts
   * `Changes`), when the change is more than its columns: a role's permissions, kept in another table.
   */
  changes?: Changes;
}

/** What an audited action records: its name and its named changes (`Data.action`). */
export interface ActionAudit {
  action: string;
  changes: Changes;
}

/** Schools whose tenant conditions a table keeps per isolate (then it starts again). */
const MAX_SCOPES = 256;

/**
 * The context a table's accessors take: a school's (`SchoolCtx`) for a table of school rows; any
 * (`Ctx`) for a platform table (no `school_id`) or one of `school-or-platform` rows.
 */
export type CtxFor<T extends RecordTable, S> = S extends { tenancy: "school-or-platform" | "none" }
  ? Ctx
  : T extends { schoolId: SQLiteColumn }
    ? SchoolCtx
    : Ctx;

export class Data<T extends RecordTable, C extends Ctx = Ctx> implements Source {
  readonly entity: string;
  readonly tenancy: Tenancy;
  readonly audit: AuditTarget;
  private readonly schoolColumn: SQLiteColumn | undefined;

  constructor(
    readonly table: T,
    spec: DataSpec<T>,
    /** The FROM item of an alias: `"family" "f"` (drizzle names an alias by its new name only). */
    private readonly fromItem?: SQL,
  ) {
    this.entity = spec.entity;
    this.schoolColumn = table.schoolId;
    this.tenancy = spec.tenancy ?? (this.schoolColumn ? "school" : "none");
    if (this.tenancy !== "none" && !this.schoolColumn) {
      throw new Error(`${getTableName(table)}: a ${this.tenancy} table needs a school_id column`);
    }
    this.audit = { entity: spec.entity, table, secret: spec.secret };
  }

  /**
   * The table's tenant condition for this caller: its rows of the current school. A condition is a
   * value (nothing changes an SQL tree once built), so each school's is built once per isolate and
   * shared by every statement that names the table (a batch of nine statements built thirty).
   */
  scope(ctx: Ctx, how: "read" | "write" = "write"): SQL | undefined {
    const column = this.schoolColumn;
    if (this.tenancy === "none" || !column) return undefined;
    if (this.tenancy === "school-or-platform" && ctx.schoolId === null && how === "read") return undefined;
    const school = ctx.schoolId;
    // The accessors take a `SchoolCtx`; a platform query may still join a school's table.
    if (school === null) throw new Error("a school's rows read without a current school");
    // Shared rows (no school) count as school 0 for reads: an index on ifnull(school_id, 0) serves it.
    const shared = this.tenancy === "shared" && how === "read";
    const scopes = shared ? this.sharedScopes : this.scopes;
    let condition = scopes.get(school);
    if (!condition) {
      // Two values written out, not a JSON list: the planner then seeks both in the index, with no json_each scan.
      condition = shared ? sql`ifnull(${column}, 0) IN (0, ${school})` : eq(column, school);
      if (scopes.size >= MAX_SCOPES) scopes.clear();
      scopes.set(school, condition);
    }
    return condition;
  }

  private readonly scopes = new Map<number, SQL>();
  private readonly sharedScopes = new Map<number, SQL>();

  /**
   * The rows of another school than the current one: of school `school`, of the school a
   * correlated column names (`schools.id` of an outer query), or of each school a subquery lists.
   * For platform code about schools themselves (a school's own address, the rows of schools being
   * deleted, a school the super-admin looks up).
   */
  ofSchool(school: number | SQLiteColumn | SQLWrapper): SQL {
    const column = this.schoolColumnOrThrow();
    if (typeof school === "number" || is(school, Column)) return eq(column, school);
    return inList(column, school);
  }

  /**
   * The rows of every school but the current one: for the few reads of whether a person is known
   * in another school (then a school's edit of them keeps to its own copy).
   */
  elsewhere(ctx: SchoolCtx): SQL {
    return ne(this.schoolColumnOrThrow(), ctx.schoolId);
  }

  /**
   * The row's own school, as a column to select or to correlate on (`Y.ofSchool(X.schoolOf())`: the
   * rows of Y in the same school as this row): for reads across schools (one user's memberships, the
   * audit trail) where the row, not the current school, says which school counts.
   */
  schoolOf(): NonNullable<T["schoolId"]> {
    return this.schoolColumnOrThrow();
  }

  private schoolColumnOrThrow(): NonNullable<T["schoolId"]> {
    const column = this.table.schoolId;
    if (!column) throw new Error(`${getTableName(this.table)}: a table without school_id belongs to no school`);
    return column;
  }

  /**
   * A read of this table's rows in every school, `fields` given the school column: for the few
   * platform reads about one user across the schools they belong to (what an access token
   * carries). Never for a school's own work, which `select` scopes.
   */
  everySchool<F extends Fields>(ctx: Ctx, fields: (school: NonNullable<T["schoolId"]>) => F): Query<RowOf<F>> {
    return query(ctx, { table: this.table, scope: () => undefined }, fields(this.schoolColumnOrThrow()));
  }

  /**
   * The current school as the `school_id` column of a drizzle `INSERT ... SELECT`, under the
   * column's name. Superseded by `insertFrom`; modules may not call it (scripts/architecture.ts).
   */
  insertedSchool(ctx: SchoolCtx): SQL.Aliased<number> {
    const column = this.schoolColumnOrThrow();
    return sql<number>`${ctx.schoolId}`.as(column.name);
  }

  /**
   * A set-based `INSERT INTO this table SELECT ...` of rows in the current school: `select` writes
   * the SELECT (over `json_each` rows, other tables, a `UNION ALL`), each row's select list through
   * `row(values)`, which writes the school and the timestamps itself (every column not given is
   * NULL), at `at` (default: now; the time of the batch's other statements where they must match).
   * It writes no audit row: where the rows are records the caller audits them as before. Chain
   * `.onConflictDoNothing()` for rows that may exist.
   * @example
   * TimeSlots.insertFrom(ctx, (row) => sql`SELECT ${row({ sessionId: id, date: sql`j.value->>0` })}
   *   FROM json_each(${JSON.stringify(dates)}) j`).onConflictDoNothing();
   */
  insertFrom(ctx: C, select: (row: SelectList<T>) => SQL, at = now(ctx)) {
    const school = this.tenancy === "none" ? {} : { schoolId: this.currentSchool(ctx) };
    const row = (values: InsertSet<T>) =>
      columnList(this.table, { ...values, ...school, createdAt: at, updatedAt: at });
    return ctx.deps.db.insert(this.table).select(select(row));
  }

  /**
   * drizzle's INSERT of one row in the current school, the school and the timestamps written here,
   * for what `insert` does not serve: an upsert (chain `.onConflictDoNothing()` or
   * `.onConflictDoUpdate({ target: X.schoolKey(...), ..., setWhere: X.where(ctx) })`) or a row
   * whose audit row the caller writes, at `at` (default: now). It writes no audit row.
   * @example
   * Memberships.insertRow(ctx, { userId }).onConflictDoUpdate({ target: Memberships.schoolKey(memberships.userId), set: { deletedAt: null } });
   */
  insertRow(ctx: C, values: InsertSet<T>, at = now(ctx)) {
    const row: SQLiteInsertValue<T> = {
      ...values,
      createdAt: at,
      updatedAt: at,
      ...(this.tenancy === "none" ? {} : { schoolId: this.currentSchool(ctx) }),
    };
    return ctx.deps.db.insert(this.table).values(withSearch(this.table, row));
  }

  /**
   * The table as a JOIN item of hand-written set-based SQL (over `json_each` rows, which a `Query`
   * cannot join), its tenant condition in the ON clause before `on`. A `Query` joins an accessor
   * with `.join(X, on)`; a one-table subquery is `X.exists(ctx, ...)` or `X.pick(ctx, ...)`; the
   * WHERE of hand-written SQL naming the table is `X.where(ctx, ...)`.
   * @example
   * const f = Families.alias("f");
   * sql`SELECT f.id FROM json_each(${json}) j ${f.joinOn(ctx, sql`f.family_number = j.value`, "CROSS JOIN")}`
   */
  joinOn(ctx: C, on: SQL, kind: "JOIN" | "LEFT JOIN" | "CROSS JOIN" = "JOIN"): SQL {
    return sql`${sql.raw(kind)} ${this.from} ON ${this.where(ctx, on)}`;
  }

  /** The current school, for a write (a platform caller has none). */
  private currentSchool(ctx: Ctx): number {
    this.schoolColumnOrThrow();
    if (ctx.schoolId === null) throw new Error(`${getTableName(this.table)}: a row written without a current school`);
    return ctx.schoolId;
  }

  /** The scope and the given conditions, ANDed. */
  where(ctx: C, ...conditions: (SQL | undefined)[]): SQL | undefined {
    return and(this.scope(ctx, "write"), ...conditions);
  }

  /**
   * A read of this table's rows in the current school (every column, or `fields`). `write` reads
   * only the rows a write may touch (for a table with shared rows: not those).
   */
  select(ctx: C): Query<RowOf<ColumnsOf<T>>>;
  select<F extends Fields>(ctx: C, fields: F, how?: "read" | "write"): Query<RowOf<F>>;
  select(ctx: C, fields?: Fields, how: "read" | "write" = "read") {
    return query(ctx, how === "read" ? this : this.writable, fields ?? columnsOf(this.table));
  }

  /** This table as a source whose reads see only what a write may touch. */
  private get writable(): Source {
    return { table: this.table, scope: (ctx: Ctx) => this.scope(ctx, "write") };
  }

  /** The record `id` of the current school (every column, or `fields`), or undefined. */
  find(ctx: C, id: number): Promise<RowOf<ColumnsOf<T>> | undefined>;
  find<F extends Fields>(ctx: C, id: number, fields: F): Promise<RowOf<F> | undefined>;
  find(ctx: C, id: number, fields?: Fields) {
    return query(ctx, this, fields ?? columnsOf(this.table))
      .where(eq(this.table.id, id))
      .first();
  }

  /** `EXISTS (a row of this table in the current school meeting the conditions)`. */
  exists(ctx: C, ...conditions: (SQL | undefined)[]): SQL<boolean> {
    return sql<boolean>`EXISTS ${this.select(ctx, { one: sql`1` }).where(...conditions)}`;
  }

  /** `(SELECT column FROM this table WHERE scope AND conditions)`: for `IN` and scalar subqueries. */
  pick(ctx: C, column: SQLiteColumn | SQL, ...conditions: (SQL | undefined)[]) {
    return this.select(ctx, { value: column }).where(...conditions);
  }

  /**
   * INSERT of one row in the current school (returning it) and its audit row; `changes` replaces
   * the audit row's changes (named fields over the new row) when the record is more than its columns;
   * `inSchool`: a platform row (a device's token) recorded under the current school, as its updates are.
   */
  insert(
    ctx: C,
    values: InsertSet<T>,
    options: { changes?: Changes; inSchool?: boolean; stored?: readonly (keyof InsertValues<T> & string)[] } = {},
  ) {
    const at = now(ctx);
    const schoolId = this.tenancy === "none" ? null : ctx.schoolId;
    const row: SQLiteInsertValue<T> = {
      ...values,
      createdAt: at,
      updatedAt: at,
      ...(schoolId === null ? {} : { schoolId }),
    };
    // `stored`: values the insert computes (a count over other tables), recorded as the row holds
    // them rather than computed again.
    const audited: Record<string, unknown> = { ...row };
    const columns = getTableColumns(this.table);
    for (const key of options.stored ?? []) {
      audited[key] = sql`(${this.pick(ctx, sql`${columns[key]}`, eq(this.table.id, this.insertedId()))})`;
    }
    return [
      ctx.deps.db.insert(this.table).values(withSearch(this.table, row)).returning(),
      options.changes
        ? auditAction(ctx, this.audit, eq(this.table.id, this.insertedId()), "create", changesOf(options.changes))
        : auditCreate(ctx, this.audit, audited, options.inSchool ? ctx.schoolId : schoolId),
    ] as const;
  }

  /** The id of the row an insert earlier in the same batch wrote (tables use AUTOINCREMENT). */
  insertedId(): SQL<number> {
    return insertedId(this.table);
  }

  /**
   * The audited set-based update: audit + UPDATE of this school's rows matching `where`, one audit
   * row per row (written by an `INSERT ... SELECT` over the same rows, before the update), its
   * payload the columns `set` changes, old and new computed from the SET expressions themselves; a
   * value may be SQL over the row. `action` names it in the trail; `changes` records named fields
   * instead, for a change that is more than the row's columns.
   * @example
   * // Every open task of the folder archived, each task's audit row `{ archived: { old: false, new: true } }`:
   * batch.add(...Tasks.update(ctx, and(eq(tasks.folderId, id), eq(tasks.archived, false)), { archived: true }, "archive"));
   * // A column set from another column of the same row:
   * batch.add(...Students.update(ctx, inList(students.id, ids), { lastName: sql`upper(${students.lastName})` }));
   */
  update(ctx: C, where: SQL | undefined, set: SetValues<T>, options: string | Omit<WriteOptions, "where"> = "update") {
    const { action = "update", changes } = typeof options === "string" ? { action: options } : options;
    const values: Record<string, unknown> = { ...set, updatedAt: now(ctx) };
    const scoped = this.where(ctx, where);
    const audit = changes
      ? auditAction(ctx, this.audit, scoped, action, changesOf(changes))
      : auditUpdate(ctx, this.audit, scoped, values, action);
    // The UPDATE is drizzle's, for a caller that needs its `returning` rows.
    const update = ctx.deps.db.update(this.table).set(withSearch(this.table, values)).where(scoped);
    const statements: [Statement, typeof update] = [audit, update];
    return statements;
  }

  /**
   * The audited set-based delete: audit + DELETE of this school's rows matching `where`, each audit
   * row every field's last value (or the named `changes`: a task's reason for going).
   */
  delete(
    ctx: C,
    where: SQL | undefined,
    options: string | Omit<WriteOptions, "where"> = "delete",
  ): [Statement, Statement] {
    const { action = "delete", changes } = typeof options === "string" ? { action: options } : options;
    const scoped = this.where(ctx, where);
    return [
      changes
        ? auditAction(ctx, this.audit, scoped, action, changesOf(changes))
        : auditDelete(ctx, this.audit, scoped, action),
      ctx.deps.db.delete(this.table).where(scoped),
    ];
  }

  /**
   * The audited update of rows in every school (`update` without the scope): for a job that has no
   * school (failing every school's stuck processes). The UPDATE is drizzle's, for its `returning`.
   * @example
   * const [audit, update] = BulkProcesses.updateEverySchool(ctx, stuck, { status: "failed" }, "fail");
   * await commit(ctx, [audit, update.returning({ id: bulkProcesses.id })]);
   */
  updateEverySchool(ctx: Ctx, where: SQL | undefined, set: SetValues<T>, action = "update") {
    const values: Record<string, unknown> = { ...set, updatedAt: now(ctx) };
    const update = ctx.deps.db.update(this.table).set(withSearch(this.table, values)).where(where);
    const statements: [Statement, typeof update] = [auditUpdate(ctx, this.audit, where, values, action), update];
    return statements;
  }

  /**
   * The audited delete of rows in every school (`delete` without the scope): for platform code
   * about one person across the schools they belong to (deleting their account).
   */
  deleteEverySchool(ctx: Ctx, where: SQL, action = "delete"): [Statement, Statement] {
    return [auditDelete(ctx, this.audit, where, action), ctx.deps.db.delete(this.table).where(where)];
  }

  /** Audit + UPDATE of the record `id` + a guard that aborts the batch when it matched nothing. */
  updateOne(ctx: C, id: number | SQL<number>, set: SetValues<T>, options: WriteOptions = {}): Statement[] {
    const where = and(eq(this.table.id, id), options.where);
    return [...this.update(ctx, where, set, options), guard(ctx.deps.db)];
  }

  /** Audit + DELETE of the record `id` + a guard. */
  deleteOne(ctx: C, id: number | SQL<number>, options: WriteOptions = {}): Statement[] {
    return [...this.delete(ctx, and(eq(this.table.id, id), options.where), options), guard(ctx.deps.db)];
  }

  /**
   * An audited action on this school's rows matching `where` that is not a column update of them
   * (it writes other tables: a group's participants, a role's permissions): its audit rows, one per
   * matching row and read before the writes, with the named `changes` (the data layer writes the
   * payload), then the `writes`. A `where` that holds only when there is something to change keeps
   * a no-op out of the trail.
   * @example
   * batch.add(
   *   ...Users.action(ctx, eq(users.id, userId), {
   *     action: "set-roles",
   *     changes: { roleIds: { old: held, new: wanted } }, // values, or SQL over the row
   *   }, ...roleWrites),
   * );
   */
  action(ctx: C, where: SQL | undefined, audit: ActionAudit, ...writes: Statement[]): [Statement, ...Statement[]] {
    return [auditAction(ctx, this.audit, this.where(ctx, where), audit.action, changesOf(audit.changes)), ...writes];
  }

  /**
   * The audited set-based insert: `insert` (an `INSERT ... SELECT` of many rows) and the audit row
   * of each row it wrote (`inserted`: the condition that picks them once it ran, e.g. their ids
   * above the sequence before it), recording the columns `keys` as created (old null, new the
   * stored value, as the trail types it). `action` is `create` unless named.
   * @example
   * const before = sql`(SELECT seq FROM sqlite_sequence WHERE name = 'group_teacher')`;
   * batch.add(...GroupTeachers.insertMany(ctx, insertTeachers, sql`${groupTeachers.id} > ${before}`, ["groupId", "teacherId"]));
   */
  insertMany(
    ctx: C,
    insert: Statement,
    inserted: SQL | undefined,
    keys: readonly (keyof InsertValues<T> & string)[],
    action = "create",
  ): [Statement, Statement] {
    return [insert, auditCreated(ctx, this.audit, this.where(ctx, inserted), keys, action)];
  }

  /**
   * A record a trigger made earlier in the batch (a role's profile row, made by the membership's
   * trigger) completed by this batch: the UPDATE of this school's rows matching `where` with `set`
   * (and its searched copies), then its audit row, recorded as its creation with `set` and the
   * `made` values the trigger wrote (its user).
   */
  completed(ctx: C, where: SQL, set: SetValues<T>, made: SetValues<T> = {}): [Statement, Statement] {
    const schoolId = this.tenancy === "none" ? null : ctx.schoolId;
    return [
      ctx.deps.db
        .update(this.table)
        .set(withSearch(this.table, { ...set, updatedAt: now(ctx) }))
        .where(this.where(ctx, where)),
      auditCreate(ctx, this.audit, { ...made, ...set }, schoolId),
    ];
  }

  /**
   * The audit rows of a set-based write in hand-written SQL (an import's upsert over `json_each`):
   * one per row of this table, under this accessor's name (an alias), that `rows` selects (`FROM
   * ... WHERE ...`, the table joined with `joinOn`), recorded as `audit.action` with the named
   * `changes` (SQL over the row and the file's values), or as created with the columns `created`;
   * at `at` (default: now). The data layer writes actor, school, record and payload. Place it
   * before an update (it reads the old values), after an insert (it reads the rows written).
   * @example
   * f.auditRows(ctx, sql`FROM json_each(${json}) j ${f.joinOn(ctx, sql`f.number = j.value->>0`, "CROSS JOIN")}
   *   WHERE f.name IS NOT j.value->>1`, { action: "update", changes: { name: { old: sql`f.name`, new: sql`j.value->>1` } } });
   */
  auditRows(
    ctx: C,
    rows: SQL,
    audit: ActionAudit | { action?: string; created: readonly (keyof InsertValues<T> & string)[] },
    at = now(ctx),
  ): Statement {
    const [action, changes] =
      "created" in audit
        ? [audit.action ?? "create", createdChanges(this.audit, audit.created)]
        : [audit.action, changesOf(audit.changes)];
    return auditRows(ctx, this.audit, rows, action, changes, at);
  }

  /** The audit rows of rows this batch removes some other way (a cascade): place before it. */
  auditRemoved(ctx: C, where: SQL | undefined, action = "delete"): Statement {
    return auditDelete(ctx, this.audit, this.where(ctx, where), action);
  }

  /**
   * The audit rows of rows a cascade removes in whichever school they are (`where` says which:
   * the profiles a taken role removes, also when a person's account goes in every school): place
   * before the statement that removes them.
   */
  removedEverySchool(ctx: Ctx, where: SQL, action = "delete"): Statement {
    return auditDelete(ctx, this.audit, where, action);
  }

  /**
   * The table under another name in a query (a self-join, or set-based SQL over `json_each` rows
   * that names the table twice): its columns and its scope are the alias's.
   * @example
   * const f = Families.alias("f");
   * sql`... FROM json_each(${json}) j ${f.joinOn(ctx, sql`${f.table.familyNumber} = j.value->>0`)}`
   */
  alias(name: string): Data<T, C> {
    // One accessor per name: an alias is a value, and its columns keep their rendered text
    // (src/db/query.ts) only while they are the same objects.
    let aliased = this.aliases.get(name);
    if (!aliased) {
      // What drizzle's `alias()` builds, kept as this table's type (its columns, under `name`).
      const renamed = new Proxy(this.table, new KeptAliasHandler<T>(name));
      aliased = new Data<T, C>(
        renamed,
        { entity: this.entity, tenancy: this.tenancy, secret: this.audit.secret },
        sql`${sql.identifier(getTableName(this.table))} ${sql.identifier(name)}`,
      );
      this.aliases.set(name, aliased);
    }
    return aliased;
  }

  private readonly aliases = new Map<string, Data<T, C>>();

  /** The table as a FROM item of hand-written SQL (an alias with its table's name: `"family" "f"`). */
  get from(): SQL {
    return this.fromItem ?? sql`${this.table}`;
  }

  /** The columns of a unique index that starts with the school: an upsert's conflict target. */
  schoolKey(...columns: SQLiteColumn[]): SQLiteColumn[] {
    if (!this.schoolColumn) throw new Error(`${getTableName(this.table)}: no school_id column`);
    return [this.schoolColumn, ...columns];
  }

  /** The same table recorded in the audit trail under another entity (a role membership as `school-administrator`). */
  as(entity: string): Data<T, C> {
    return new Data<T, C>(this.table, { entity, tenancy: this.tenancy, secret: this.audit.secret });
  }
}

/** A table without record columns (a join table) as a query source: no tenant condition of its own. */
export function joinTable(table: SQLiteTable): Source {
  return { table, scope: () => undefined };
}

/** The accessor of a table (see the file's comment). */
export function dataTable<T extends RecordTable, const S extends DataSpec<T>>(
  table: T,
  spec: S,
): Data<T, CtxFor<T, S>> {
  return new Data(table, spec);
}
