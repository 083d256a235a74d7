/**
 * The day's summary: every active student's way home on a date (their usual home route, the
 * family when they have none or are suspended, or what the confirmed permission says), the totals
 * per way, the filters, holidays and days without school, one D1 round trip; and the pending
 * authorizations of a date, oldest first.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { students } from "../src/db/schema/student";
import { routeStudents } from "../src/db/schema/transport";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { addRiderDays, makeClass, makeGroup, makePermission } from "./fixtures/afternoon";
import { MONDAY, makeRoute, makeStudents } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const P = "/api/v1/transportation-summary";
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

type Row = {
  studentId: number;
  firstName: string;
  lastName: string;
  way: string;
  route: { id: number; name: string; stopId: number | null; stopName: string | null } | null;
  usualRoute: { id: number; suspended: boolean } | null;
  permission: {
    id: number;
    kind: string;
    route: { id: number; stopId: number | null } | null;
    trustedAddress: unknown;
    collector: { kind: string; name: string } | null;
  } | null;
  dismissal: string | null;
};
type Summary = {
  data: Row[];
  total: number;
  page: number;
  next: string | null;
  date: string;
  schoolDay: boolean;
  holiday: boolean;
  counts: Record<string, number>;
};

async function summary(query: string, token?: string) {
  const res = await t.request(`${P}?${query}`, { token: token ?? (await admin()), school: NORTH });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<Summary>(res);
}

/** A class whose afternoon has every way: answers the ids by name and the routes. */
async function afternoon() {
  const usual = await makeRoute(t, NORTH, {
    riders: [
      ["Ana", "Arias"],
      ["Bruno", "Baez"],
      ["Carla", "Cruz"],
      ["Dario", "Diaz"],
      ["Elena", "Evans"],
      ["Felipe", "Fuentes"],
      ["Gala", "Gomez"],
    ],
  });
  await addRiderDays(t, usual.routeId);
  const other = await makeRoute(t, NORTH, { riders: [] });
  const [walker] = await makeStudents(t, NORTH, [["Hugo", "Hernandez"]]);
  if (walker === undefined) throw new Error("no student");
  const ids = [...usual.studentIds, walker];
  const group = await makeGroup(t, NORTH, ids);
  const [ana, bruno, carla, dario, elena, felipe, gala] = usual.studentIds.map((id) => id ?? 0);
  // Carla changes route; Dario is collected by a trusted person; Elena is absent; Felipe stays
  // for no after-school; Gala is suspended that week; Bruno's permission is only pending.
  await makePermission(t, {
    schoolId: NORTH,
    studentId: carla ?? 0,
    date: MONDAY,
    kind: "route_change",
    status: "confirmed",
    routeId: other.routeId,
    stopId: other.stopIds[1] ?? null,
  });
  const [person] = await t.db
    .insert(trustedPeople)
    .values({
      schoolId: NORTH,
      studentId: dario ?? 0,
      name: "Tía Carmen",
      relationship: "aunt",
      phone: "+525512345678",
      status: "approved",
      decidedAt: "2026-11-01T00:00:00.000Z",
    })
    .returning({ id: trustedPeople.id });
  await makePermission(t, {
    schoolId: NORTH,
    studentId: dario ?? 0,
    date: MONDAY,
    kind: "auto_pickup",
    status: "confirmed",
    trustedPersonId: person?.id ?? null,
  });
  await makePermission(t, {
    schoolId: NORTH,
    studentId: elena ?? 0,
    date: MONDAY,
    kind: "absence",
    status: "confirmed",
  });
  await makePermission(t, {
    schoolId: NORTH,
    studentId: felipe ?? 0,
    date: MONDAY,
    kind: "no_after_school",
    status: "confirmed",
  });
  await makePermission(t, { schoolId: NORTH, studentId: bruno ?? 0, date: MONDAY, kind: "absence", status: "pending" });
  // A superseded and a rejected one change nothing.
  await makePermission(t, { schoolId: NORTH, studentId: ana ?? 0, date: MONDAY, kind: "absence", status: "rejected" });
  await makePermission(t, {
    schoolId: NORTH,
    studentId: ana ?? 0,
    date: MONDAY,
    kind: "absence",
    status: "superseded",
  });
  await t.db
    .update(routeStudents)
    .set({ suspendedFrom: "2027-02-26", suspendedUntil: "2027-03-05", suspensionReason: "Broken arm" })
    .where(eq(routeStudents.studentId, gala ?? 0));
  return { usual, other, group, ids, walker };
}

