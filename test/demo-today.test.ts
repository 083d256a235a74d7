/**
 * The demo lives in the current week: seed/demo.sql moved to a day (src/db/demo-today.ts, as
 * `npm run dev` and `npm run db:reset` load it for the machine's today) answers the README's demo
 * walk on that day: this afternoon's pending asks and the one refused as too late, a free meeting
 * slot next week that the demo parent books, the meetings task not overdue, an invitation open, the
 * festival ahead, the school year around today; and wall-clock times stay right in each school's
 * zone across daylight-saving changes. Each day seeds fresh storage; the clock is the test's.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEMO_ANCHOR, demoDays, demoSeedFor } from "../src/db/demo-today";
import { scriptStatements } from "../src/db/sql-script";
import { dateIn, timeIn } from "../src/lib/zoned-time";
import { readJson } from "./fixture-kit";
import { freshStorage } from "./fresh-storage";
import { DEMO, makeTestApp } from "./helpers";

const NORTH = "America/Mexico_City";
const SOUTH = "America/New_York";

/** A demo calendar with a holiday: Northside closed on the anchor week's Monday (the seed has none). */
const HOLIDAY_MONDAY =
  "INSERT OR IGNORE INTO school_holiday_cycle (id, school_id, school_configuration_id, start_holidays, end_holidays, created_at, updated_at) VALUES\n" +
  "  (1, 1, 1, '2026-11-23', '2026-11-23', '2026-08-01T12:00:00.000Z', '2026-08-01T12:00:00.000Z');\n";

interface Day {
  name: string;
  now: string;
  /** Northside's demo day, and Southside's. */
  north: string;
  south: string;
  holidays?: boolean;
}

const DAYS: Day[] = [
  { name: "a Monday morning", now: "2026-12-07T15:00:00.000Z", north: "2026-12-07", south: "2026-12-07" },
  // 15:30 in Mexico City: the invitations of the next days are still open, the day's deadline gone.
  { name: "a Friday afternoon", now: "2026-12-11T21:30:00.000Z", north: "2026-12-11", south: "2026-12-11" },
  {
    name: "a Sunday (the demo's day is Monday)",
    now: "2026-12-13T18:00:00.000Z",
    north: "2026-12-14",
    south: "2026-12-14",
  },
  {
    name: "a holiday of the demo calendar (the demo's day is the next school day)",
    now: "2027-01-11T16:00:00.000Z",
    north: "2027-01-12",
    south: "2027-01-11",
    holidays: true,
  },
  // New York springs forward at 02:00 on Sunday 14 March 2027 (Mexico City keeps its hour).
  {
    name: "the day New York springs forward",
    now: "2027-03-14T16:00:00.000Z",
    north: "2027-03-15",
    south: "2027-03-15",
  },
  { name: "the Monday after it", now: "2027-03-15T15:00:00.000Z", north: "2027-03-15", south: "2027-03-15" },
  { name: "the day New York falls back", now: "2027-11-07T16:00:00.000Z", north: "2027-11-08", south: "2027-11-08" },
  { name: "a year after the anchor", now: "2027-11-24T16:00:00.000Z", north: "2027-11-24", south: "2027-11-24" },
  // 23:30 on Friday in Mexico City is Saturday in New York: each school's today is its own.
  { name: "Friday night in Mexico City", now: "2026-12-12T05:30:00.000Z", north: "2026-12-11", south: "2026-12-14" },
];

type Page<T> = { data: T[]; total: number };

