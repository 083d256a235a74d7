// Runs before each test file, whose storage is its own: the real migrations, then the demo seed.
// After the file, every search copy must be the fold of its column (test/search-copies.ts).
import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, expect } from "vitest";
import { compareWithDrizzle } from "../src/db/render";
import { scriptStatements } from "../src/db/sql-script";
import { staleSearchCopies } from "./search-copies";

// Every statement the data layer renders itself is checked against drizzle's rendering.
compareWithDrizzle.enabled = true;
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await env.DB.batch(scriptStatements(env.TEST_SEED).map((s) => env.DB.prepare(s)));

afterAll(async () => {
  expect(await staleSearchCopies(), "search copies that are not the fold of their column").toEqual([]);
});
