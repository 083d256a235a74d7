/** The events block of seed/demo.sql is what scripts/demo-events.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEMO_ARTICLES, DEMO_EVENTS, demoEventsSql, eventsBlockOf } from "../../scripts/demo-events";

const seed = () => readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");

describe("demo events and lost articles", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-events.ts)", () => {
    expect(eventsBlockOf(seed())).toBe(demoEventsSql());
    expect(demoEventsSql()).toBe(demoEventsSql());
  });

  it("has an event with reminders, a past one, a cancelled one, and articles in every state", () => {
    expect(DEMO_EVENTS.some((e) => (e.reminders?.length ?? 0) > 1)).toBe(true);
    expect(DEMO_EVENTS.some((e) => e.end < "2026-11-23")).toBe(true);
    expect(DEMO_EVENTS.some((e) => e.cancelled)).toBe(true);
    expect(new Set(DEMO_ARTICLES.map((a) => a.status))).toEqual(new Set(["found", "claimed", "delivered", "donated"]));
  });

  it("is idempotent by construction: only INSERT OR IGNORE, no clock", () => {
    const statements = demoEventsSql()
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim());
    for (const s of statements) expect(s).toMatch(/^INSERT OR IGNORE INTO /);
    expect(demoEventsSql()).not.toMatch(/datetime\('now'\)|CURRENT_TIMESTAMP/);
  });
});