describe("the day's summary", () => {
  it("tells each student's way home and counts them", async () => {
    const { usual, other, group, walker, ids } = await afternoon();
    const s = await summary(`date=${MONDAY}&group=${group}&pageSize=100`);
    expect(s).toMatchObject({ date: MONDAY, schoolDay: true, holiday: false, total: 8 });
    const by = new Map(s.data.map((r) => [r.firstName, r]));
    expect(by.get("Ana")).toMatchObject({ way: "route", route: { id: usual.routeId }, permission: null });
    expect(by.get("Bruno")).toMatchObject({ way: "route", permission: null });
    expect(by.get("Carla")).toMatchObject({
      way: "route_change",
      route: { id: other.routeId, stopId: other.stopIds[1], stopName: "Calle Olmo" },
      usualRoute: { id: usual.routeId, suspended: false },
      permission: { kind: "route_change", route: { id: other.routeId } },
    });
    expect(by.get("Dario")).toMatchObject({
      way: "auto_pickup",
      route: null,
      permission: { collector: { kind: "trusted", name: "Tía Carmen" } },
    });
    expect(by.get("Elena")).toMatchObject({ way: "absence", route: null });
    expect(by.get("Felipe")).toMatchObject({ way: "no_after_school" });
    expect(by.get("Gala")).toMatchObject({ way: "family", route: null, usualRoute: { suspended: true } });
    expect(by.get("Hugo")).toMatchObject({ way: "family", route: null, usualRoute: null });
    expect(s.counts).toEqual({
      route: 2,
      family: 2,
      route_change: 1,
      auto_pickup: 1,
      no_after_school: 1,
      absence: 1,
    });
    // By last name.
    expect(s.data.map((r) => r.lastName)).toEqual([
      "Arias",
      "Baez",
      "Cruz",
      "Diaz",
      "Evans",
      "Fuentes",
      "Gomez",
      "Hernandez",
    ]);
    // The demo's Northside has weekday schedules: the dismissal of an elementary student is there.
    expect(ids).toContain(walker);
  });

  it("filters by way, route and level; pages; the totals stay those of the other filters", async () => {
    const { usual, other, group } = await afternoon();
    const family = await summary(`date=${MONDAY}&group=${group}&way=family`);
    expect(family.total).toBe(2);
    expect(family.data.map((r) => r.firstName)).toEqual(["Gala", "Hugo"]);
    expect(family.counts.route).toBe(2);

    // The usual route's riders, and those changing onto the other one.
    const onUsual = await summary(`date=${MONDAY}&routeId=${usual.routeId}`);
    expect(onUsual.total).toBe(7);
    const onOther = await summary(`date=${MONDAY}&routeId=${other.routeId}`);
    expect(onOther.data.map((r) => r.firstName)).toEqual(["Carla"]);

    const paged = await summary(`date=${MONDAY}&group=${group}&pageSize=3&page=2`);
    expect(paged.data.map((r) => r.firstName)).toEqual(["Dario", "Elena", "Felipe"]);
    expect(paged.total).toBe(8);
    expect(paged.next).toContain("page=3");

    const none = await summary(`date=${MONDAY}&group=${group}&level=high`);
    expect(none.total).toBe(0);
    const { ids, group: high } = await makeClass(t, NORTH, [["Iris", "Ibarra"]], "high");
    const highs = await summary(`date=${MONDAY}&group=${high}&level=high`);
    expect(highs.data.map((r) => r.studentId)).toEqual(ids);
    expect(highs.data[0]?.dismissal).toMatch(/^\d\d:\d\d$/);
  });

  it("leaves out students not active and deleted ones", async () => {
    const { ids, group } = await makeClass(t, NORTH, [
      ["Jose", "Juarez"],
      ["Karla", "Kuri"],
      ["Luis", "Lara"],
    ]);
    await t.db
      .update(students)
      .set({ status: "graduated" })
      .where(eq(students.id, ids[1] ?? 0));
    await t.db
      .update(students)
      .set({ deletedAt: "2026-11-01T00:00:00.000Z" })
      .where(eq(students.id, ids[2] ?? 0));
    const s = await summary(`date=${MONDAY}&group=${group}`);
    expect(s.data.map((r) => r.firstName)).toEqual(["Jose"]);
  });

  it("says when there is no school: a holiday, a weekend", async () => {
    const { group } = await afternoon();
    const [config] = await t.db.select().from(schoolConfigurations).where(eq(schoolConfigurations.schoolId, NORTH));
    if (!config) throw new Error("no school configuration in the demo");
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: config.id,
      startHolidays: "2027-03-08T06:00:00.000Z",
      endHolidays: "2027-03-09T06:00:00.000Z",
    });
    const holiday = await summary(`date=2027-03-08&group=${group}`);
    expect(holiday).toMatchObject({ schoolDay: false, holiday: true, total: 0, data: [] });
    expect(Object.values(holiday.counts).every((n) => n === 0)).toBe(true);
    const saturday = await summary(`date=2027-03-06&group=${group}`);
    expect(saturday).toMatchObject({ schoolDay: false, holiday: false, total: 0 });
    // The day after the holiday (Mexico City: the cycle ends at its local midnight) is a school day.
    expect((await summary(`date=2027-03-09&group=${group}`)).schoolDay).toBe(true);
  });

  it("defaults to the school's today, in its zone", async () => {
    // 2026-11-24T03:00Z is still Monday 23 November in Mexico City.
    t.clock.current = new Date("2026-11-24T03:00:00.000Z");
    const s = await summary("pageSize=1");
    expect(s.date).toBe("2026-11-23");
  });

  it("is one D1 round trip for a date, and without one once the school's zone is kept", async () => {
    const { t: counted, measure } = countingTestApp();
    const token = await counted.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const withDate = await measure(() => counted.request(`${P}?date=${MONDAY}`, { token, school: NORTH }));
    expect(withDate.res.status).toBe(200);
    expect(withDate.calls).toBe(1);
    const today = await measure(() => counted.request(P, { token, school: NORTH }));
    expect(today.res.status).toBe(200);
    expect(today.calls).toBeLessThanOrEqual(2); // the first read of the zone in this isolate
    const again = await measure(() => counted.request(P, { token, school: NORTH }));
    expect(again.calls).toBe(1);
    const pending = await measure(() => counted.request(`${P}/pending?date=${MONDAY}`, { token, school: NORTH }));
    expect(pending.calls).toBe(1);
  });

  it("is staff's: a parent or a teacher gets a 403; bad input a 400", async () => {
    const parent = await t.token(DEMO.northParent.id, { [NORTH]: grantsOf("parent").map((p) => p.name) });
    expect((await t.request(P, { token: parent, school: NORTH })).status).toBe(403);
    const teacher = await t.token(DEMO.northTeacher.id, { [NORTH]: grantsOf("teacher").map((p) => p.name) });
    expect((await t.request(`${P}/pending`, { token: teacher, school: NORTH })).status).toBe(403);
    const staff = await t.token(1001, { [NORTH]: grantsOf("staff").map((p) => p.name) });
    expect((await t.request(`${P}?date=${MONDAY}`, { token: staff, school: NORTH })).status).toBe(200);
    for (const q of ["date=2027-02-30", "way=bus", "level=college", "group=0", "sort=name", "pageSize=101"]) {
      const res = await t.request(`${P}?${q}`, { token: await admin(), school: NORTH });
      expect(res.status, q).toBe(400);
      expect((await problem(res)).status).toBe(400);
    }
  });

  it("never shows another school's students, whatever the filter names", async () => {
    const { group } = await afternoon();
    const south = await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });
    const res = await t.request(`${P}?date=${MONDAY}&group=${group}`, { token: south, school: SOUTH });
    expect(res.status).toBe(200);
    expect((await readJson<Summary>(res)).total).toBe(0);
  });
});

