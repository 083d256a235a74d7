/**
 * Opens the store chosen by configuration: the D1 binding by default, or libSQL when `LIBSQL_URL`
 * is set. Both are SQLite, run the same schema and the same migrations, and support `batch()`.
 * The libSQL client lives in src/db/libsql.ts, which only the libSQL entry imports: the default
 * Worker bundle carries no libSQL client (docs/performance.md). Both meet a database hiccup the
 * same way (src/db/transient.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type DrizzleD1Database, drizzle as drizzleD1 } from "drizzle-orm/d1";
import { countD1Call } from "../lib/metrics";
import { again, readsOnly } from "./transient";

/**
 * The database handle every service takes. Typed as drizzle's D1 database; a libSQL database has
 * the same query builder and `batch()` (test/node/libsql.test.ts runs the services on one). Code
 * that needs affected rows uses `.returning()`, which both drivers answer the same way.
 */
export type Db = DrizzleD1Database<Record<string, never>>;

const d1Cache = new WeakMap<D1Database, Db>();
/** The binding behind each D1 handle `d1` made (a libSQL handle has none: it has no sessions). */
const bindingOf = new WeakMap<Db, D1Database>();

export function d1(binding: D1Database): Db {
  let db = d1Cache.get(binding);
  if (!db) {
    db = drizzleD1(counted(binding));
    d1Cache.set(binding, db);
    bindingOf.set(db, binding);
  }
  return db;
}

/** What a handle is: a D1 binding's (made by `d1`), else libSQL's. */
export const storeOf = (db: Db): "d1" | "libsql" => (bindingOf.has(db) ? "d1" : "libsql");

/**
 * Where a D1 session starts (D1's read replication, the Sessions API): the primary (what writes,
 * and reads right after them), any replica (a read), or at least the state a bookmark names.
 */
export type SessionStart = "first-primary" | "first-unconstrained" | (string & {});
/** A D1 bookmark, as D1 writes them: `00000000-00000041-00000000-` and 32 hex digits. */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
/** A bookmark a client sent (`x-d1-bookmark`), if it has a bookmark's shape (else D1 would refuse the query). */
export const bookmarkOf = (text: string | undefined | null): string | undefined =>
  text && BOOKMARK.test(text) ? text : undefined;

/** One unit of work's D1 sessions: every query of its handles inside `run` goes through them. */
export interface DbSession {
  run<T>(work: () => T): T;
  /** The latest state the session has seen (after its queries), or null before it has seen one. */
  bookmark(): string | null;
}

/**
 * A unit of work (a request, a cron run, a queue batch) and its sessions, one per database it
 * touches (the platform's and a school's: docs/scaling.md "Sessions and bookmarks"), each opened
 * at that database's first statement. Its **home** is the database whose bookmark it answers and
 * whose session a bookmark sent starts from: the school's database once the data layer reached it
 * (`claimHome`), else the one the unit was opened on (the platform's). A bookmark names a state of
 * one database: any other database's session starts at the primary instead.
 */
interface Unit {
  start: SessionStart;
  /** The database the unit was opened on (the platform's). */
  origin: D1Database;
  /** Whether the origin is the home until a school's database claims it (no school named). */
  originIsHome: boolean;
  home: D1Database | undefined;
  sessions: Map<D1Database, D1DatabaseSession>;
}

const sessions = new AsyncLocalStorage<Unit>();

/**
 * Opens a D1 session of `db` starting at `start`; undefined for a store without sessions (libSQL).
 * Opening costs no round trip: the first query carries the constraint. A unit of work that is
 * already in a session keeps it (a module's app served through the main app's). `school`: the unit
 * names a school (`X-School-Id`), whose database is then its home once the data layer reaches it.
 */
export function openSession(db: Db, start: SessionStart, school = false): DbSession | undefined {
  const binding = bindingOf.get(db);
  if (!binding) return undefined;
  const current = sessions.getStore();
  if (current) return { run: (work) => work(), bookmark: () => bookmarkOfUnit(current) };
  const unit: Unit = { start, origin: binding, originIsHome: !school, home: undefined, sessions: new Map() };
  return { run: (work) => sessions.run(unit, work), bookmark: () => bookmarkOfUnit(unit) };
}

function bookmarkOfUnit(unit: Unit): string | null {
  const home = unit.home ?? unit.origin;
  const session = unit.sessions.get(home) ?? unit.sessions.get(unit.origin);
  // Before its first statement a session stands where it starts: at the bookmark sent, if one was.
  return session?.getBookmark() ?? bookmarkOf(unit.start) ?? null;
}

/**
 * The data layer reached a school's database (src/db/shards.ts): the current unit's home, unless
 * it has one. A handle without sessions (libSQL) claims nothing.
 */
