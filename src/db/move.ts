/**
 * Moving a school between databases (docs/scaling.md "Moving a school"): the school's writes are
 * paused (503 with Retry-After, its reads still served), every row of the school is copied from the
 * database that holds it to the target with its ids, with the anchors its rows point at, the copy
 * is verified (rows per table), the shard map switched, the source's rows deleted, and the school
 * unpaused. A failure before the switch deletes the target's partial copy and unpauses: the source
 * is as it was. Run again, a move finishes or redoes what the last one left; a school already there
 * is nothing to do.
 *
 * The tables are found from the schema (every database has the same), not listed: a school's rows
 * are those of every table with a `school_id` (the shard map's own row aside: the platform's), and
 * those of a table without one whose foreign key names such a table (`role_permission`, through its
 * role); the **anchors** are the rows of the platform tables their foreign keys name (`school`,
 * `user`, `device_token`, `application_module`, `permission`), copied from the platform database
 * with `ON CONFLICT(id) DO UPDATE` (custom permissions, id >= 1000, all of them). A move to the
 * platform database copies no anchors: there the platform rows are the originals.
 */
import type { Deps } from "../deps";
import { ApiError, conflict, notFound, unprocessable } from "../lib/errors";
import { errorFields, log } from "../lib/log";
import { m } from "../lib/message";
import { type Db, storeOf } from "./client";
import { databases, forgetSchool, ID_SPAN, MAP_TTL_MS, PLATFORM, shardNumber } from "./shards";
import { sql } from "./sql";

/** How long a move's pause holds unless renewed (a lease: a move that dies lets it lapse). */
export const PAUSE_LEASE_MS = 15 * 60_000;
/** Rows read per statement from the source. */
const PAGE_ROWS = 500;
/** A batch of inserts is sent once it holds this many statements or this many bytes of rows. */
const BATCH_STATEMENTS = 20;
const BATCH_BYTES = 1_000_000;
/** Rows of one insert statement: its JSON parameter stays under D1's 2 MB per value. */
const STATEMENT_BYTES = 500_000;

/** What a move did. */
export interface MoveReport {
  schoolId: number;
  /** Where the school was. */
  source: string;
  /** Where it is. */
  target: string;
  /** False: the school was on `to` already (nothing copied). */
  moved: boolean;
  /** The school's rows copied, per table (tables without rows left out). */
  rows: Record<string, number>;
  /** Anchor rows written to the target, per platform table. */
  anchors: Record<string, number>;
}

/** A table of a school's rows, and how its rows are found. */
interface SchoolTable {
  name: string;
  columns: string[];
  /** `school_id = S`, or the foreign key to a school's table (`role_id IN (SELECT id FROM role WHERE school_id = S)`). */
  where: string;
  /** Foreign keys to platform tables: the column and the table it names. */
  anchors: { column: string; table: string }[];
}

