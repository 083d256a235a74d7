/**
 * Migration 0034 makes family numbers (per school) and group names (per school year) unique
 * whatever their case or accents. A production database may already hold numbers that now
 * collide ("F-1" and "f-1"): the migration keeps the oldest as it is and appends its id to each
 * later one, writing an audit row per rename in the school's trail; nothing else changes.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrationStatements } from "../../src/db/sql-script";
import { fold } from "../../src/lib/fold";

const root = new URL("../../", import.meta.url).pathname;
const migrations = readdirSync(join(root, "migrations"))
  .filter((f) => f.endsWith(".sql"))
  .sort();
const UNIQUE_FOLDED = migrations.findIndex((f) => f.startsWith("0034_"));

let directory: string;
let client: Client;
const at = "2026-08-01T12:00:00.000Z";

async function apply(files: string[]) {
  for (const file of files) {
    await client.batch(migrationStatements(readFileSync(join(root, "migrations", file), "utf8")), "write");
  }
}

async function insert(sql: string, args: (string | number)[]) {
  return Number((await client.execute({ sql, args })).lastInsertRowid);
}
const family = (school: number, number: string) =>
  insert(
    "INSERT INTO family (school_id, family_number, name, name_search, created_at, updated_at) VALUES (?, ?, 'F', 'f', ?, ?)",
    [school, number, at, at],
  );
// Groups as the app wrote them since 0033 (with the name's search copy).
const group = (name: string, year: string) =>
  insert(
    "INSERT INTO school_group (school_id, name, name_search, level, school_year, created_at, updated_at) VALUES (1, ?, ?, 'elementary', ?, ?, ?)",
    [name, fold(name), year, at, at],
  );

const ids: Record<string, number> = {};

beforeAll(async () => {
  expect(UNIQUE_FOLDED).toBeGreaterThan(0);
  directory = mkdtempSync(join(tmpdir(), "unique-folded-"));
  client = createClient({ url: `file:${join(directory, "unique.db")}` });
  await apply(migrations.slice(0, UNIQUE_FOLDED));
  for (const id of [1, 2]) {
    await client.execute({
      sql: "INSERT INTO school (id, name, created_at, updated_at) VALUES (?, 'S', ?, ?)",
      args: [id, at, at],
    });
  }
  ids.F1 = await family(1, "F-1");
  ids.f1 = await family(1, "f-1");
  ids.fa3 = await family(1, "Fá-3");
  ids.FA3 = await family(1, "FA-3");
  ids.south = await family(2, "f-1");
  ids.other = await family(1, "F-2");
  ids.musica = await group("Música", "2026-2027");
  ids.MUSICA = await group("MUSICA", "2026-2027");
  ids.nextYear = await group("musica", "2027-2028");
  await apply(migrations.slice(UNIQUE_FOLDED));
});

afterAll(() => {
  client?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

const rows = async (sql: string) => (await client.execute(sql)).rows.map((r) => ({ ...r }));

describe("migration 0034 on numbers and names that already collide", () => {
  it("keeps the oldest, appends its id to each later one; another school and another year are untouched", async () => {
    expect(await rows("SELECT id, family_number, family_number_search FROM family ORDER BY id")).toEqual([
      { id: ids.F1, family_number: "F-1", family_number_search: "f-1" },
      { id: ids.f1, family_number: `f-1 (${ids.f1})`, family_number_search: `f-1 (${ids.f1})` },
      { id: ids.fa3, family_number: "Fá-3", family_number_search: "fa-3" },
      { id: ids.FA3, family_number: `FA-3 (${ids.FA3})`, family_number_search: `fa-3 (${ids.FA3})` },
      { id: ids.south, family_number: "f-1", family_number_search: "f-1" },
      { id: ids.other, family_number: "F-2", family_number_search: "f-2" },
    ]);
    expect(await rows("SELECT id, name, school_year FROM school_group ORDER BY id")).toEqual([
      { id: ids.musica, name: "Música", school_year: "2026-2027" },
      { id: ids.MUSICA, name: `MUSICA (${ids.MUSICA})`, school_year: "2026-2027" },
      { id: ids.nextYear, name: "musica", school_year: "2027-2028" },
    ]);
  });

  it("records each rename in its school's audit trail, as the migration's", async () => {
    const trail = await rows(
      "SELECT school_id, actor_type, actor_name, entity, record_id, action, changes FROM audit_log ORDER BY id",
    );
    expect(trail.map((r) => ({ ...r, changes: JSON.parse(String(r.changes)) }))).toEqual([
      ...[
        [ids.f1, "f-1"],
        [ids.FA3, "FA-3"],
      ].map(([id, number]) => ({
        school_id: 1,
        actor_type: "job",
        actor_name: "migration-0034",
        entity: "family",
        record_id: id,
        action: "update",
        changes: { familyNumber: { old: number, new: `${number} (${id})` } },
      })),
      {
        school_id: 1,
        actor_type: "job",
        actor_name: "migration-0034",
        entity: "group",
        record_id: ids.MUSICA,
        action: "update",
        changes: { name: { old: "MUSICA", new: `MUSICA (${ids.MUSICA})` } },
      },
    ]);
  });

  it("then refuses a number or a name that differs only in case or accents", async () => {
    await expect(
      client.execute({
        sql: "INSERT INTO family (school_id, family_number, family_number_search, name, created_at, updated_at) VALUES (1, 'FÁ-9', 'fa-9', 'F', ?, ?)",
        args: [at, at],
      }),
    ).resolves.toBeDefined();
    await expect(
      client.execute({
        sql: "INSERT INTO family (school_id, family_number, family_number_search, name, created_at, updated_at) VALUES (1, 'fa-9', 'fa-9', 'F', ?, ?)",
        args: [at, at],
      }),
    ).rejects.toThrow(/UNIQUE constraint failed/);
  });
});