type Pending = {
  data: {
    id: number;
    kind: string;
    status: string;
    student: { id: number; firstName: string };
    askedBy: { userId: number; name: string; parentId: number | null } | null;
    askedAt: string;
    dismissal: { local: string; at: string } | null;
    collector: { name: string } | null;
  }[];
  total: number;
};

describe("pending authorizations", () => {
  it("lists a date's permissions waiting for a decision, oldest first, with who asked", async () => {
    const date = "2027-05-03"; // a Monday
    const [a, b, c] = await makeStudents(t, NORTH, [
      ["Mia", "Mora"],
      ["Nico", "Nuñez"],
      ["Olga", "Ortiz"],
    ]);
    const at = (m: number) => `2027-05-01T1${m}:00:00.000Z`;
    const second = await makePermission(t, {
      schoolId: NORTH,
      studentId: b ?? 0,
      date,
      kind: "absence",
      status: "awaiting_family",
      askedBy: DEMO.northParent.id,
      createdAt: at(2),
      updatedAt: at(2),
    });
    const first = await makePermission(t, {
      schoolId: NORTH,
      studentId: a ?? 0,
      date,
      kind: "no_after_school",
      status: "pending",
      askedBy: DEMO.northAdmin.id,
      reason: "Dentist",
      createdAt: at(1),
      updatedAt: at(1),
    });
    await makePermission(t, { schoolId: NORTH, studentId: c ?? 0, date, kind: "absence", status: "confirmed" });
    await makePermission(t, {
      schoolId: NORTH,
      studentId: c ?? 0,
      date: "2027-05-04",
      kind: "absence",
      status: "pending",
    });
    const res = await t.request(`${P}/pending?date=${date}`, { token: await admin(), school: NORTH });
    expect(res.status).toBe(200);
    const page = await readJson<Pending>(res);
    expect(page.total).toBe(2);
    expect(page.data.map((p) => p.id)).toEqual([first.id, second.id]);
    expect(page.data[0]).toMatchObject({
      kind: "no_after_school",
      status: "pending",
      reason: "Dentist",
      student: { id: a, firstName: "Mia" },
      askedBy: { userId: DEMO.northAdmin.id },
      askedAt: at(1),
    });
    expect(page.data[0]?.askedBy?.name).not.toBe("");
    expect(page.data[1]?.status).toBe("awaiting_family");
  });

  it("gives the dismissal the answer is needed by, for a student with a level", async () => {
    const date = "2027-05-10";
    const { ids } = await makeClass(t, NORTH, [["Pia", "Paz"]]);
    await makePermission(t, { schoolId: NORTH, studentId: ids[0] ?? 0, date, kind: "absence", status: "pending" });
    const page = await readJson<Pending>(
      await t.request(`${P}/pending?date=${date}`, { token: await admin(), school: NORTH }),
    );
    const dismissal = page.data[0]?.dismissal;
    expect(dismissal?.local).toMatch(/^\d\d:\d\d$/);
    // Mexico City is UTC-6: the instant is six hours later than the local time.
    const [h, m] = (dismissal?.local ?? "0:0").split(":").map(Number);
    expect(dismissal?.at).toBe(
      `${date}T${String((h ?? 0) + 6).padStart(2, "0")}:${String(m).padStart(2, "0")}:00.000Z`,
    );
  });
});

