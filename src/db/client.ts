/**
 * Opens the store chosen by configuration: the D1 binding by default, or libSQL when `LIBSQL_URL`
 * is set. Both are SQLite, run the same schema and the same migrations, and support `batch()`.
 * The libSQL client lives in src/db/libsql.ts, which only the libSQL entry imports: the default
 * Worker bundle carries no libSQL client (docs/performance.md).
 */
import { type DrizzleD1Database, drizzle as drizzleD1 } from "drizzle-orm/d1";

/**
 * The database handle every service takes. Typed as drizzle's D1 database; a libSQL database has
 * the same query builder and `batch()` (test/libsql.test.ts runs the services on one). Code that
 * needs affected rows uses `.returning()`, which both drivers answer the same way.
 */
export type Db = DrizzleD1Database<Record<string, never>>;

const d1Cache = new WeakMap<D1Database, Db>();

export function d1(binding: D1Database): Db {
  let db = d1Cache.get(binding);
  if (!db) {
    db = drizzleD1(binding);
    d1Cache.set(binding, db);
  }
  return db;
}

/** Opens a libSQL database (src/db/libsql.ts); only the libSQL entry, src/index.libsql.ts, bundles one. */
export type OpenLibsql = (url: string, authToken?: string) => Db | Promise<Db>;
