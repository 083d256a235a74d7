/**
 * Opens the store chosen by configuration: the D1 binding by default, or libSQL when `LIBSQL_URL`
 * is set. Both are SQLite, run the same schema and the same migrations, and support `batch()`.
 * The libSQL client lives in src/db/libsql.ts, which only the libSQL entry imports: the default
 * Worker bundle carries no libSQL client (docs/performance.md).
 */
import { type DrizzleD1Database, drizzle as drizzleD1 } from "drizzle-orm/d1";
import { countD1Call } from "../lib/metrics";

/**
 * The database handle every service takes. Typed as drizzle's D1 database; a libSQL database has
 * the same query builder and `batch()` (test/node/libsql.test.ts runs the services on one). Code
 * that needs affected rows uses `.returning()`, which both drivers answer the same way.
 */
export type Db = DrizzleD1Database<Record<string, never>>;

const d1Cache = new WeakMap<D1Database, Db>();

export function d1(binding: D1Database): Db {
  let db = d1Cache.get(binding);
  if (!db) {
    db = drizzleD1(counted(binding));
    d1Cache.set(binding, db);
  }
  return db;
}

/** A prepared statement that counts each execution as one D1 round trip of the current request. */
class CountedStatement {
  constructor(readonly real: D1PreparedStatement) {}
  bind(...values: unknown[]) {
    return new CountedStatement(this.real.bind(...values));
  }
  first(column?: string) {
    countD1Call();
    return column === undefined ? this.real.first() : this.real.first(column);
  }
  all() {
    countD1Call();
    return this.real.all();
  }
  run() {
    countD1Call();
    return this.real.run();
  }
  raw(options?: { columnNames?: boolean }) {
    countD1Call();
    return options?.columnNames ? this.real.raw({ columnNames: true }) : this.real.raw();
  }
}

/** The binding with round trips counted (a batch is one round trip, as it is on D1). */
function counted(binding: D1Database): D1Database {
  const wrapper = {
    prepare: (query: string) => new CountedStatement(binding.prepare(query)),
    batch: (statements: (CountedStatement | D1PreparedStatement)[]) => {
      countD1Call();
      return binding.batch(statements.map((s) => (s instanceof CountedStatement ? s.real : s)));
    },
    exec: (query: string) => {
      countD1Call();
      return binding.exec(query);
    },
    dump: () => binding.dump(),
    withSession: (constraint?: string) => binding.withSession(constraint),
  };
  // Drizzle calls only prepare/bind/first/all/run/raw/batch; the wrapper has the same shape.
  return wrapper as unknown as D1Database;
}

/** Opens a libSQL database (src/db/libsql.ts); only the libSQL entry, src/index.libsql.ts, bundles one. */
export type OpenLibsql = (url: string, authToken?: string) => Db | Promise<Db>;
