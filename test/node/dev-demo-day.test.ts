/**
 * What `npm run dev` says of the demo's day (scripts/dev.ts, src/db/demo-today.ts): the day it seeded
 * for, and, when the local database holds another day's demo (the seed never overwrites a row), how
 * to move it to today; `npm run -s demo-day` prints the day the database holds.
 */
import { describe, expect, it } from "vitest";
import { demoDayLine, demoDayOfDatabase } from "../../scripts/dev";
import type { DemoDay } from "../../src/db/demo-today";

const day = (school: number, date: string): DemoDay => ({
  school,
  timeZone: school === 1 ? "America/Mexico_City" : "America/New_York",
  today: date,
  day: date,
  weeks: 2,
});
const monday = [day(1, "2026-12-07"), day(2, "2026-12-07")];

describe("npm run dev's demo day", () => {
  it("names the day, once when both schools share it, else each school's", () => {
    expect(demoDayLine(monday, monday)).toBe(
      "Demo day: Monday 2026-12-07 (this afternoon's asks are pending; next week has the meetings)",
    );
    const split = [day(1, "2026-12-11"), day(2, "2026-12-14")];
    expect(demoDayLine(split, split).split("\n")[0]).toBe(
      "Demo day: Friday 2026-12-11 in school 1, Monday 2026-12-14 in school 2 (this afternoon's asks are pending; next week has the meetings)",
    );
  });

  it("says when the local database keeps another day's demo, or one it did not record, and how to move it", () => {
    const tuesday = [day(1, "2026-12-08"), day(2, "2026-12-08")];
    expect(demoDayLine(tuesday, monday)).toContain(
      "The local database keeps the demo of Monday 2026-12-07 (the seed never overwrites): `npm run db:reset` moves it to today.",
    );
    expect(demoDayLine(tuesday, undefined)).toContain("keeps the demo of its first run");
  });

  it("npm run -s demo-day: the day the database holds, else today's", () => {
    expect(demoDayOfDatabase(monday, new Date("2027-03-10T16:00:00.000Z"))).toBe("2026-12-07");
    // Saturday 13 March 2027: the next school day.
    expect(demoDayOfDatabase(undefined, new Date("2027-03-13T16:00:00.000Z"))).toBe("2027-03-15");
  });
});
