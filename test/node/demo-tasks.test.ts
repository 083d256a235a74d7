/** The tasks block of seed/demo.sql is what scripts/demo-tasks.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { demoAfternoonSql } from "../../scripts/demo-afternoon";
import { BOOKED, demoBookings, demoSlots, demoTasksSql, MEETING_DAYS, tasksBlockOf } from "../../scripts/demo-tasks";

const seed = () => readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");

describe("demo tasks", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-tasks.ts)", () => {
    expect(tasksBlockOf(seed())).toBe(demoTasksSql());
    expect(demoTasksSql()).toBe(demoTasksSql());
  });

  it("comes after the school and afternoon blocks, whose students and guardians it names", () => {
    const text = seed();
    expect(text.indexOf(demoTasksSql())).toBeGreaterThan(text.indexOf(demoAfternoonSql()));
  });

  it("has the session's slots as the API generates them, over two days, and six distinct slots booked", () => {
    const slots = demoSlots();
    expect(new Set(slots.map((s) => s.date))).toEqual(new Set(MEETING_DAYS));
    // Mexico City (UTC-6): 16:00 is 22:00Z; 15-minute slots with 5 minutes between.
    expect(slots[0]).toMatchObject({
      date: "2026-11-30",
      start: "16:00",
      end: "16:15",
      startsAt: "2026-11-30T22:00:00.000Z",
    });
    expect(slots.filter((s) => s.date === "2026-11-30")).toHaveLength(9);
    const bookings = demoBookings();
    expect(bookings.map((b) => b.student)).toEqual([...BOOKED]);
    expect(new Set(bookings.map((b) => b.slot.id)).size).toBe(bookings.length);
  });

  it("is idempotent by construction: only INSERT OR IGNORE, no clock", () => {
    const statements = demoTasksSql()
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim());
    for (const s of statements) expect(s).toMatch(/^INSERT OR IGNORE INTO /);
    expect(demoTasksSql()).not.toMatch(/datetime\('now'\)|CURRENT_TIMESTAMP/);
  });
});
