/**
 * Fresh storage for a test file (test/setup.ts), or for a test that wants the demo seeded again
 * (test/demo-today.test.ts seeds it for several days): in every database (the platform's `DB`
 * and the shard `DB_SHARD_1`, docs/scaling.md "Shards") every table dropped and the real
 * migrations applied; then `seed` loaded into them (`loadSeed`); the documents bucket emptied. This
 * isolate's copy of the shard map is then what the map says.
 */
import { applyD1Migrations, env } from "cloudflare:test";
import { seedByDatabase } from "../src/db/seed-split";
import { forgetShards, idRangeStatements, PLATFORM, remember } from "../src/db/shards";

/** The databases and bucket as a new deployment has them, whatever the file before this one left. */
export async function freshStorage(seed: string) {
  await Promise.all([emptied(env.DB, "DB"), emptied(env.DB_SHARD_1, "DB_SHARD_1")]);
  await loadSeed(seed);
  forgetShards();
  const map = await env.DB.prepare(
    `SELECT s.id, coalesce(m.binding, '${PLATFORM}') AS binding FROM school s LEFT JOIN school_shard m ON m.school_id = s.id`,
  ).all<{ id: number; binding: string }>();
  for (const row of map.results) remember(row.id, row.binding);
  for (let cursor: string | undefined, more = true; more; ) {
    const page = await env.DOCUMENTS.list(cursor ? { cursor } : {});
    if (page.objects.length > 0) await env.DOCUMENTS.delete(page.objects.map((o) => o.key));
    more = page.truncated;
    cursor = page.truncated ? page.cursor : undefined;
  }
}

/**
 * The demo seed (seed/demo.sql, its dates moved or not) into the databases its shard map names:
 * platform rows into `DB`, each school's rows and the anchors they need into the school's database
 * (src/db/seed-split.ts). Each database's statements in one batch, the databases at once.
 */
export async function loadSeed(seed: string) {
  const databases: Record<string, D1Database> = { DB: env.DB, DB_SHARD_1: env.DB_SHARD_1 };
  await Promise.all(
    [...seedByDatabase(seed)].map(([binding, statements]) => {
      const db = databases[binding];
      if (!db) throw new Error(`the seed puts rows in ${binding}, a database the tests do not have`);
      return db.batch(statements.map((s) => db.prepare(s)));
    }),
  );
}

/** A database with every table dropped and the migrations applied (a shard's ids in its range). */
async function emptied(db: D1Database, binding: string) {
  const own = `name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`;
  const [objects, references] = await db.batch<{ type: string; name: string; parent: string | null }>([
    db.prepare(`SELECT type, name, NULL AS parent FROM sqlite_master WHERE type IN ('view', 'trigger') AND ${own}`),
    db.prepare(
      `SELECT 'table' AS type, m.name, f."table" AS parent
       FROM sqlite_master m LEFT JOIN pragma_foreign_key_list(m.name) f
       WHERE m.type = 'table' AND ${own}`,
    ),
  ]);
  const drops = (objects?.results ?? []).map((o) => `DROP ${o.type.toUpperCase()} "${o.name}"`);
  // Tables after every table that refers to them: a table's implicit DELETE checks its children.
  const parents = new Map<string, Set<string>>();
  for (const r of references?.results ?? []) {
    const set = parents.get(r.name) ?? new Set<string>();
    if (r.parent !== null && r.parent !== r.name) set.add(r.parent);
    parents.set(r.name, set);
  }
  const dropped = new Set<string>();
  while (dropped.size < parents.size) {
    const leaves = [...parents.keys()].filter(
      (t) => !dropped.has(t) && ![...parents].some(([c, ps]) => !dropped.has(c) && c !== t && ps.has(t)),
    );
    if (leaves.length === 0) throw new Error("a cycle of foreign keys among the tables");
    for (const t of leaves) {
      drops.push(`DROP TABLE "${t}"`);
      dropped.add(t);
    }
  }
  if (drops.length > 0) await db.batch(drops.map((d) => db.prepare(d)));
  await applyD1Migrations(db, env.TEST_MIGRATIONS);
  const range = idRangeStatements(binding);
  if (range.length > 0) await db.batch(range.map((s) => db.prepare(s)));
}
