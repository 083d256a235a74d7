/**
 * The local state `wrangler dev --persist-to` reads in the Chromium tests (test/node/dev-server.ts):
 * local D1 with every migration applied and the demo seeded, as `npm run dev` sets it up.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getPlatformProxy } from "wrangler";
import { ROOT } from "../../bench/bundle";
import { seedByDatabase } from "../../src/db/seed-split";
import { idRangeStatements } from "../../src/db/shards";
import { migrationStatements } from "../../src/db/sql-script";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** The tests that start `wrangler dev` drive it from Chromium: without it they are skipped. */
export const hasChromium = existsSync(CHROMIUM);

/** Migrates and seeds a fresh local D1 in `state` (a `--persist-to` directory). */
export async function migrateAndSeed(state: string) {
  const proxy = await getPlatformProxy<{ DB: D1Database; DB_SHARD_1: D1Database }>({
    configPath: join(ROOT, "wrangler.toml"),
    environment: "dev",
    persist: { path: join(state, "v3") },
  });
  try {
    const dir = join(ROOT, "migrations");
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    // Every database, as `npm run dev` migrates them (scripts/migrate.ts): the platform's and the
    // shard, its ids started in its own range (docs/scaling.md "Shards").
    for (const binding of ["DB", "DB_SHARD_1"] as const) {
      const db = proxy.env[binding];
      for (const file of files) {
        await db.batch(migrationStatements(readFileSync(join(dir, file), "utf8")).map((s) => db.prepare(s)));
      }
      const range = idRangeStatements(binding);
      if (range.length > 0) await db.batch(range.map((s) => db.prepare(s)));
    }
    // The demo into its databases, as `npm run dev` loads it (src/db/seed-split.ts).
    for (const [binding, statements] of seedByDatabase(readFileSync(join(ROOT, "seed/demo.sql"), "utf8"))) {
      const db = proxy.env[binding as "DB" | "DB_SHARD_1"];
      if (!db) throw new Error(`the seed puts rows in ${binding}, a database the dev environment does not bind`);
      await db.batch(statements.map((s) => db.prepare(s)));
    }
  } finally {
    await proxy.dispose();
  }
}

/**
 * A fresh state directory of its own: a copy of `template` (made once by migrateAndSeed, in the
 * build project's global setup) where there is one, else migrated and seeded here.
 */
export async function freshState(template?: string) {
  const state = mkdtempSync(join(tmpdir(), "dev-server-"));
  if (template) cpSync(template, state, { recursive: true });
  else await migrateAndSeed(state);
  return state;
}