describe("the demo week (seed/demo.sql)", () => {
  it("has Northside's Wednesday 25 November: its ways, its pending requests, Paloma's pickup pass", async () => {
    const day = await summary("date=2026-11-25&pageSize=1");
    expect(day.schoolDay).toBe(true);
    expect(day.counts.route).toBeGreaterThan(100);
    expect(day.counts.auto_pickup).toBeGreaterThanOrEqual(1);
    expect(day.counts.absence).toBeGreaterThanOrEqual(1);
    const pending = await readJson<Pending>(
      await t.request(`${P}/pending?date=2026-11-25`, { token: await admin(), school: NORTH }),
    );
    expect(pending.data.map((p) => p.kind)).toEqual(["no_after_school", "route_change", "auto_pickup"]);
    const pickups = await summary("date=2026-11-25&way=auto_pickup&pageSize=100");
    const paloma = pickups.data.find((r) => r.permission?.collector?.name === "Rosa Martínez");
    expect(paloma).toBeDefined();
    const [row] = await t.db
      .select({ slug: exitPermissions.slug })
      .from(exitPermissions)
      .where(eq(exitPermissions.id, paloma?.permission?.id ?? 0));
    // Noon of the 25th in Mexico City: the pass is valid; the next day it is gone.
    t.clock.current = new Date("2026-11-25T18:00:00.000Z");
    expect((await t.request(`/api/v1/exit-permission/public?slug=${row?.slug}`)).status).toBe(200);
    t.clock.current = new Date("2026-11-26T06:00:00.000Z");
    expect((await t.request(`/api/v1/exit-permission/public?slug=${row?.slug}`)).status).toBe(404);
  });
});
