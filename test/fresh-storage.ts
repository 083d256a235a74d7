/**
 * Fresh storage for a test file (test/setup.ts), or for a test that wants the demo seeded again
 * (test/demo-today.test.ts seeds it for several days): in every database (the platform's `DB`
 * and the shard `DB_SHARD_1`, docs/scaling.md "Shards") the state the real migrations leave (`emptied`);
 * then `seed` loaded into them (`loadSeed`); the documents bucket emptied. This
 * isolate's copy of the shard map is then what the map says.
 */
import { applyD1Migrations, env } from "cloudflare:test";
import { forgetAnchoredActors } from "../src/db/anchors";
import { seedByDatabase } from "../src/db/seed-split";
import { forgetShards, idRangeStatements, PLATFORM, remember } from "../src/db/shards";

/** The databases and bucket as a new deployment has them, whatever the file before this one left. */
export async function freshStorage(seed: string) {
  await Promise.all([emptied(env.DB, "DB"), emptied(env.DB_SHARD_1, "DB_SHARD_1")]);
  await loadSeed(seed);
  forgetShards();
  forgetAnchoredActors();
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

/**
 * What a database is right after its migrations: its schema's text, each table in the order its rows
 * can be deleted (a table before the tables it refers to), and the rows the migrations insert (the
 * built-in permissions, roles and modules), by table.
 */
interface Migrated {
  schema: string;
  tables: string[];
  rows: Map<string, Record<string, unknown>[]>;
  /** The triggers' names and text: dropped while the rows are replaced (audit rows refuse a DELETE), then made again. */
  triggers: { name: string; sql: string }[];
  /** `sqlite_sequence`: each table's last id. */
  sequence: { name: string; seq: number }[];
}

/** Per database, what this workerd process found right after migrating it (the files it runs share it). */
const migrated = new Map<string, Migrated>();

const OWN = `name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`;
const SCHEMA = `SELECT coalesce(group_concat(type || ' ' || name || ' ' || coalesce(sql, ''), char(10)), '') AS schema
  FROM (SELECT type, name, sql FROM sqlite_master WHERE ${OWN} ORDER BY type, name)`;

/**
 * A database as its migrations leave it (a shard's ids in its range). When its schema is still the
 * one this process migrated (nothing a test file did changed it), its triggers are dropped, its rows
 * deleted, the migrations' own rows written again as they were and the triggers made again, in one
 * batch; otherwise (the first file, or a file that
 * changed the schema) every table is dropped and the migrations applied, ~4 times the work.
 */
async function emptied(db: D1Database, binding: string) {
  const known = migrated.get(binding);
  const schema = await db.prepare(SCHEMA).first<string>("schema");
  if (known && schema === known.schema) {
    await db.batch([
      ...known.triggers.map((t) => db.prepare(`DROP TRIGGER "${t.name}"`)),
      ...known.tables.map((t) => db.prepare(`DELETE FROM "${t}"`)),
      // Parents before children: the reverse of the order rows are deleted in.
      ...[...known.rows].reverse().map(([table, rows]) => {
        const columns = Object.keys(rows[0] ?? {});
        const names = columns.map((c) => `"${c}"`).join(", ");
        const values = columns.map((c) => `value ->> '$."${c}"'`).join(", ");
        return db
          .prepare(`INSERT INTO "${table}" (${names}) SELECT ${values} FROM json_each(?)`)
          .bind(JSON.stringify(rows));
      }),
      // The next ids as the migrations left them (a shard's in its range).
      db.prepare("DELETE FROM sqlite_sequence"),
      db
        .prepare(
          `INSERT INTO sqlite_sequence (name, seq) SELECT value ->> '$.name', value ->> '$.seq' FROM json_each(?)`,
        )
        .bind(JSON.stringify(known.sequence)),
      ...known.triggers.map((t) => db.prepare(t.sql)),
    ]);
    return;
  }
  await droppedAndMigrated(db, binding);
  const tables = await deletionOrder(db);
  const read = await db.batch<Record<string, unknown>>(tables.map((t) => db.prepare(`SELECT * FROM "${t}"`)));
  const [triggers, sequence] = await Promise.all([
    db
      .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND ${OWN} ORDER BY name`)
      .all<{ name: string; sql: string }>(),
    db.prepare("SELECT name, seq FROM sqlite_sequence").all<{ name: string; seq: number }>(),
  ]);
  migrated.set(binding, {
    sequence: sequence.results,
    schema: (await db.prepare(SCHEMA).first<string>("schema")) ?? "",
    triggers: triggers.results,
    // `d1_migrations` too: a test removes a row of it to see health warn of a database behind.
    tables,
    rows: new Map(
      tables.flatMap((t, i) => {
        const rows = read[i]?.results ?? [];
        return rows.length > 0 ? [[t, rows] as const] : [];
      }),
    ),
  });
}

/** The database's tables, each before every table it refers to (so deleting in this order breaks no key). */
async function deletionOrder(db: D1Database): Promise<string[]> {
  const references = await db
    .prepare(
      `SELECT m.name, f."table" AS parent
       FROM sqlite_master m LEFT JOIN pragma_foreign_key_list(m.name) f
       WHERE m.type = 'table' AND ${OWN.replaceAll("name", "m.name")}`,
    )
    .all<{ name: string; parent: string | null }>();
  const parents = new Map<string, Set<string>>();
  for (const r of references.results) {
    const set = parents.get(r.name) ?? new Set<string>();
    if (r.parent !== null && r.parent !== r.name) set.add(r.parent);
    parents.set(r.name, set);
  }
  const ordered: string[] = [];
  const done = new Set<string>();
  while (done.size < parents.size) {
    const leaves = [...parents.keys()].filter(
      (t) => !done.has(t) && ![...parents].some(([c, ps]) => !done.has(c) && c !== t && ps.has(t)),
    );
    if (leaves.length === 0) throw new Error("a cycle of foreign keys among the tables");
    for (const t of leaves) {
      ordered.push(t);
      done.add(t);
    }
  }
  return ordered;
}

/** A database with every table dropped and the migrations applied (a shard's ids in its range). */
async function droppedAndMigrated(db: D1Database, binding: string) {
  const objects = await db
    .prepare(`SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') AND ${OWN}`)
    .all<{ type: string; name: string }>();
  const drops = [
    ...objects.results.map((o) => `DROP ${o.type.toUpperCase()} "${o.name}"`),
    ...(await deletionOrder(db)).map((t) => `DROP TABLE "${t}"`),
  ];
  if (drops.length > 0) await db.batch(drops.map((d) => db.prepare(d)));
  await applyD1Migrations(db, env.TEST_MIGRATIONS);
  const range = idRangeStatements(binding);
  if (range.length > 0) await db.batch(range.map((s) => db.prepare(s)));
}
