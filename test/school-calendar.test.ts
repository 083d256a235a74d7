/**
 * The school's calendar is one rule (a holiday cycle over the school-local day; the weekdays the
 * schedules name, for the levels concerned; Monday to Friday for a school without schedules), and
 * every route that asks "does this route run, is this a school day" reaches it: seats for the school
 * and by route, a day's override and changes, the final list and its PDFs, a family's routes, the
 * day's summary, a level's school day.
 */
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { parents } from "../src/db/schema/parent";
import { schoolSchedules } from "../src/db/schema/school-schedule";
import { guardians, students } from "../src/db/schema/student";
import { routes } from "../src/db/schema/transport";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { makeRoute, transportOn } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const A = "/api/v1/route-availability";
const S = "/api/v1/route-availability-student";
const SATURDAY = "2027-03-06";
const FRIDAY = "2027-03-05";
const MONDAY = "2027-03-01";
const MON_TO_SAT = 0b0111111;

const admin = (t: TestApp, school = NORTH) =>
  t.token(school === NORTH ? DEMO.northAdmin.id : DEMO.southAdmin.id, { [school]: "all" });
const parentToken = (t: TestApp) => t.token(DEMO.northParent.id, { [NORTH]: grantsOf("parent").map((p) => p.name) });

async function get<T>(t: TestApp, path: string, token: string, school = NORTH) {
  const res = await t.request(path, { token, school });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<T>(res);
}

/** A route of the north school whose one rider is the demo parent's guardian child. */
async function familyRoute(t: TestApp, weekdays: number) {
  const route = await makeRoute(t, NORTH, { weekdays, riders: [["Lucía", "Calendario"]] });
  const [kid] = route.studentIds;
  const [parent] = await t.db.select().from(parents).where(eq(parents.userId, DEMO.northParent.id));
  if (kid === undefined || !parent) throw new Error("fixture");
  await t.db.insert(guardians).values({ schoolId: NORTH, studentId: kid, parentId: parent.id });
  return { ...route, kid };
}

type Ride = { route: { id: number }; runs: boolean; suspended: boolean; suspension: { until: string | null } | null };

