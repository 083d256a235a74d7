/**
 * drizzle-kit's view of the schema after the last migration: `npm run db:generate` writes a new
 * migration as the difference between the schema and the last snapshot in `migrations/meta/`, so a
 * migration written by hand (a trigger, a data change, a table whose SQL drizzle-kit cannot write)
 * must leave a snapshot behind or the next generated migration repeats it.
 *
 *   npm run -s db:snapshot                 exit 1 and say what db:generate would write, if anything
 *   npm run -s db:snapshot -- --write      make the last migration's snapshot the schema as it is
 *
 * It runs drizzle-kit generate on a copy of migrations/ (nothing here changes without --write).
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const MIGRATIONS = join(ROOT, "migrations");

/** What `db:generate` would write now: the SQL of a new migration and its snapshot, or undefined. */
export function pendingSchemaChange(): { sql: string; snapshot: string } | undefined {
  // Inside the repository (drizzle-kit takes --out relative to it), in a folder git ignores.
  mkdirSync(join(ROOT, ".vitest"), { recursive: true });
  const copy = mkdtempSync(join(ROOT, ".vitest", "db-snapshot-"));
  try {
    cpSync(MIGRATIONS, copy, { recursive: true });
    const before = new Set(readdirSync(copy));
    execFileSync(
      join(ROOT, "node_modules/.bin/drizzle-kit"),
      [
        "generate",
        "--dialect",
        "sqlite",
        "--schema",
        "./src/db/schema/*.ts",
        "--out",
        relative(ROOT, copy),
        "--name",
        "pending",
      ],
      { cwd: ROOT, stdio: "pipe" },
    );
    const written = readdirSync(copy).find((f) => !before.has(f) && f.endsWith(".sql"));
    if (!written) return undefined;
    const snapshot =
      readdirSync(join(copy, "meta"))
        .filter((f) => f.endsWith("_snapshot.json"))
        .sort()
        .at(-1) ?? "";
    return {
      sql: readFileSync(join(copy, written), "utf8"),
      snapshot: readFileSync(join(copy, "meta", snapshot), "utf8"),
    };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const pending = pendingSchemaChange();
  if (!pending) console.log("The last snapshot is the schema: db:generate has nothing to add.");
  else if (!process.argv.includes("--write")) {
    console.log(`db:generate would write this again (a migration without its snapshot):\n\n${pending.sql}`);
    console.log("If the migrations already make it: npm run -s db:snapshot -- --write");
    process.exitCode = 1;
  } else {
    const last =
      readdirSync(MIGRATIONS)
        .filter((f) => f.endsWith(".sql"))
        .sort()
        .at(-1) ?? "";
    const target = join(MIGRATIONS, "meta", `${last.slice(0, 4)}_snapshot.json`);
    const snapshot = JSON.parse(pending.snapshot);
    // Replacing the last migration's own snapshot: it keeps its place in the chain.
    if (existsSync(target)) snapshot.prevId = JSON.parse(readFileSync(target, "utf8")).prevId;
    writeFileSync(target, `${JSON.stringify(snapshot, null, 2)}\n`);
    console.log(`${target}: the schema as it is`);
  }
}
