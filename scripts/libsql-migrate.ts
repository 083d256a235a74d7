/**
 * Applies migrations/ to every libSQL database of the deployment: the platform's (`LIBSQL_URL`)
 * and each shard's (`LIBSQL_SHARD_<n>_URL`: docs/scaling.md "libSQL shards"), each a local file, a
 * `sqld` server or a hosted one (Turso); then each shard's record ids start in its own range
 * (src/db/shards.ts `idRangeStatements`; run again, it changes nothing).
 * Each migration file is one transaction with the row that records it in `d1_migrations`, the table
 * and rows `wrangler d1 migrations apply` keeps on D1, so a migration is applied once whatever
 * stops a run, running it again applies only what is missing, and `/api/health` reads the same
 * migration level on both stores.
 *
 *   LIBSQL_URL=libsql://school-api-you.turso.io LIBSQL_AUTH_TOKEN=... npm run db:migrate:libsql
 *   LIBSQL_URL=... LIBSQL_SHARD_1_URL=libsql://school-api-shard-1-you.turso.io ... npm run db:migrate:libsql
 *   npm run db:migrate:libsql -- --url file:school.db
 *
 * Prints what it applied; exits 1 naming the migration that failed (nothing of it is kept).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "@libsql/client";
import { type LibsqlDatabase, libsqlShards } from "../src/config";
import { idRangeStatements } from "../src/db/shards";
import { migrationStatements } from "../src/db/sql-script";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The table wrangler records D1's applied migrations in, created as wrangler creates it. */
export const MIGRATIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS d1_migrations (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

export interface MigrationRun {
  applied: string[];
  total: number;
  latest: string | undefined;
}

/** Applies the migrations of `directory` that `url`'s database lacks, in order; answers what it did. */
export async function migrate(
  url: string,
  authToken?: string,
  directory = path.join(ROOT, "migrations"),
  onApplied: (name: string) => void = () => {},
): Promise<MigrationRun> {
  const files = readdirSync(directory)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const client = createClient({ url, authToken });
  try {
    await client.execute(MIGRATIONS_TABLE_SQL);
    const done = new Set((await client.execute("SELECT name FROM d1_migrations")).rows.map((r) => String(r.name)));
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      const statements = migrationStatements(readFileSync(path.join(directory, name), "utf8"));
      try {
        // One transaction: the migration and its record, or neither.
        await client.batch(
          [...statements, { sql: "INSERT INTO d1_migrations (name) VALUES (?)", args: [name] }],
          "write",
        );
      } catch (err) {
        throw new Error(
          `migration ${name} failed, nothing of it applied: ${err instanceof Error ? err.message : err}`,
          {
            cause: err,
          },
        );
      }
      applied.push(name);
      onApplied(name);
    }
    return { applied, total: files.length, latest: files.at(-1) };
  } finally {
    client.close();
  }
}

/** Starts `binding`'s record ids in its range (a shard's; the platform's start at 1: nothing to do). */
export async function startIdRange(url: string, authToken: string | undefined, binding: string): Promise<void> {
  const statements = idRangeStatements(binding);
  if (statements.length === 0) return;
  const client = createClient({ url, authToken });
  try {
    await client.batch(statements, "write");
  } finally {
    client.close();
  }
}

/** What a run prints of one database. */
const summary = (run: MigrationRun) =>
  run.applied.length === 0
    ? `Migrations: none to apply; the database has all ${run.total} (last ${run.latest})`
    : `Migrations: ${run.applied.length} applied; the database has all ${run.total} (last ${run.latest})`;

/**
 * Every database `env` names (`LIBSQL_URL` as `DB`, then each `LIBSQL_SHARD_<n>_URL`), migrated in
 * turn, each shard's ids then started in its range; stops at the first that fails. Answers each
 * database's run; prints what it does (a line per database, named by binding when there are shards).
 */
export async function migrateAll(
  databases: readonly Pick<LibsqlDatabase, "binding" | "url" | "authToken">[],
  print: (line: string) => void = console.log,
  directory?: string,
): Promise<Record<string, MigrationRun>> {
  const runs: Record<string, MigrationRun> = {};
  const named = databases.length > 1;
  for (const { binding, url, authToken } of databases) {
    const run = await migrate(url, authToken || undefined, directory, (name) =>
      print(`  ${named ? `${binding}: ` : ""}applied ${name}`),
    );
    await startIdRange(url, authToken || undefined, binding);
    runs[binding] = run;
    print(named ? `${binding}: ${summary(run)}` : summary(run));
  }
  return runs;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { url: { type: "string" }, "auth-token": { type: "string" } },
  });
  const url = values.url ?? process.env.LIBSQL_URL;
  const authToken = values["auth-token"] ?? process.env.LIBSQL_AUTH_TOKEN;
  if (!url) {
    console.error("Set LIBSQL_URL (and LIBSQL_AUTH_TOKEN for a hosted database), or pass --url file:school.db");
    process.exit(2);
  }
  // With --url, that database alone (as the platform's); else the platform's and every shard's.
  const shards = values.url ? { databases: [], issues: [] } : libsqlShards(process.env);
  if (shards.issues.length > 0) {
    for (const issue of shards.issues) console.error(`${issue.setting}: ${issue.message}`);
    process.exit(2);
  }
  try {
    await migrateAll([{ binding: "DB", url, authToken }, ...shards.databases]);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
