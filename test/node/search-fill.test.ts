/**
 * The migration that adds the search copies fills them for rows that already exist (a production
 * database has rows when it runs): on a libSQL database migrated to just before it, with rows
 * written as the old code wrote them (no copies), the migration's character-map fill must give
 * exactly what the app's `fold` gives.
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
const FIRST_WITH_COPIES = migrations.findIndex((f) => f.startsWith("0033_"));

let directory: string;
let client: Client;

async function apply(files: string[]) {
  for (const file of files) {
    await client.batch(migrationStatements(readFileSync(join(root, "migrations", file), "utf8")), "write");
  }
}

// Names as people type them: accents of every Latin language, letters NFKD keeps (ø ł đ ß æ),
// capitals, decomposed input, other scripts, a Korean name (kept whole) and an emoji (beyond the map).
const NAMES = [
  "JOÃO CONCEIÇÃO",
  "Zoë Müller",
  "Loïc Lefèvre",
  "Søren Ærø",
  "Łukasz Đorđević",
  "STRAßE Œuvre",
  "Jose\u0301 Nun\u0303ez",
  "İlkay Iğdır",
  "ΣΟΦΊΑ Παπαδοπούλου",
  "Йозеф Ёлкин",
  "김민준",
  "Ｆｕｌｌ ｗｉｄｔｈ",
  "O’Brien",
  "Ana 🙂 Ruiz",
  "",
];

beforeAll(async () => {
  expect(FIRST_WITH_COPIES).toBeGreaterThan(0);
  directory = mkdtempSync(join(tmpdir(), "search-fill-"));
  client = createClient({ url: `file:${join(directory, "fill.db")}` });
  await apply(migrations.slice(0, FIRST_WITH_COPIES));
  const at = "2026-08-01T12:00:00.000Z";
  await client.execute({
    sql: "INSERT INTO school (id, name, created_at, updated_at) VALUES (1, ?, ?, ?)",
    args: ["Colégio São João", at, at],
  });
  for (const [i, name] of NAMES.entries()) {
    const [first, ...rest] = name.split(" ");
    await client.execute({
      sql: "INSERT INTO user (phone, first_name, last_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      args: [`+1555000${String(i).padStart(4, "0")}`, first ?? "", rest.join(" "), at, at],
    });
    await client.execute({
      sql: "INSERT INTO student (school_id, first_name, last_name, created_at, updated_at) VALUES (1, ?, ?, ?, ?)",
      args: [first ?? "", rest.join(" "), at, at],
    });
    await client.execute({
      sql: "INSERT INTO family (school_id, family_number, name, created_at, updated_at) VALUES (1, ?, ?, ?, ?)",
      args: [`F-${i}`, name, at, at],
    });
  }
  await apply(migrations.slice(FIRST_WITH_COPIES));
});

afterAll(() => {
  client?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

const rows = async (query: string) => (await client.execute(query)).rows as unknown as Record<string, string>[];

describe("the search copies of rows that existed before the migration", () => {
  it("are the app's fold of each name, column by column", async () => {
    const users = await rows("SELECT first_name, last_name, first_name_search, last_name_search FROM user ORDER BY id");
    const students = await rows(
      "SELECT first_name, last_name, first_name_search, last_name_search FROM student ORDER BY id",
    );
    for (const row of [...users, ...students]) {
      expect(row.first_name_search, row.first_name).toBe(fold(row.first_name ?? ""));
      expect(row.last_name_search, row.last_name).toBe(fold(row.last_name ?? ""));
    }
    expect(users.map((u) => `${u.first_name_search} ${u.last_name_search}`)).toContain("joao conceicao");
    for (const family of await rows("SELECT name, name_search FROM family ORDER BY id")) {
      expect(family.name_search, family.name).toBe(fold(family.name ?? ""));
    }
    expect(await rows("SELECT name_search FROM school")).toEqual([{ name_search: "colegio sao joao" }]);
  });

  it("leaves no working table behind", async () => {
    expect(await rows("SELECT name FROM sqlite_master WHERE name = 'search_fold'")).toEqual([]);
  });
});