interface Schema {
  /** A school's tables, each after the tables its foreign keys name (parents first). */
  tables: SchoolTable[];
  /** The triggers on each table: suspended while the move writes its rows (below). */
  triggers: Map<string, { name: string; sql: string }[]>;
  /** Platform tables: their columns and the platform tables their own foreign keys name (anchors of anchors). */
  platform: Map<string, { columns: string[]; references: { column: string; table: string }[] }>;
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** SQL text, verbatim (names from the schema, integers checked). */
const raw = (text: string) => sql.raw(text);

/** The tables of a school's rows and the platform tables they point at, from `db`'s schema. */
async function schemaOf(db: Db, schoolId: number): Promise<Schema> {
  const own = `m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND m.name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND m.name NOT IN ('d1_migrations', 'write_guard')`;
  const columns = await db.all<{ t: string; c: string }>(
    raw(`SELECT m.name AS t, c.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) c
      WHERE m.type = 'table' AND ${own} ORDER BY m.name, c.cid`),
  );
  const keys = await db.all<{ t: string; c: string; p: string; to: string | null }>(
    raw(`SELECT m.name AS t, f."from" AS c, f."table" AS p, f."to" AS "to" FROM sqlite_master m
      JOIN pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND ${own}`),
  );
  const triggerRows = await db.all<{ name: string; t: string; sql: string }>(
    raw(`SELECT name, tbl_name AS t, sql FROM sqlite_master WHERE type = 'trigger'`),
  );
  const triggers = new Map<string, { name: string; sql: string }[]>();
  for (const r of triggerRows) triggers.set(r.t, [...(triggers.get(r.t) ?? []), { name: r.name, sql: r.sql }]);
  const cols = new Map<string, string[]>();
  for (const r of columns) cols.set(r.t, [...(cols.get(r.t) ?? []), r.c]);
  const fks = new Map<string, { column: string; table: string; to: string }[]>();
  for (const r of keys) fks.set(r.t, [...(fks.get(r.t) ?? []), { column: r.c, table: r.p, to: r.to ?? "id" }]);

  // The shard map is the platform's (a row about the school, in DB alone).
  const direct = new Set([...cols].filter(([t, c]) => c.includes("school_id") && t !== "school_shard").map(([t]) => t));
  const where = new Map<string, string>([...direct].map((t) => [t, `school_id = ${schoolId}`]));
  for (const [t, refs] of fks) {
    if (direct.has(t) || t === "school_shard") continue;
    const parent = refs.find((r) => direct.has(r.table));
    if (parent) {
      where.set(
        t,
        `${q(parent.column)} IN (SELECT ${q(parent.to)} FROM ${q(parent.table)} WHERE school_id = ${schoolId})`,
      );
    }
  }
  const isPlatform = (t: string) => !where.has(t) && t !== "school_shard";

  // Parents first: a table after every school table its foreign keys name (no cycles: the schema has none).
  const order: string[] = [];
  const pending = new Set(where.keys());
  while (pending.size > 0) {
    const ready = [...pending].filter((t) => (fks.get(t) ?? []).every((r) => r.table === t || !pending.has(r.table)));
    if (ready.length === 0) throw new Error(`a cycle of foreign keys among ${[...pending].join(", ")}`);
    for (const t of ready.sort()) {
      order.push(t);
      pending.delete(t);
    }
  }
  const platform = new Map<string, { columns: string[]; references: { column: string; table: string }[] }>();
  for (const [t, c] of cols) {
    if (isPlatform(t)) platform.set(t, { columns: c, references: (fks.get(t) ?? []).filter((r) => r.table !== t) });
  }
  return {
    tables: order.map((name) => ({
      name,
      columns: cols.get(name) ?? [],
      where: where.get(name) ?? "0",
      anchors: (fks.get(name) ?? []).filter((r) => isPlatform(r.table)),
    })),
    platform,
    triggers,
  };
}

/**
 * `statements` on `db` as one batch, the triggers on `tables` suspended inside it: dropped before,
 * made again after, in the same transaction (no other writer ever sees them missing). A copy is
 * then the rows as they are: a trigger would add rows (a membership for a role), change them (the
 * board's version) or refuse them (the audit trail's rows are immutable: a move deletes the
 * source's).
 */
async function batchWithoutTriggers(db: Db, schema: Schema, tables: Iterable<string>, statements: Pending[]) {
  const suspended = [...new Set(tables)].flatMap((t) => schema.triggers.get(t) ?? []);
  const all: Pending[] = [
    ...suspended.map((t) => ({ text: `DROP TRIGGER IF EXISTS ${q(t.name)}` })),
    ...statements,
    ...suspended.map((t) => ({ text: t.sql })),
  ];
  if (all.length === 0) return;
  // The D1 binding's own batch (drizzle's cannot batch hand-written SQL with parameters): the
  // handle's, so it runs in the unit of work's session and counts its round trip.
  const client = (db as unknown as { $client: D1Database }).$client; // the handle drizzle wraps (its type hides it)
  await client.batch(all.map((s) => client.prepare(s.text).bind(...(s.json === undefined ? [] : [s.json]))));
}

/** Reads as one batch (one round trip, a statement per table rather than one compound SELECT): each one's rows. */
async function readAll<Row>(db: Db, texts: string[]): Promise<Row[][]> {
  const [first, ...rest] = texts.map((text) => db.all<Row>(raw(text)));
  if (!first) return [];
  const [rows, ...others] = await db.batch([first, ...rest]);
  return [rows, ...others];
}

/** The school's rows per table in `db` (one round trip). */
async function countsOf(db: Db, tables: SchoolTable[]): Promise<Record<string, number>> {
  const results = await readAll<{ n: number }>(
    db,
    tables.map((t) => `SELECT count(*) AS n FROM ${q(t.name)} WHERE ${t.where}`),
  );
  const counts: Record<string, number> = {};
  tables.forEach((t, i) => {
    const n = results[i]?.[0]?.n ?? 0;
    if (n > 0) counts[t.name] = n;
  });
  return counts;
}

/** Deletes the school's rows from `db`, children first, in one batch (nothing else: anchors stay). */
async function deleteRows(db: Db, schema: Schema) {
  const tables = [...schema.tables].reverse();
  const statements = tables.map((t) => ({ text: `DELETE FROM ${q(t.name)} WHERE ${t.where}` }));
  await batchWithoutTriggers(
    db,
    schema,
    tables.map((t) => t.name),
    statements,
  );
}

/** `INSERT INTO t (cols) SELECT ... FROM json_each(?)`: rows as one parameter; an anchor updates the copy it meets. */
function insertRows(table: string, columns: string[], rows: unknown[][], upsert: boolean): Pending {
  const list = columns.map(q).join(", ");
  const values = columns.map((_, i) => `j.value ->> ${i}`).join(", ");
  const onConflict = upsert
    ? ` ON CONFLICT(id) DO UPDATE SET ${columns
        .filter((c) => c !== "id")
        .map((c) => `${q(c)} = excluded.${q(c)}`)
        .join(", ")}`
    : "";
  // `WHERE true`: SQLite's upsert after an INSERT ... SELECT needs it to parse the ON CONFLICT.
  return {
    text: `INSERT INTO ${q(table)} (${list}) SELECT ${values} FROM json_each(?) j WHERE true${onConflict}`,
    json: JSON.stringify(rows),
  };
}

/** A statement of hand-written SQL and its one parameter, the rows as JSON (`json_each(?)`). */
interface Pending {
  text: string;
  json?: string;
}

/** Sends statements to `db` in batches (each one transaction, in order), triggers suspended for a school's rows. */
class Sender {
  private statements: Pending[] = [];
  private tables = new Set<string>();
  private bytes = 0;
  /** Whether the rows sent are the school's (triggers suspended) or anchors (triggers on: a name change shows on boards). */
  rows = false;
  constructor(
    private readonly db: Db,
    private readonly schema: Schema,
    private readonly beforeEach: () => Promise<void>,
  ) {}
  async add(statement: Pending, bytes: number, table: string) {
    this.statements.push(statement);
    this.tables.add(table);
    this.bytes += bytes;
    if (this.statements.length >= BATCH_STATEMENTS || this.bytes >= BATCH_BYTES) await this.flush();
  }
  async flush() {
    const statements = this.statements;
    const tables = this.rows ? [...this.tables] : [];
    this.statements = [];
    this.tables = new Set();
    this.bytes = 0;
    if (statements.length === 0) return;
    await this.beforeEach();
    await batchWithoutTriggers(this.db, this.schema, tables, statements);
  }
}

/** Rows as arrays of `columns`' values, split into inserts of at most STATEMENT_BYTES. */
async function sendRows(
  sender: Sender,
  table: string,
  columns: string[],
  rows: Record<string, unknown>[],
  upsert: boolean,
) {
  let chunk: unknown[][] = [];
  let size = 0;
  for (const row of rows) {
    const values = columns.map((c) => row[c] ?? null);
    const bytes = JSON.stringify(values).length;
    if (chunk.length > 0 && size + bytes > STATEMENT_BYTES) {
      await sender.add(insertRows(table, columns, chunk, upsert), size, table);
      chunk = [];
      size = 0;
    }
    chunk.push(values);
    size += bytes;
  }
  if (chunk.length > 0) await sender.add(insertRows(table, columns, chunk, upsert), size, table);
}

/** The anchors the school's rows in `source` point at, copied from the platform database to the sender's. */
async function copyAnchors(
  source: Db,
  platformDb: Db,
  schema: Schema,
  schoolId: number,
  sender: Sender,
): Promise<Record<string, number>> {
  const ids = new Map<string, Set<number>>([["school", new Set([schoolId])]]);
  const add = (table: string, values: Iterable<number>) => {
    const set = ids.get(table) ?? new Set<number>();
    for (const v of values) set.add(v);
    ids.set(table, set);
  };
  // The ids each platform table is named by: one read per foreign key, in one round trip.
  const named = schema.tables.flatMap((t) =>
    t.anchors.map((a) => ({
      table: a.table,
      text: `SELECT DISTINCT ${q(a.column)} AS id FROM ${q(t.name)} WHERE ${t.where} AND ${q(a.column)} IS NOT NULL`,
    })),
  );
  const found = await readAll<{ id: number }>(
    source,
    named.map((n) => n.text),
  );
  named.forEach((n, i) => {
    add(
      n.table,
      (found[i] ?? []).map((r) => r.id),
    );
  });
  // Custom permissions are on every shard (docs/scaling.md "Anchors").
  add(
    "permission",
    (await platformDb.all<{ id: number }>(raw("SELECT id FROM permission WHERE id >= 1000"))).map((r) => r.id),
  );

  // Children first to find the anchors' own anchors (a device token's user), then written parents first.
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (t: string) => {
    if (seen.has(t)) return;
    seen.add(t);
    for (const r of schema.platform.get(t)?.references ?? []) visit(r.table);
    order.push(t);
  };
  for (const t of ids.keys()) visit(t);
  const fetched = new Map<string, Record<string, unknown>[]>();
  for (const t of [...order].reverse()) {
    const wanted = [...(ids.get(t) ?? [])];
    if (wanted.length === 0) continue;
    const rows = await platformDb.all<Record<string, unknown>>(
      sql`${raw(`SELECT * FROM ${q(t)} WHERE id IN (SELECT value FROM json_each(`)}${JSON.stringify(wanted)}${raw(")) ORDER BY id")}`,
    );
    fetched.set(t, rows);
    for (const r of schema.platform.get(t)?.references ?? []) {
      add(
        r.table,
        rows.map((row) => row[r.column]).filter((v): v is number => typeof v === "number"),
      );
    }
  }
  const counts: Record<string, number> = {};
  for (const t of order) {
    const rows = fetched.get(t) ?? [];
    if (rows.length === 0) continue;
    await sendRows(sender, t, schema.platform.get(t)?.columns ?? [], rows, true);
    counts[t] = rows.length;
  }
  await sender.flush();
  return counts;
}

/** Copies the school's rows from `source` to the sender's database, parents first, page by page. */
async function copyRows(source: Db, tables: SchoolTable[], sender: Sender) {
  sender.rows = true;
  for (const t of tables) {
    for (let after = 0; ; ) {
      const page = await source.all<Record<string, unknown> & { __rowid: number }>(
        raw(
          `SELECT rowid AS "__rowid", * FROM ${q(t.name)} WHERE ${t.where} AND rowid > ${after} ORDER BY rowid LIMIT ${PAGE_ROWS}`,
        ),
      );
      if (page.length > 0) await sendRows(sender, t.name, t.columns, page, false);
      const last = page.at(-1);
      if (!last || page.length < PAGE_ROWS) break;
      after = last.__rowid;
    }
  }
  await sender.flush();
}

/** The map row of a school, as the move reads it. */
interface MapRow {
  binding: string;
  paused_until: string | null;
  moving_from: string | null;
  moving_to: string | null;
}

/**
 * Moves school `schoolId` to the database bound as `to` (docs/scaling.md "Moving a school"). It
 * waits out the isolates' copies of the map by the deps' clock (`Clock.wait`; real time without one).
 */
export async function moveSchool(deps: Deps, schoolId: number, to: string): Promise<MoveReport> {
  const all = new Map(databases(deps));
  const platformDb = deps.platform ?? deps.db;
  const target = all.get(to);
  if (!target) throw unprocessable(m`There is no database bound as ${to} (${[...all.keys()].join(", ")})`);
  const wait = (ms: number) => (deps.clock.wait ? deps.clock.wait(ms) : new Promise<void>((r) => setTimeout(r, ms)));
  const now = () => deps.clock.now();
  const iso = (ms: number) => new Date(now().getTime() + ms).toISOString();

  const [school] = await platformDb.all<{ id: number }>(sql`SELECT id FROM school WHERE id = ${schoolId}`);
  if (!school) throw notFound(m`School ${schoolId} not found`);
  const [row] = await platformDb.all<MapRow>(
    sql`SELECT binding, paused_until, moving_from, moving_to FROM school_shard WHERE school_id = ${schoolId}`,
  );
  const current = row?.binding ?? PLATFORM;
  const underWay =
    row?.moving_to != null && row.paused_until !== null && Date.parse(row.paused_until) > now().getTime();
  if (underWay && row.moving_to !== to) {
    throw conflict(m`School ${schoolId} is being moved to ${row.moving_to}; wait until that move ends`);
  }
  const report: MoveReport = { schoolId, source: current, target: to, moved: false, rows: {}, anchors: {} };

  if (current === to) {
    // Switched by a move that did not end: its source's rows are still to delete, then the pause lifted.
    const from = row?.moving_to === to ? row.moving_from : null;
    const source = from ? all.get(from) : undefined;
    if (from && source && from !== to) {
      const schema = await schemaOf(source, schoolId);
      await wait(MAP_TTL_MS);
      await deleteRows(source, schema);
      if (from !== PLATFORM) await source.run(sql`DELETE FROM school WHERE id = ${schoolId}`);
      report.source = from;
    }
    await unpause(platformDb, schoolId, to);
    return report;
  }
  const source = all.get(current);
  if (!source) throw unprocessable(m`School ${schoolId} is on ${current}, a database this Worker has no binding for`);
  // The copy's batches of hand-written SQL go through the D1 binding (`batchWithoutTriggers`).
  if (storeOf(source) !== "d1" || storeOf(target) !== "d1") {
    throw unprocessable(m`Moving a school is for D1 databases; this deployment's are libSQL`);
  }
  const schema = await schemaOf(source, schoolId);

  // Ids stay: a database numbers its new rows after the largest id a table holds (SQLite's
  // AUTOINCREMENT), so rows with ids above the target's range would move its numbering into
  // another shard's range. Refused before anything is paused.
  const ceiling = (shardNumber(to) + 1) * ID_SPAN;
  const withIds = schema.tables.filter((t) => t.columns.includes("id"));
  const tops = await readAll<{ id: number | null }>(
    source,
    withIds.map((t) => `SELECT max(id) AS id FROM ${q(t.name)} WHERE ${t.where}`),
  );
  if (tops.some(([top]) => top?.id != null && top.id >= ceiling)) {
    throw unprocessable(
      m`School ${schoolId} has records numbered above ${to}'s range (made on ${current}); it can move to a database of a higher number only`,
    );
  }

  // 1. Pause: the school's writes answer 503 once each isolate's copy of the map is renewed.
  let leaseEnds = now().getTime() + PAUSE_LEASE_MS;
  await platformDb.run(sql`INSERT INTO school_shard (school_id, binding, paused_until, moving_from, moving_to, created_at, updated_at)
    VALUES (${schoolId}, ${current}, ${iso(PAUSE_LEASE_MS)}, ${current}, ${to}, ${iso(0)}, ${iso(0)})
    ON CONFLICT(school_id) DO UPDATE SET paused_until = excluded.paused_until, moving_from = excluded.moving_from,
      moving_to = excluded.moving_to, updated_at = excluded.updated_at`);
  forgetSchool(schoolId);
  const renew = async () => {
    if (leaseEnds - now().getTime() > PAUSE_LEASE_MS / 2) return;
    leaseEnds = now().getTime() + PAUSE_LEASE_MS;
    await platformDb.run(
      sql`UPDATE school_shard SET paused_until = ${iso(PAUSE_LEASE_MS)} WHERE school_id = ${schoolId} AND moving_to = ${to}`,
    );
  };
  // 2. Every isolate has seen the pause: nothing writes the school's rows any more.
  await wait(MAP_TTL_MS);

  try {
    // 3. Copy: what a failed run left in the target first deleted (re-running is safe), then the
    // anchors, then the school's rows, parents first, each with its id.
    await deleteRows(target, schema);
    const sender = new Sender(target, schema, renew);
    if (to !== PLATFORM) report.anchors = await copyAnchors(source, platformDb, schema, schoolId, sender);
    await copyRows(source, schema.tables, sender);
    // 4. Verify: the same rows per table on both sides.
    const [there, here] = await Promise.all([countsOf(source, schema.tables), countsOf(target, schema.tables)]);
    const differ = Object.keys({ ...there, ...here }).filter((t) => there[t] !== here[t]);
    if (differ.length > 0) throw new Error(`the copy differs from the source in ${differ.join(", ")}`);
    report.rows = there;
    // 5. Switch the map, the pause renewed; only while this move's pause holds (a lapsed lease: writes may have resumed).
    const switched = await platformDb.all<{ school_id: number }>(sql`UPDATE school_shard
      SET binding = ${to}, paused_until = ${iso(PAUSE_LEASE_MS)}, updated_at = ${iso(0)}
      WHERE school_id = ${schoolId} AND binding = ${current} AND moving_to = ${to} AND paused_until > ${iso(0)}
      RETURNING school_id`);
    if (switched.length === 0) throw new Error("the pause lapsed or another move took over before the switch");
  } catch (err) {
    log.error("school move failed: the target's copy deleted, the school unpaused", {
      schoolId,
      from: current,
      to,
      ...errorFields(err),
    });
    await deleteRows(target, schema);
    if (to !== PLATFORM) await target.run(sql`DELETE FROM school WHERE id = ${schoolId}`);
    await unpause(platformDb, schoolId, current);
    throw new ApiError(
      500,
      m`The move of school ${schoolId} to ${to} failed; it stays on ${current}, unchanged, and is no longer paused`,
    );
  }
  forgetSchool(schoolId);
  // 6. Every isolate reads the school where it now is; then the source's rows go (the school's anchor too).
  await wait(MAP_TTL_MS);
  await deleteRows(source, schema);
  if (current !== PLATFORM) await source.run(sql`DELETE FROM school WHERE id = ${schoolId}`);
  await unpause(platformDb, schoolId, to);
  report.moved = true;
  return report;
}

/** Lifts the pause of a school on `binding` (the move's state cleared). */
async function unpause(platformDb: Db, schoolId: number, binding: string) {
  await platformDb.run(sql`UPDATE school_shard SET paused_until = NULL, moving_from = NULL, moving_to = NULL
    WHERE school_id = ${schoolId} AND binding = ${binding}`);
  forgetSchool(schoolId);
}

/** A school's map row as an operator reads it: where it is, and the move under way. */
export async function shardState(deps: Deps, schoolId: number) {
  const platformDb = deps.platform ?? deps.db;
  const [school] = await platformDb.all<{ id: number }>(sql`SELECT id FROM school WHERE id = ${schoolId}`);
  if (!school) throw notFound(m`School ${schoolId} not found`);
  const [row] = await platformDb.all<MapRow>(
    sql`SELECT binding, paused_until, moving_from, moving_to FROM school_shard WHERE school_id = ${schoolId}`,
  );
  const paused = row?.paused_until != null && Date.parse(row.paused_until) > deps.clock.now().getTime();
  return {
    schoolId,
    binding: row?.binding ?? PLATFORM,
    pausedUntil: paused ? (row?.paused_until ?? null) : null,
    movingTo: paused ? (row?.moving_to ?? null) : null,
  };
}
