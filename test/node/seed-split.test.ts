/**
 * The demo seed over the databases (src/db/seed-split.ts): each school's rows into the database its
 * shard map row names, with the anchors they need there; platform rows into DB.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scan } from "../../src/db/demo-today";
import { seedByDatabase, seedOnOneDatabase } from "../../src/db/seed-split";
import { scriptStatements } from "../../src/db/sql-script";

const seed = readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");
const MAP_ROW = /^ {2}\(2, '(DB|DB_SHARD_1)', /m;
/** The seed with demo school 2's map row naming `binding`. */
const withSchool2On = (binding: string) => seed.replace(MAP_ROW, `  (2, '${binding}', `);

/** Each row of `statements`: its table and the cell texts asked for. */
function rows(statements: string[], ...columns: string[]) {
  return statements.flatMap((text) =>
    scan(text).parts.map((part) => {
      const cells: Record<string, string | undefined> = {};
      for (const column of columns) {
        const k = part.columns.indexOf(column);
        cells[column] = k < 0 ? undefined : text.slice(part.bounds[2 * k], part.bounds[2 * k + 1]).trim();
      }
      return {
        table: part.table,
        text: text.slice(part.start, part.end),
        statementSchool: part.statementSchool,
        cells,
      };
    }),
  );
}

describe("the demo seed split by school", () => {
  it("has one map row for school 2: the flip is that line", () => {
    expect(seed.match(new RegExp(MAP_ROW.source, "gm"))).toHaveLength(1);
  });

  it("with every school on DB, is the whole script in DB", () => {
    const split = seedByDatabase(withSchool2On("DB"));
    expect([...split.keys()]).toEqual(["DB"]);
    expect(split.get("DB")).toEqual(scriptStatements(withSchool2On("DB")));
  });

  it("with school 2 on DB_SHARD_1: its rows there, its anchors in both, nothing else of it in DB", () => {
    const split = seedByDatabase(withSchool2On("DB_SHARD_1"));
    expect([...split.keys()]).toEqual(["DB", "DB_SHARD_1"]);
    const shard = rows(split.get("DB_SHARD_1") ?? [], "school_id", "id", "user_id");
    const platform = rows(split.get("DB") ?? [], "school_id", "id").filter((r) => r.table !== "sqlite_sequence");
    for (const row of shard) {
      if (row.table === "user") continue;
      if (row.table === "school") expect(row.cells.id ?? String(row.statementSchool), row.text).toBe("2");
      else expect(row.cells.school_id ?? String(row.statementSchool), row.text).toBe("2");
    }
    for (const row of platform) {
      if (row.table === "school" || row.table === "school_shard") continue;
      expect(row.cells.school_id ?? String(row.statementSchool ?? "none"), row.text).not.toBe("2");
    }
    // The anchors: school 2's row in both; each person school 2's memberships name, in both.
    const schools = (list: typeof shard) =>
      list.filter((r) => r.table === "school").map((r) => r.cells.id ?? String(r.statementSchool));
    expect(schools(shard)).toEqual(["2", "2"]);
    expect(schools(platform)).toEqual(["1", "2", "1", "2"]);
    const members = new Set(shard.filter((r) => r.table === "role_user").map((r) => r.cells.user_id));
    const anchors = new Set(shard.filter((r) => r.table === "user").map((r) => r.cells.id));
    expect(members.size).toBeGreaterThan(10);
    for (const id of members) expect(anchors.has(id), `user ${id}`).toBe(true);
    // Only the people school 2 names: school 1's demo parent (user 4) is not there.
    expect(anchors.has("4")).toBe(false);
    // The shard map is the platform's.
    expect(shard.some((r) => r.table === "school_shard")).toBe(false);
    // Each row once per database: the statements of both hold every row of the script.
    const all = rows(scriptStatements(seed), "id");
    expect(shard.length + platform.length).toBe(all.length + anchors.size + schools(shard).length);
  });

  it("keeps the ids the seed gives school 2's rows taken in DB: ids stay unique across databases", () => {
    const split = seedByDatabase(withSchool2On("DB_SHARD_1"));
    const sequences = (split.get("DB") ?? []).filter((s) => s.startsWith("UPDATE sqlite_sequence"));
    // School 2's address is 2, its students up to 2450 (seed/demo.sql).
    expect(sequences).toContain("UPDATE sqlite_sequence SET seq = 2 WHERE name = 'address' AND seq < 2");
    expect(sequences.some((s) => /seq = \d+ WHERE name = 'student' /.test(s))).toBe(true);
    expect(sequences.some((s) => /name = '(user|school)'/.test(s))).toBe(false);
  });

  it("refuses a statement it cannot place", () => {
    const bad = `${seed}\nUPDATE family SET name = 'x' WHERE school_id = 1 OR school_id = 2;\n`;
    expect(() => seedByDatabase(bad)).toThrow(/names 2 schools/);
  });

  it("for one database: the whole script but the shard map", () => {
    const one = seedOnOneDatabase(withSchool2On("DB_SHARD_1"));
    expect(one).toEqual(scriptStatements(seed).filter((s) => !s.includes("INTO school_shard")));
  });
});
