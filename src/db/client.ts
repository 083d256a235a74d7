/**
 * Opens the store chosen by configuration: the D1 binding by default, or libSQL when `LIBSQL_URL`
 * is set. Both are SQLite, run the same schema and the same migrations, and support `batch()`.
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

/** A libSQL database over HTTP (Turso or `sqld`); `file:` URLs need the Node client instead. */
export async function libsql(url: string, authToken?: string): Promise<Db> {
  const [{ createClient }, { drizzle }] = await Promise.all([
    import("@libsql/client/web"),
    import("drizzle-orm/libsql/web"),
  ]);
  return drizzle(createClient({ url, authToken })) as unknown as Db;
}
