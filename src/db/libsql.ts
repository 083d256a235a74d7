/**
 * A libSQL database over HTTP (Turso or `sqld`); `file:` URLs need the Node client instead.
 * Imported only by src/index.libsql.ts, so the default (D1) Worker bundle does not carry the client.
 */
import {
  type Client,
  createClient,
  type InArgs,
  type InStatement,
  type ResultSet,
  type TransactionMode,
} from "@libsql/client/web";
import { drizzle } from "drizzle-orm/libsql/web";
import { ConfigError } from "../config";
import type { Db } from "./client";
import { again, readsOnly } from "./transient";

/**
 * `settings`: what a refusal names (the platform's `LIBSQL_URL` and `LIBSQL_AUTH_TOKEN` by default;
 * a shard's `LIBSQL_SHARD_<n>_URL`: docs/scaling.md "libSQL shards").
 */
export function libsql(url: string, authToken?: string, settings: LibsqlSettings = PLATFORM_SETTINGS): Db {
  return libsqlDb(createClient({ url, authToken }), settings);
}

/** The settings a libSQL database comes from: its URL's and its token's. */
export type LibsqlSettings = { url: string; token: string };
const PLATFORM_SETTINGS: LibsqlSettings = { url: "LIBSQL_URL", token: "LIBSQL_AUTH_TOKEN" };

/** The app's database on a libSQL client (any: HTTP, or Node's `file:` one in tests). */
export function libsqlDb(client: Client, settings: LibsqlSettings = PLATFORM_SETTINGS): Db {
  // Drizzle types its libSQL and D1 databases apart; the app uses only the builder and batch() both share.
  return drizzle(metHiccups(client, settings)) as unknown as Db;
}

type BatchStatement = InStatement | [string, InArgs?];

/**
 * A server at LIBSQL_URL that is not a libSQL server, or refuses this Worker's token: not a hiccup
 * (asking again fails the same way) but a setting to fix, so the Worker answers as for any setting it
 * cannot serve (503, a log line naming it: src/lib/errors.ts) rather than with a 500.
 */
function misconfigured(err: unknown, settings: LibsqlSettings): ConfigError | undefined {
  const message = err instanceof Error ? err.message : "";
  const status = /Server returned HTTP status (401|403|404|405)\b/.exec(message)?.[1];
  if (status === "401" || status === "403") {
    return new ConfigError(
      `invalid configuration: the libSQL server at ${settings.url} refuses the token (HTTP ${status}): check ${settings.token}`,
      [settings.token],
      { cause: err },
    );
  }
  if (status || (err instanceof SyntaxError && /JSON/.test(message))) {
    return new ConfigError(
      `invalid configuration: ${settings.url} answers ${status ? `HTTP ${status}` : "something else than the libSQL protocol"}: it is not a libSQL server's URL`,
      [settings.url],
      { cause: err },
    );
  }
  return undefined;
}
const sqlOf = (s: BatchStatement) => (typeof s === "string" ? s : Array.isArray(s) ? s[0] : s.sql);

/**
 * The client with database hiccups met as the D1 binding meets them (src/db/client.ts): a statement
 * or a batch (one transaction) runs once more when it only reads or the database refused it before
 * running it (src/db/transient.ts). Drizzle calls `execute` and `batch`; the rest is the client's.
 */
function metHiccups(client: Client, settings: LibsqlSettings): Client {
  function execute(stmt: InStatement): Promise<ResultSet>;
  function execute(sql: string, args?: InArgs): Promise<ResultSet>;
  async function execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const run = () => (typeof stmt === "string" ? client.execute(stmt, args) : client.execute(stmt));
    try {
      return await run();
    } catch (err) {
      const refused = misconfigured(err, settings);
      if (refused) throw refused;
      return again(err, readsOnly(sqlOf(stmt)), run);
    }
  }
  return {
    execute,
    batch: async (stmts: BatchStatement[], mode?: TransactionMode) => {
      try {
        return await client.batch(stmts, mode);
      } catch (err) {
        const refused = misconfigured(err, settings);
        if (refused) throw refused;
        return again(
          err,
          stmts.every((s) => readsOnly(sqlOf(s))),
          () => client.batch(stmts, mode),
        );
      }
    },
    migrate: (stmts) => client.migrate(stmts),
    transaction: (mode?: TransactionMode) => client.transaction(mode),
    executeMultiple: (sql) => client.executeMultiple(sql),
    sync: () => client.sync(),
    close: () => client.close(),
    reconnect: () => client.reconnect(),
    get closed() {
      return client.closed;
    },
    get protocol() {
      return client.protocol;
    },
  };
}
