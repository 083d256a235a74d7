/** The people block of seed/demo.sql is what scripts/demo-people.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blockOf, demoPeopleSql } from "../../scripts/demo-people";

describe("demo people", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-people.ts)", () => {
    const seed = readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");
    expect(blockOf(seed)).toBe(demoPeopleSql());
    expect(demoPeopleSql()).toBe(demoPeopleSql());
  });

  it("uses no number the fixed demo users or the tests use (+1555600SNNN only)", () => {
    const phones = demoPeopleSql().match(/'\+1\d{10}'/g) ?? [];
    expect(phones.length).toBe(64);
    expect(phones.every((p) => /^'\+1555600[12]\d{3}'$/.test(p))).toBe(true);
    expect(new Set(phones).size).toBe(phones.length);
  });
});
