/** The school block of seed/demo.sql is what scripts/demo-school.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { demoPeopleSql } from "../../scripts/demo-people";
import { demoSchoolCounts, demoSchoolSql, schoolBlockOf } from "../../scripts/demo-school";

const seed = () => readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");

describe("demo school", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-school.ts)", () => {
    expect(schoolBlockOf(seed())).toBe(demoSchoolSql());
    expect(demoSchoolSql()).toBe(demoSchoolSql());
  });

  it("comes after the people block, whose teachers and parents it uses", () => {
    const text = seed();
    expect(text.indexOf(demoSchoolSql())).toBeGreaterThan(text.indexOf(demoPeopleSql()));
  });

  it("is the size of a real school: about 250 families and 400 students in Northside", () => {
    const counts = demoSchoolCounts();
    // Northside's 400 students: 399 new plus Pablo (student 1, already seeded).
    expect(counts[1]).toMatchObject({ families: 250, students: 399, groups: 24 });
    expect(counts[2]).toMatchObject({ families: 30, students: 50 });
  });

  it("uses only its reserved phones (+155561SNNNN parents, +155562SNNNN trusted people), each once", () => {
    const phones = demoSchoolSql().match(/'\+1\d{10}'/g) ?? [];
    expect(phones.every((p) => /^'\+15556[12][12]\d{4}'$/.test(p))).toBe(true);
    expect(new Set(phones).size).toBe(phones.length);
  });

  it("is idempotent by construction: only INSERT OR IGNORE and UPDATEs of rows still as seeded", () => {
    const statements = demoSchoolSql()
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim());
    for (const s of statements) {
      if (s.startsWith("UPDATE")) expect(s).toMatch(/updated_at = '2026-08-01T12:00:00\.000Z'$/);
      else expect(s).toMatch(/^INSERT OR IGNORE INTO /);
    }
    expect(demoSchoolSql()).not.toMatch(/Math\.random|datetime\('now'\)|CURRENT_TIMESTAMP/);
  });
});
