// Runs before each test file, whose storage is its own: the real migrations, then the demo seed.
import { applyD1Migrations, env } from "cloudflare:test";
import { scriptStatements } from "../src/db/sql-script";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await env.DB.batch(scriptStatements(env.TEST_SEED).map((s) => env.DB.prepare(s)));
