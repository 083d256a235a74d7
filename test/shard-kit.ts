/**
 * What the tests of schools on the shard share (docs/scaling.md "Shards"): a new school put on
 * `DB_SHARD_1` as a move of a school with no rows puts it there, a platform row copied as its anchor
 * would be, and a school's rows counted table by table in a database.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { remember } from "../src/db/shards";
import { DEMO, makeTestApp, type TestApp } from "./helpers";

export const SHARD = "DB_SHARD_1";

/** A platform row copied to the shard as its anchor would be. */
export async function copyToShard(table: string, id: number) {
  const row = await env.DB.prepare(`SELECT * FROM "${table}" WHERE id = ?`).bind(id).first<Record<string, unknown>>();
  if (!row) throw new Error(`no ${table} ${id}`);
  const columns = Object.keys(row);
  await env.DB_SHARD_1.prepare(
    `INSERT OR REPLACE INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
  )
    .bind(...columns.map((c) => row[c]))
    .run();
}

/**
 * A new school (through the API), then put on shard 1 as a move of a school with no rows does it:
 * the map row switched and the school's anchor row in its database (`anchor: false` leaves it out).
 */
export async function schoolOnShard1(t: TestApp, name = "Shard One School", anchor = true): Promise<number> {
  // Placed on DB (the platform's alone open to it), then moved: the move's own steps, anchor included or not.
  const placing = makeTestApp({ clock: t.clock, config: { ...t.deps.config, newSchoolsOn: ["DB"] } });
  const res = await placing.request("/api/v1/school", {
    method: "POST",
    token: await t.token(DEMO.superAdmin.id, {}, true),
    body: { name, timeZone: "America/Mexico_City", levels: ["elementary"] },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { id } = (await res.json()) as { id: number };
  if (anchor) await copyToShard("school", id);
  await env.DB.prepare("UPDATE school_shard SET binding = ? WHERE school_id = ?").bind(SHARD, id).run();
  remember(id, SHARD);
  return id;
}

/** Every table of `db` with a `school_id` column. */
async function schoolTables(db: D1Database): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
       WHERE m.type = 'table' AND c.name = 'school_id' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND m.name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`,
    )
    .all<{ name: string }>();
  return rows.results.map((r) => r.name);
}

/** How many rows of each table of `db` belong to `school` (tables with none left out; the map is the platform's). */
export async function rowsOf(db: D1Database, school: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await schoolTables(db)) {
    if (table === "school_shard") continue;
    const row = await db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE school_id = ?`).bind(school).first<{
      n: number;
    }>();
    if (row && row.n > 0) counts[table] = row.n;
  }
  return counts;
}