async function walk(day: Day) {
  const seed = day.holidays ? env.TEST_SEED + HOLIDAY_MONDAY : env.TEST_SEED;
  const now = new Date(day.now);
  await freshStorage(demoSeedFor(seed, now));
  const t = makeTestApp();
  t.clock.current = new Date(now);
  const where = demoDays(seed, now);
  expect(where.map((d) => [d.school, d.day])).toEqual([
    [1, day.north],
    [2, day.south],
  ]);
  const today = dateIn(NORTH, now);
  const demoDay = day.north;
  const admin = (await t.signIn(DEMO.northAdmin.phone)).accessToken;
  const parent = (await t.signIn(DEMO.northParent.phone)).accessToken;
  const southAdmin = (await t.signIn(DEMO.southAdmin.phone)).accessToken;
  const get = async <T>(path: string, token: string, school?: number) => {
    const res = await t.request(path, { token, ...(school ? { school } : {}) });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson<T>(res);
  };

  // This afternoon: a school day with its asks still pending and one refused as too late.
  const summary = await get<{ schoolDay: boolean }>(`/api/v1/transportation-summary?date=${demoDay}&pageSize=1`, admin);
  expect(summary.schoolDay).toBe(true);
  const pending = await get<Page<{ kind: string }>>(`/api/v1/transportation-summary/pending?date=${demoDay}`, admin);
  expect(pending.data.map((p) => p.kind)).toEqual(["no_after_school", "route_change", "auto_pickup"]);
  const refused = await get<Page<{ status: string; decisionReason: string | null }>>(
    `/api/v1/exit-permission?date=${demoDay}&status=rejected`,
    admin,
  );
  expect(refused.data.map((p) => p.decisionReason?.slice(0, 8))).toContain("Too late");

  // The meetings task is to do, not overdue; next week's meetings have free slots, and one is booked.
  const tasks = await get<Page<{ title: string; dueDate: string | null }>>(
    "/api/v1/pending/mine?status=pending",
    parent,
  );
  const meetings = tasks.data.find((c) => c.title.startsWith("Parent-teacher meetings"));
  expect(meetings?.dueDate).toBeDefined();
  expect((meetings?.dueDate ?? "") >= today).toBe(true);
  const slots = await get<Page<{ id: number; date: string; start: string; startsAt: string }>>(
    "/api/v1/time-slot?sessionId=2001&available=true",
    parent,
  );
  expect(slots.total).toBeGreaterThan(0);
  for (const s of slots.data) {
    expect(s.date > demoDay).toBe(true);
    // A slot's instant is its wall-clock time in Mexico City.
    expect(timeIn(NORTH, new Date(s.startsAt))).toBe(s.start);
  }
  const slot = slots.data[0];
  const booked = await t.request(`/api/v1/time-slot/${slot?.id}/appointment`, {
    method: "POST",
    token: parent,
    body: { studentId: 1 },
  });
  expect(booked.status, await booked.clone().text()).toBe(201);

  // An invitation open for the demo parent's family, and the winter festival ahead.
  const invitations = await get<Page<{ status: string; expiresAt: string | null }>>(
    "/api/v1/invitation/mine/received",
    parent,
  );
  expect(
    invitations.data.some((i) => i.status === "open" && (i.expiresAt === null || new Date(i.expiresAt) > now)),
  ).toBe(true);
  const festival = await get<{ startsAt: string; status: string }>(
    "/api/v1/event/public?slug=demo-festival-de-invierno-2026",
    parent,
  );
  expect(festival.status).toBe("scheduled");
  expect(new Date(festival.startsAt) > now).toBe(true);

  // Each school's year around its today.
  for (const [token, school, zone] of [
    [admin, 1, NORTH],
    [southAdmin, 2, SOUTH],
  ] as const) {
    const years = await get<Page<{ startDate: string; endDate: string }>>(
      "/api/v1/school-configuration",
      token,
      school,
    );
    const own = dateIn(zone, now);
    expect(years.data.some((y) => y.startDate <= own && own <= y.endDate)).toBe(true);
  }

  // Wall clocks kept in each school's zone: the seed's 12:00Z of 1 August 2026 was 06:00 in Mexico
  // City and 08:00 in New York (daylight time); moved by whole weeks into winter, it reads the same.
  const created = await env.DB.prepare("SELECT id, created_at FROM school ORDER BY id").all<{
    id: number;
    created_at: string;
  }>();
  const [north, south] = created.results;
  expect(timeIn(NORTH, new Date(north?.created_at ?? ""))).toBe("06:00");
  expect(timeIn(SOUTH, new Date(south?.created_at ?? ""))).toBe("08:00");
  // The seed's guarded updates still found their rows (they compare updated_at, moved alike).
  const address = await env.DB.prepare("SELECT count(*) AS n FROM school WHERE address_id IS NOT NULL").first<{
    n: number;
  }>();
  expect(address?.n).toBe(2);
}

describe("the demo seeded for a day walks the README's demo", () => {
  for (const day of DAYS) it(`on ${day.name} (${day.now})`, () => walk(day));
});

describe("demoSeedFor", () => {
  it("leaves the seed as written on its anchor day, and keeps its statements", () => {
    const at = new Date(`${DEMO_ANCHOR}T16:00:00.000Z`);
    expect(demoSeedFor(env.TEST_SEED, at)).toBe(env.TEST_SEED);
    const later = demoSeedFor(env.TEST_SEED, new Date("2027-03-15T16:00:00.000Z"));
    expect(later).not.toBe(env.TEST_SEED);
    expect(scriptStatements(later)).toHaveLength(scriptStatements(env.TEST_SEED).length);
  });
});
