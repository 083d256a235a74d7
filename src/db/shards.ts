/**
 * Schools over several databases (docs/scaling.md "Shards"). The platform database (`DB`, also
 * shard 0) holds the shard map, `school_shard`: which database holds each school's rows. This is
 * the only code that reads it and picks a school's database; the data layer asks it for the
 * database of a context (`databaseOf`), every read and write of a school's rows goes there, and
 * the request's session follows (src/db/client.ts `claimHome`).
 *
 * The map is kept per isolate for `MAP_TTL_MS`: a school's row is read at the first statement of
 * that school's first request in an isolate, then known for that long, then read again. So a
 * pause or a switch of the map (a school moving to another database, src/db/move.ts) is seen by
 * every isolate within `MAP_TTL_MS`. A school with no row in the map is on `DB` (the schools made
 * before the map, the demo seed's). While a school is paused its writes answer 503 (`databaseOf`
 * with `write`); its reads are served from where the map says.
 */
import type { Ctx } from "../lib/context";
import { ApiError } from "../lib/errors";
import { m } from "../lib/message";
import { claimHome, type Db } from "./client";
import { sql } from "./sql";

/** The platform database's binding: shard 0. */
export const PLATFORM = "DB";

/**
 * The databases a new school may be placed on (src/db/placement.ts): those `NEW_SCHOOLS_ON` names
 * (checked against the bindings when the Worker starts, src/index.ts), or else every database.
 */
export function openForNewSchools(deps: Ctx["deps"]): string[] {
  const chosen = deps.config.newSchoolsOn;
  return chosen.length > 0 ? [...chosen] : databases(deps).map(([name]) => name);
}

/**
 * How long an isolate keeps what it read of a school's map row (milliseconds, by the deps' clock):
 * the longest an isolate can go on writing a school after its move paused it, or on reading it
 * where it was after the switch. A move waits this long after its pause and after its switch.
 */
export const MAP_TTL_MS = 10_000;

/** Schools whose database this isolate knows (then it starts again). */
const MAX_KNOWN = 20_000;

/** What this isolate read of a school's map row, and when (ms; unset: remembered, stamped at its first use). */
interface Known {
  binding: string;
  /** Writes answer 503 until then (ms). */
  pausedUntil: number | null;
  read?: number;
}
const known = new Map<number, Known>();

/** Every database of the deployment, by binding name (`DB` first); one when no shards are bound. */
export function databases(deps: Ctx["deps"]): [string, Db][] {
  // The platform's is always `deps.db` (a test's wrapper of it included).
  return Object.entries({ ...deps.shards, [PLATFORM]: deps.db });
}

/** The platform database's handle: `deps.db`, or `deps.platform` in a cron run over a shard. */
export const platformDb = (deps: Ctx["deps"]): Db => deps.platform ?? deps.db;

/** The handle of database `name` (`DB` the platform's). */
export function databaseNamed(deps: Ctx["deps"], name: string): Db {
  const db = name === PLATFORM ? platformDb(deps) : deps.shards?.[name];
  if (!db) throw new Error(`no binding ${name} in this Worker`);
  return db;
}

/**
 * The context of one read across schools per database, each over the schools that database
 * holds (the platform's first): its `deps.db` is that database, `deps.platform` the platform's,
 * and it names no school, so the data layer runs its statements there (`databaseOf`). A read of a
 * user's schools, or of every school, runs once on each, in parallel, and merges (docs/scaling.md
 * "Shards", group F); never one statement over two databases. One context when there are no shards.
 */
export function perDatabase<C extends Ctx>(ctx: C): C[] {
  const platform = platformDb(ctx.deps);
  if (!ctx.deps.shards) return [{ ...ctx, schoolId: null }];
  // `DB` first (a shard map's `DB` is the platform's handle, or a test's wrapper of it).
  const every: Record<string, Db> = { [PLATFORM]: platform, ...ctx.deps.shards };
  every[PLATFORM] = platform;
  return Object.values(every).map((db) => ({
    ...ctx,
    schoolId: null,
    // The request's If-Match guards its own batch on its own database, never a read elsewhere.
    unchanged: undefined,
    deps: { ...ctx.deps, db, platform },
  }));
}

/**
 * The context across schools on the database whose range holds record id `id` (each database's
 * ids are its own range, `ID_SPAN`): a record of any school found by its id alone, one read.
 */
export function onDatabaseOfId<C extends Ctx>(ctx: C, id: number): C {
  const n = Math.floor(id / ID_SPAN);
  const platform = platformDb(ctx.deps);
  const db = n === 0 ? platform : ctx.deps.shards?.[`DB_SHARD_${n}`];
  if (!db) return ctx;
  return { ...ctx, schoolId: null, unchanged: undefined, deps: { ...ctx.deps, db, platform } };
}

/** `perDatabase` but the platform's: the shards (none without shards). */
export function otherDatabases<C extends Ctx>(ctx: C): C[] {
  const platform = platformDb(ctx.deps);
  return perDatabase(ctx).filter((on) => on.deps.db !== platform);
}

/** The binding that holds `schoolId`'s rows, from this isolate's copy of the map or one read of it. */
export async function shardOf(deps: Ctx["deps"], schoolId: number): Promise<string> {
  return (await mapRowOf(deps, schoolId)).binding;
}

