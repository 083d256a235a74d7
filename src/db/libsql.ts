/**
 * A libSQL database over HTTP (Turso or `sqld`); `file:` URLs need the Node client instead.
 * Imported only by src/index.libsql.ts, so the default (D1) Worker bundle does not carry the client.
 */
import { createClient } from "@libsql/client/web";
import { drizzle } from "drizzle-orm/libsql/web";
import type { Db } from "./client";

export function libsql(url: string, authToken?: string): Db {
  return drizzle(createClient({ url, authToken })) as unknown as Db;
}