describe("the school's calendar decides which routes run, on every route that asks", () => {
  it("a route that names Saturday does not run on a Saturday the schedules do not name", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const route = await familyRoute(t, MON_TO_SAT);

    const school = await get<{
      schoolDay: boolean;
      reason: string | null;
      holiday: boolean;
      routes: { routeId: number }[];
    }>(t, `${A}/school?date=${SATURDAY}`, token);
    expect(school).toMatchObject({ schoolDay: false, reason: "weekend", holiday: false });
    expect(school.routes.map((r) => r.routeId)).not.toContain(route.routeId);

    const range = await get<{ days: { date: string; runs: boolean; reason: string | null }[] }>(
      t,
      `${A}/route/${route.routeId}?from=${FRIDAY}&to=${SATURDAY}`,
      token,
    );
    expect(range.days).toMatchObject([
      { date: FRIDAY, runs: true, reason: null },
      { date: SATURDAY, runs: false, reason: "weekend" },
    ]);

    const list = await get<{ runs: boolean; reason: string | null; students: unknown[] }>(
      t,
      `${S}/route/${route.routeId}/final-status?date=${SATURDAY}`,
      token,
    );
    expect(list).toMatchObject({ runs: false, reason: "weekend", students: [] });

    // Writes on that day are refused with the reason, and write nothing.
    const override = await t.request(A, {
      method: "POST",
      token,
      school: NORTH,
      body: { routeId: route.routeId, date: SATURDAY, seats: 5 },
    });
    expect(override.status).toBe(422);
    expect((await problem(override)).detail).toContain("is not a school day");
    const away = await t.request(S, {
      method: "POST",
      token,
      school: NORTH,
      body: { routeId: route.routeId, date: SATURDAY, studentId: route.kid, kind: "away" },
    });
    expect(away.status).toBe(422);
    expect((await problem(away)).detail).toContain("is not a school day");
    const days = await t.db.all(sql`SELECT id FROM route_availability WHERE route_id = ${route.routeId}`);
    expect(days).toHaveLength(0);

    // The family's view and the day's summary say the same.
    const family = await get<{ schoolDay: boolean; reason: string | null; data: Ride[] }>(
      t,
      `/api/v1/route/mine?date=${SATURDAY}`,
      await parentToken(t),
    );
    expect(family).toMatchObject({ schoolDay: false, reason: "weekend" });
    expect(family.data.find((r) => r.route.id === route.routeId)?.runs).toBe(false);
    const monday = await get<{ data: Ride[] }>(t, `/api/v1/route/mine?date=${MONDAY}`, await parentToken(t));
    expect(monday.data.find((r) => r.route.id === route.routeId)?.runs).toBe(true);
    const summary = await get<{ schoolDay: boolean }>(t, `/api/v1/transportation-summary?date=${SATURDAY}`, token);
    expect(summary.schoolDay).toBe(false);
  });

  it("a level without school that weekday: its routes do not run, a route of other levels does", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    // No preschool on Fridays.
    await t.db
      .delete(schoolSchedules)
      .where(
        and(
          eq(schoolSchedules.schoolId, NORTH),
          eq(schoolSchedules.level, "preschool"),
          eq(schoolSchedules.weekday, 5),
        ),
      );
    const small = await makeRoute(t, NORTH, { riders: [["Tomás", "Preescolar"]] });
    await t.db
      .update(routes)
      .set({ levels: ["preschool"] })
      .where(eq(routes.id, small.routeId));
    const big = await makeRoute(t, NORTH);
    await t.db
      .update(routes)
      .set({ levels: ["preschool", "elementary"] })
      .where(eq(routes.id, big.routeId));

    const school = await get<{ schoolDay: boolean; routes: { routeId: number }[] }>(
      t,
      `${A}/school?date=${FRIDAY}`,
      token,
    );
    expect(school.schoolDay).toBe(true);
    const running = school.routes.map((r) => r.routeId);
    expect(running).toContain(big.routeId);
    expect(running).not.toContain(small.routeId);

    const list = await get<{ runs: boolean; reason: string | null }>(
      t,
      `${S}/route/${small.routeId}/final-status?date=${FRIDAY}`,
      token,
    );
    expect(list).toMatchObject({ runs: false, reason: "no-schedule" });
    const override = await t.request(A, {
      method: "POST",
      token,
      school: NORTH,
      body: { routeId: small.routeId, date: FRIDAY },
    });
    expect(override.status).toBe(422);
    expect((await problem(override)).detail).toContain("is not a school day");

    const day = await get<{ schoolDay: boolean; reason: string | null }>(
      t,
      `/api/v1/school-schedule/day?date=${FRIDAY}&level=preschool`,
      token,
    );
    expect(day).toMatchObject({ schoolDay: false, reason: "no-schedule" });
    // The day's summary: a school day, without the preschoolers (not at school on Fridays).
    const [tomas] = small.studentIds;
    await t.db
      .update(students)
      .set({ level: "preschool" })
      .where(eq(students.id, tomas ?? 0));
    type Summary = { schoolDay: boolean; total: number; data: { studentId: number }[] };
    const summaryOf = (date: string, level = "preschool") =>
      get<Summary>(t, `/api/v1/transportation-summary?date=${date}&level=${level}&pageSize=100`, token);
    const friday = await summaryOf(FRIDAY);
    expect(friday.schoolDay).toBe(true);
    expect(friday.data.map((s) => s.studentId)).not.toContain(tomas);
    expect(friday.total).toBe(0);
    const thursday = await summaryOf("2027-03-04");
    expect(thursday.data.map((s) => s.studentId)).toContain(tomas);
    expect((await summaryOf(FRIDAY, "elementary")).total).toBeGreaterThan(0);
  });

  it("a holiday cycle over the school-local day, and an open-ended suspension, stop a family's ride", async () => {
    const t = makeTestApp();
    const route = await familyRoute(t, 0b11111);
    // Mexico City's midnight of 5 April is 06:00Z: the cycle covers the local days 5 to 9 April.
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: 1,
      startHolidays: "2027-04-05T06:00:00.000Z",
      endHolidays: "2027-04-10T06:00:00.000Z",
    });
    const parent = await parentToken(t);
    const first = await get<{ holiday: boolean; reason: string | null; data: Ride[] }>(
      t,
      "/api/v1/route/mine?date=2027-04-05",
      parent,
    );
    expect(first).toMatchObject({ holiday: true, reason: "holiday" });
    expect(first.data.find((r) => r.route.id === route.routeId)?.runs).toBe(false);
    const after = await get<{ holiday: boolean; data: Ride[] }>(t, "/api/v1/route/mine?date=2027-04-12", parent);
    expect(after.holiday).toBe(false);
    expect(after.data.find((r) => r.route.id === route.routeId)?.runs).toBe(true);

    // Suspended from 12 April with no end: not riding that day, nor after; the suspension shown.
    await t.db.run(
      sql`UPDATE route_student SET suspended_from = '2027-04-12', suspended_until = NULL, suspension_reason = 'Moved away' WHERE route_id = ${route.routeId}`,
    );
    const suspended = await get<{ data: Ride[] }>(t, "/api/v1/route/mine?date=2027-04-14", parent);
    expect(suspended.data.find((r) => r.route.id === route.routeId)).toMatchObject({
      runs: false,
      suspended: true,
      suspension: { until: null },
    });
    // The driver's list agrees: away, with the reason.
    const list = await get<{ students: { studentId: number; status: string; reason: string | null }[] }>(
      t,
      `${S}/route/${route.routeId}/final-status?date=2027-04-14`,
      await admin(t),
    );
    expect(list.students.find((s) => s.studentId === route.kid)).toMatchObject({
      status: "away",
      reason: "Moved away",
    });
  });

  it("a school without schedules has school Monday to Friday", async () => {
    const t = makeTestApp();
    await transportOn(t, SOUTH);
    await (await t.schoolDb(SOUTH)).delete(schoolSchedules).where(eq(schoolSchedules.schoolId, SOUTH));
    const token = await admin(t, SOUTH);
    const route = await makeRoute(t, SOUTH, { weekdays: MON_TO_SAT });
    const monday = await get<{ schoolDay: boolean; routes: { routeId: number }[] }>(
      t,
      `${A}/school?date=${MONDAY}`,
      token,
      SOUTH,
    );
    expect(monday.schoolDay).toBe(true);
    expect(monday.routes.map((r) => r.routeId)).toContain(route.routeId);
    const saturday = await get<{ schoolDay: boolean; reason: string | null }>(
      t,
      `${A}/school?date=${SATURDAY}`,
      token,
      SOUTH,
    );
    expect(saturday).toMatchObject({ schoolDay: false, reason: "weekend" });
    const day = await get<{ schoolDay: boolean; dismissal: string | null; deadline: string | null }>(
      t,
      `/api/v1/school-schedule/day?date=${MONDAY}&level=elementary`,
      token,
      SOUTH,
    );
    expect(day).toMatchObject({ schoolDay: true, dismissal: null, deadline: null });
  });
});