/** This isolate's copy of `schoolId`'s map row while it is fresh (`MAP_TTL_MS`), else one read of it. */
async function mapRowOf(deps: Ctx["deps"], schoolId: number): Promise<Known & { read: number }> {
  const now = deps.clock.now().getTime();
  const entry = known.get(schoolId);
  if (entry) {
    entry.read ??= now;
    // Fresh for MAP_TTL_MS after it was read (a clock set back, a test's, keeps it).
    if (now - entry.read < MAP_TTL_MS) return { ...entry, read: entry.read };
  }
  // Raw: the map's table is not imported here (src/db/placement.ts writes it), so the data layer
  // that imports this file imports no schema.
  const [row] = await (deps.platform ?? deps.db).all<{ binding: string; paused_until: string | null }>(
    sql`SELECT binding, paused_until FROM school_shard WHERE school_id = ${schoolId} LIMIT 1`,
  );
  const fresh = {
    binding: row?.binding ?? PLATFORM,
    pausedUntil: row?.paused_until ? Date.parse(row.paused_until) : null,
    read: now,
  };
  if (known.size >= MAX_KNOWN) known.clear();
  known.set(schoolId, fresh);
  return fresh;
}

/**
 * What this isolate knows of the map, now (after a placement or a move, and in tests after
 * seeding): `schoolId` is on `binding`, not paused; kept `MAP_TTL_MS` from its first use.
 */
export function remember(schoolId: number, binding: string): void {
  if (known.size >= MAX_KNOWN) known.clear();
  known.set(schoolId, { binding, pausedUntil: null });
}

/** Forgets what this isolate knew of `schoolId`'s map row (a move changed it): read again at its next statement. */
export function forgetSchool(schoolId: number): void {
  known.delete(schoolId);
}

/** Forgets what this isolate knew of the map (a test file's fresh storage). */
export function forgetShards(): void {
  known.clear();
}

/**
 * The database a context's statements run on: its school's when it is in a school and the table
 * is a school's (every table but the platform's, `tenancy: "none"`); a platform table's, the
 * platform's; across schools (no school in the context), the database the unit of work runs over
 * (`deps.db`: the platform's, or one shard's in a cron run over it). A deployment without shards
 * (libSQL with no `LIBSQL_SHARD_<n>_URL`) has one database. `write`: the statements write (a batch's
 * commit), refused with a 503 while the school is paused for a move.
 */
export async function databaseOf(ctx: Ctx, source?: { tenancy?: string }, write = false): Promise<Db> {
  const { deps } = ctx;
  if (!deps.shards) return deps.db;
  const platform = deps.platform ?? deps.db;
  if (source?.tenancy === "none") return platform;
  // Across schools: the database the unit of work runs over (a cron run's, once per database).
  if (ctx.schoolId === null) return deps.db;
  const row = await mapRowOf(deps, ctx.schoolId);
  if (write && row.pausedUntil !== null && deps.clock.now().getTime() < row.pausedUntil) throw paused(ctx.schoolId);
  const name = row.binding;
  const db = name === PLATFORM ? platform : deps.shards[name];
  if (!db) throw new Error(`school ${ctx.schoolId} is mapped to ${name}, a database this Worker has no binding for`);
  claimHome(db);
  return db;
}

/** Seconds a client is told to wait (`Retry-After`) when a school's write meets its move's pause. */
export const PAUSED_RETRY_SECONDS = Math.ceil(MAP_TTL_MS / 1000);

/** The answer to a write of a school paused for a move: 503, try again shortly; other schools go on. */
const paused = (schoolId: number) =>
  new ApiError(
    503,
    m`School ${schoolId} is moving to another database: its changes are paused for a moment; try again shortly`,
    {
      title: m`School paused for a move`,
      headers: { "retry-after": String(PAUSED_RETRY_SECONDS) },
    },
  );

/**
 * Each database's record ids are its own range: shard n's start above n × 2^40 (shard 0's at 1),
 * so a school's ids are unique across databases and it can move to another shard keeping them
 * (docs/scaling.md "Record ids"). Up to 8,191 shards stay below `Number.MAX_SAFE_INTEGER`.
 */
export const ID_SPAN = 2 ** 40;

/** The shard number of a binding: `DB` 0, `DB_SHARD_<n>` n. */
export function shardNumber(binding: string): number {
  if (binding === PLATFORM) return 0;
  const n = /^DB_SHARD_(\d+)$/.exec(binding)?.[1];
  if (n === undefined) throw new Error(`${binding} is not a database binding (DB or DB_SHARD_<n>)`);
  return Number(n);
}

/**
 * The statements that start shard `binding`'s ids in its range (after its migrations: every table
 * with AUTOINCREMENT, a new table of a later migration too; run again, they change nothing).
 */
export function idRangeStatements(binding: string): string[] {
  const floor = shardNumber(binding) * ID_SPAN;
  if (floor === 0) return [];
  return [
    `INSERT INTO sqlite_sequence (name, seq) SELECT m.name, ${floor} FROM sqlite_master m WHERE m.type = 'table' AND m.sql LIKE '%AUTOINCREMENT%' AND NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = m.name)`,
    `UPDATE sqlite_sequence SET seq = ${floor} WHERE seq < ${floor}`,
  ];
}