export function claimHome(db: Db): void {
  const unit = sessions.getStore();
  const binding = bindingOf.get(db);
  if (unit && binding && unit.home === undefined) unit.home = binding;
}

/** Runs `work` in a session of `db` starting at `start` (jobs and queue consumers: `first-primary`). */
export function inSession<T>(db: Db, start: SessionStart, work: () => T): T {
  const session = openSession(db, start);
  return session ? session.run(work) : work();
}

/** Where `binding`'s statements run now: the current unit's session of it (opened here at its first), else the binding. */
function targetOf(binding: D1Database): D1Database | D1DatabaseSession {
  const unit = sessions.getStore();
  if (!unit) return binding;
  let session = unit.sessions.get(binding);
  if (!session) {
    const home = unit.home ?? (unit.originIsHome ? unit.origin : undefined);
    const start = binding === home || !bookmarkOf(unit.start) ? unit.start : "first-primary";
    session = binding.withSession(start);
    unit.sessions.set(binding, session);
  }
  return session;
}

/**
 * A prepared statement that counts each execution as one D1 round trip of the current request,
 * and meets a hiccup (src/db/transient.ts) by running once more when that is safe: a read always,
 * a write when the database refused it before running it. The happy path costs a try/catch.
 * It is prepared on the database when it runs, not when it is built: a statement runs where the
 * handle that runs it (or the batch it is in) points, whichever handle built it.
 */
class CountedStatement {
  constructor(
    readonly binding: D1Database,
    readonly query: string,
    readonly values: readonly unknown[] = [],
  ) {}
  bind(...values: unknown[]) {
    return new CountedStatement(this.binding, this.query, values);
  }
  /** The statement on `target` (default: where its own handle's statements run now). */
  on(target: D1Database | D1DatabaseSession = targetOf(this.binding)): D1PreparedStatement {
    const prepared = target.prepare(this.query);
    return this.values.length > 0 ? prepared.bind(...this.values) : prepared;
  }
  async first(column?: string) {
    countD1Call();
    const real = this.on();
    try {
      return await (column === undefined ? real.first() : real.first(column));
    } catch (err) {
      const run = () => (column === undefined ? real.first() : real.first(column));
      return again(err, readsOnly(this.query), counting(run));
    }
  }
  async all() {
    countD1Call();
    const real = this.on();
    try {
      return await real.all();
    } catch (err) {
      return again(
        err,
        readsOnly(this.query),
        counting(() => real.all()),
      );
    }
  }
  async run() {
    countD1Call();
    const real = this.on();
    try {
      return await real.run();
    } catch (err) {
      return again(
        err,
        readsOnly(this.query),
        counting(() => real.run()),
      );
    }
  }
  async raw(options?: { columnNames?: boolean }) {
    countD1Call();
    const real = this.on();
    try {
      return await (options?.columnNames ? real.raw({ columnNames: true }) : real.raw());
    } catch (err) {
      const run = () => (options?.columnNames ? real.raw({ columnNames: true }) : real.raw());
      return again(err, readsOnly(this.query), counting(run));
    }
  }
}

/** `run`, counted as one more round trip when it runs. */
const counting =
  <T>(run: () => Promise<T>) =>
  () => {
    countD1Call();
    return run();
  };

/**
 * The binding with round trips counted (a batch is one round trip, as it is on D1) and hiccups met
 * as a statement meets them. A batch is one transaction: refused, it wrote nothing; it reads only
 * when every statement does.
 */
function counted(binding: D1Database): D1Database {
  const wrapper = {
    prepare: (query: string) => new CountedStatement(binding, query),
    batch: async (statements: (CountedStatement | D1PreparedStatement)[]) => {
      countD1Call();
      const target = targetOf(binding);
      // Each statement on this database, whichever handle built it.
      const real = statements.map((s) => (s instanceof CountedStatement ? s.on(target) : s));
      try {
        return await target.batch(real);
      } catch (err) {
        const read = statements.every((s) => s instanceof CountedStatement && readsOnly(s.query));
        return again(
          err,
          read,
          counting(() => target.batch(real)),
        );
      }
    },
    exec: async (query: string) => {
      countD1Call();
      try {
        return await binding.exec(query);
      } catch (err) {
        // Several statements, each its own transaction: some may have run, so never again.
        return again(err, false, undefined);
      }
    },
    dump: () => binding.dump(),
    withSession: (constraint?: string) => binding.withSession(constraint),
  };
  // Drizzle calls only prepare/bind/first/all/run/raw/batch; the wrapper has the same shape.
  return wrapper as unknown as D1Database;
}

/** Opens a libSQL database (src/db/libsql.ts); only the libSQL entry, src/index.libsql.ts, bundles one. */
export type OpenLibsql = (
  url: string,
  authToken?: string,
  settings?: { url: string; token: string },
) => Db | Promise<Db>;
