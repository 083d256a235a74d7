/**
 * Seats per day and the final list: the default seats (the vehicle's minus the day's riders), the
 * school's override, joins that take a seat in one guarded statement (never oversold under a race),
 * aways, holidays, versions ("changes since you printed"), drivers who see only their routes, and
 * bad input; the routes a family may change a child to on a date (options).
 */
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { parents } from "../src/db/schema/parent";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { guardians, students } from "../src/db/schema/student";
import { routeAvailabilities, routeStudents, routes, transports } from "../src/db/schema/transport";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { BUILTIN_ROLES } from "../src/lib/access";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { MONDAY, makeRoute, makeStudents } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const A = "/api/v1/route-availability";
const S = "/api/v1/route-availability-student";
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

type Day = { routeId: number; seats: number; riders: number; available: number; override: number | null };
type FinalStatus = {
  runs: boolean;
  holiday: boolean;
  version: number;
  printedVersion: number | null;
  students: {
    studentId: number;
    firstName: string;
    status: string;
    reason: string | null;
    stopPosition: number | null;
    receivers?: { name: string; kind: string }[];
  }[];
  changes?: { version: number; change: string; studentId: number | null }[];
};

async function schoolDay(date = MONDAY, token?: string) {
  const res = await t.request(`${A}/school?date=${date}`, { token: token ?? (await admin()), school: NORTH });
  expect(res.status).toBe(200);
  return readJson<{ holiday: boolean; routes: Day[] }>(res);
}

const change = async (body: object, token?: string) =>
  t.request(S, { method: "POST", token: token ?? (await admin()), school: NORTH, body });

describe("seats per day", () => {
  it("offers the vehicle's seats minus the riders, honours an override, and refuses one below the riders", async () => {
    const route = await makeRoute(t, NORTH, {
      seats: 5,
      riders: [
        ["Ana", "Uno"],
        ["Beto", "Dos"],
      ],
    });
    const day = (await schoolDay()).routes.find((r) => r.routeId === route.routeId);
    expect(day).toMatchObject({ seats: 5, riders: 2, available: 3, override: null });

    const created = await t.request(A, {
      method: "POST",
      token: await admin(),
      school: NORTH,
      body: { routeId: route.routeId, date: MONDAY, seats: 4 },
    });
    expect(created.status).toBe(201);
    const { id } = await readJson<{ id: number }>(created);
    expect((await schoolDay()).routes.find((r) => r.routeId === route.routeId)).toMatchObject({
      seats: 4,
      available: 2,
    });

    const dup = await t.request(A, {
      method: "POST",
      token: await admin(),
      school: NORTH,
      body: { routeId: route.routeId, date: MONDAY },
    });
    expect(dup.status).toBe(409);

    const low = await t.request(`${A}/${id}`, {
      method: "PUT",
      token: await admin(),
      school: NORTH,
      body: { seats: 1 },
    });
    expect(low.status).toBe(422);
    expect((await problem(low)).detail).toContain("2 riders");

    for (const seats of [-1, 100_000, 1.5, "3"]) {
      const bad = await t.request(`${A}/${id}`, {
        method: "PUT",
        token: await admin(),
        school: NORTH,
        body: { seats },
      });
      expect(bad.status, String(seats)).toBe(400);
    }
    const reset = await t.request(`${A}/${id}`, {
      method: "PUT",
      token: await admin(),
      school: NORTH,
      body: { seats: null },
    });
    expect(reset.status).toBe(204);
    expect((await schoolDay()).routes.find((r) => r.routeId === route.routeId)).toMatchObject({
      seats: 5,
      available: 3,
    });

    const range = await t.request(`${A}/route/${route.routeId}?from=2027-03-01&to=2027-03-07`, {
      token: await admin(),
      school: NORTH,
    });
    const days = (await readJson<{ days: { date: string; runs: boolean }[] }>(range)).days;
    expect(days.map((d) => d.runs)).toEqual([true, true, true, true, true, false, false]);
    for (const q of ["from=2027-03-07&to=2027-03-01", "from=2027-03-01", "from=2027-01-01&to=2027-03-01"]) {
      const bad = await t.request(`${A}/route/${route.routeId}?${q}`, { token: await admin(), school: NORTH });
      expect(bad.status, q).toBe(422);
    }
  });

  it("refuses a date the route does not run, and another school's route", async () => {
    const route = await makeRoute(t, NORTH, { weekdays: 0b00001 });
    const tuesday = await t.request(A, {
      method: "POST",
      token: await admin(),
      school: NORTH,
      body: { routeId: route.routeId, date: "2027-03-02" },
    });
    expect(tuesday.status).toBe(422);
    const south = await makeRoute(t, SOUTH);
    const other = await t.request(A, {
      method: "POST",
      token: await admin(),
      school: NORTH,
      body: { routeId: south.routeId, date: MONDAY },
    });
    expect(other.status).toBe(404);
  });

  it("20 concurrent joins for 3 seats: exactly 3 win, the day shows 3 taken", async () => {
    const route = await makeRoute(t, NORTH, { seats: 3 });
    const kids = await makeStudents(
      t,
      NORTH,
      Array.from({ length: 20 }, (_, i): [string, string] => [`Niño${i}`, "Carrera"]),
    );
    const token = await admin();
    const results = await Promise.all(
      kids.map((studentId) =>
        change(
          { routeId: route.routeId, date: MONDAY, studentId, kind: "join", stopId: route.stopIds[0], reason: "Race" },
          token,
        ),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 409)).toHaveLength(17);
    const [row] = await t.db.select().from(routeAvailabilities).where(eq(routeAvailabilities.routeId, route.routeId));
    expect(row?.taken).toBe(3);
    const loser = results.find((r) => r.status === 409);
    expect((await problem(loser ?? new Response())).detail).toContain("No seats left");
    expect((await schoolDay()).routes.find((r) => r.routeId === route.routeId)).toMatchObject({
      riders: 3,
      available: 0,
    });
  });
});

describe("the day's changes", () => {
  it("checks joins and aways, frees a seat on delete, and keeps versions after a download", async () => {
    const route = await makeRoute(t, NORTH, {
      seats: 3,
      riders: [
        ["Ana", "Álvarez"],
        ["Íñigo", "Muñoz"],
      ],
    });
    const other = await makeRoute(t, NORTH);
    const [newcomer, stranger] = await makeStudents(t, NORTH, [
      ["Zoé", "Núñez"],
      ["Pía", "Ortega"],
    ]);
    const [rider] = route.studentIds;
    const base = { routeId: route.routeId, date: MONDAY };

    expect((await change({ ...base, studentId: rider, kind: "join", stopId: route.stopIds[0] })).status).toBe(409);
    expect((await change({ ...base, studentId: newcomer, kind: "join" })).status).toBe(422);
    expect((await change({ ...base, studentId: newcomer, kind: "join", stopId: other.stopIds[0] })).status).toBe(422);
    expect((await change({ ...base, studentId: stranger, kind: "away" })).status).toBe(422);
    const southKid = (await makeStudents(t, SOUTH, [["Sur", "Kid"]]))[0];
    expect((await change({ ...base, studentId: southKid, kind: "away" })).status).toBe(404);
    expect(
      (await change({ ...base, date: "2027-03-06", studentId: newcomer, kind: "join", stopId: route.stopIds[0] }))
        .status,
    ).toBe(422);

    // The list is downloaded (version 1); then a change: version 2, one change since 1.
    const printed = await t.request(`${S}/route/${route.routeId}/final-status?date=${MONDAY}&print=true`, {
      token: await admin(),
      school: NORTH,
    });
    expect((await readJson<FinalStatus>(printed)).printedVersion).toBe(1);

    const joined = await change({
      ...base,
      studentId: newcomer,
      kind: "join",
      stopId: route.stopIds[1],
      reason: "Cumpleaños",
    });
    expect(joined.status).toBe(201);
    const join = await readJson<{ id: number; version: number }>(joined);
    expect(join.version).toBe(2);
    const away = await change({ ...base, studentId: rider, kind: "away", reason: "Enfermo" });
    expect(away.status).toBe(201);

    const res = await t.request(`${S}/route/${route.routeId}/final-status?date=${MONDAY}&sinceVersion=1`, {
      token: await admin(),
      school: NORTH,
    });
    const list = await readJson<FinalStatus>(res);
    expect(list.version).toBe(2);
    expect(list.changes?.map((c) => c.change)).toEqual(["added", "away"]);
    expect(list.students.map((s) => [s.firstName, s.status])).toEqual([
      ["Ana", "away"],
      ["Íñigo", "riding"],
      ["Zoé", "joining"],
    ]);
    expect((await schoolDay()).routes.find((r) => r.routeId === route.routeId)).toMatchObject({
      riders: 2,
      available: 1,
    });

    const removed = await t.request(`${S}/${join.id}`, { method: "DELETE", token: await admin(), school: NORTH });
    expect(removed.status).toBe(204);
    expect((await schoolDay()).routes.find((r) => r.routeId === route.routeId)).toMatchObject({
      riders: 1,
      available: 2,
    });
    const [row] = await t.db.select().from(routeAvailabilities).where(eq(routeAvailabilities.routeId, route.routeId));
    expect(row?.taken).toBe(0);

    const byRoute = await t.request(`${S}/route/${route.routeId}?date=${MONDAY}`, {
      token: await admin(),
      school: NORTH,
    });
    expect((await readJson<{ total: number }>(byRoute)).total).toBe(1);
  });

  it("a day's join keeps the rule of every rider: an active student of a level the route serves (422)", async () => {
    const route = await makeRoute(t, NORTH);
    await t.db
      .update(routes)
      .set({ levels: ["high"] })
      .where(eq(routes.id, route.routeId));
    const [young, gone] = await makeStudents(t, NORTH, [
      ["Nivel", "Bajo"],
      ["Ya", "Inactivo"],
    ]);
    await t.db
      .update(students)
      .set({ level: "preschool" })
      .where(eq(students.id, young ?? 0));
    await t.db
      .update(students)
      .set({ level: "high", status: "inactive" })
      .where(eq(students.id, gone ?? 0));
    const join = (studentId: number | undefined) =>
      change({ routeId: route.routeId, date: MONDAY, studentId, kind: "join", stopId: route.stopIds[0] });
    const low = await join(young);
    expect(low.status).toBe(422);
    expect((await problem(low)).detail).toMatch(/serves high; Nivel Bajo is preschool/);
    const inactive = await join(gone);
    expect(inactive.status).toBe(422);
    expect((await problem(inactive)).detail).toMatch(/is inactive; only active students ride routes/);
    const [day] = await t.db.select().from(routeAvailabilities).where(eq(routeAvailabilities.routeId, route.routeId));
    expect(day?.taken ?? 0).toBe(0);
  });

  it("riders put on, suspended, brought back and taken off a route make the next version of a printed list", async () => {
    const route = await makeRoute(t, NORTH, { riders: [["Ana", "Versión"]] });
    const [ana] = route.studentIds;
    const [newcomer] = await makeStudents(t, NORTH, [["Bruno", "Versión"]]);
    const status = async (query: string) =>
      readJson<FinalStatus & { changes?: { change: string; studentId: number | null }[] }>(
        await t.request(`${S}/route/${route.routeId}/final-status?date=${MONDAY}&${query}`, {
          token: await admin(),
          school: NORTH,
        }),
      );
    const riders = "/api/v1/route-student";
    const write = async (method: string, path: string, body?: unknown) => {
      const res = await t.request(path, { method, token: await admin(), school: NORTH, body });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      return res;
    };
    expect((await status("print=true")).printedVersion).toBe(1);

    // A new rider on Mondays: version 2, "added".
    const added = await write("POST", riders, {
      routeId: route.routeId,
      studentId: newcomer,
      stopId: route.stopIds[0],
      weekdays: [1],
    });
    const newRider = await readJson<{ id: number }>(added);
    let list = await status("sinceVersion=1&print=true");
    expect(list.version).toBe(2);
    expect(list.changes?.map((c) => [c.change, c.studentId])).toEqual([["added", newcomer]]);
    expect(list.students.map((s) => s.studentId).sort()).toEqual([ana, newcomer].sort());

    // Ana suspended on that Monday: version 3, "away"; the suspension cancelled: version 4, "back".
    const [anaRide] = await t.db
      .select()
      .from(routeStudents)
      .where(eq(routeStudents.studentId, ana ?? 0));
    await write("PUT", `${riders}/${anaRide?.id}/suspend`, { from: MONDAY, until: MONDAY, reason: "Viaje" });
    list = await status("sinceVersion=2&print=true");
    expect(list.version).toBe(3);
    expect(list.changes?.map((c) => [c.change, c.studentId])).toEqual([["away", ana]]);
    await write("PATCH", `${riders}/${anaRide?.id}/cancel-suspension`);
    list = await status("sinceVersion=3&print=true");
    expect(list.version).toBe(4);
    expect(list.changes?.map((c) => [c.change, c.studentId])).toEqual([["back", ana]]);

    // The new rider taken off: version 5, "removed"; a change while the list is unprinted stays in its version.
    await write("DELETE", `${riders}/${newRider.id}`);
    list = await status("sinceVersion=4");
    expect(list.version).toBe(5);
    expect(list.changes?.map((c) => [c.change, c.studentId])).toEqual([["removed", newcomer]]);
    expect(list.students.map((s) => s.studentId)).toEqual([ana]);
    await write("PUT", `${riders}/${anaRide?.id}/suspend`, { from: MONDAY, until: MONDAY, reason: "Viaje" });
    list = await status("sinceVersion=4");
    expect(list.version).toBe(5);
    expect(list.changes?.map((c) => c.change)).toEqual(["removed", "away"]);
  });

  it("lists who may receive each child, and no one on a holiday", async () => {
    const route = await makeRoute(t, NORTH, { riders: [["Sofía", "Receive"]] });
    const [kid] = route.studentIds;
    if (kid === undefined) throw new Error("no kid");
    const [parent] = await t.db.select().from(parents).where(eq(parents.userId, DEMO.northParent.id));
    if (parent) await t.db.insert(guardians).values({ schoolId: NORTH, studentId: kid, parentId: parent.id });
    await t.db.insert(trustedPeople).values({
      schoolId: NORTH,
      studentId: kid,
      name: "Tía Carmen",
      relationship: "aunt",
      phone: "+525512345678",
      status: "approved",
      decidedAt: "2026-11-01T00:00:00.000Z",
    });
    const res = await t.request(`${S}/route/${route.routeId}/final-status?date=${MONDAY}`, {
      token: await admin(),
      school: NORTH,
    });
    const list = await readJson<FinalStatus>(res);
    const names = list.students[0]?.receivers?.map((r) => r.name) ?? [];
    expect(names).toContain("Tía Carmen");
    if (parent) expect(names.length).toBe(2);

    const [config] = await t.db.select().from(schoolConfigurations).where(eq(schoolConfigurations.schoolId, NORTH));
    if (!config) throw new Error("no school configuration in the demo");
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: config.id,
      startHolidays: "2027-04-05T00:00:00.000Z",
      endHolidays: "2027-04-10T00:00:00.000Z",
    });
    const holiday = await t.request(`${S}/route/${route.routeId}/final-status?date=2027-04-06`, {
      token: await admin(),
      school: NORTH,
    });
    expect(await readJson<FinalStatus>(holiday)).toMatchObject({ runs: false, holiday: true, students: [] });
    expect((await schoolDay("2027-04-06")).holiday).toBe(true);
  });
});

describe("drivers", () => {
  it("read only the routes of the vehicles they drive", async () => {
    const driverId = DEMO.northTeacher.id;
    const mine = await makeRoute(t, NORTH, { driverUserId: driverId, riders: [["Mía", "Driver"]] });
    const theirs = await makeRoute(t, NORTH);
    // The driver role is what narrows a reader to the routes of their vehicles.
    await t.db.run(
      sql`INSERT OR IGNORE INTO role_user (school_id, user_id, role_id) VALUES (${NORTH}, ${driverId}, ${BUILTIN_ROLES.driver.id})`,
    );
    const token = await t.token(driverId, { [NORTH]: ["route-availability.read", "route-list.read", "route.read"] });
    const ok = await t.request(`${S}/route/${mine.routeId}/final-status?date=${MONDAY}`, { token, school: NORTH });
    expect(ok.status).toBe(200);
    const no = await t.request(`${S}/route/${theirs.routeId}/final-status?date=${MONDAY}`, { token, school: NORTH });
    expect(no.status).toBe(404);
    const day = await schoolDay(MONDAY, token);
    expect(day.routes.map((r) => r.routeId)).toEqual([mine.routeId]);
    const write = await change(
      { routeId: mine.routeId, date: MONDAY, studentId: mine.studentIds[0], kind: "away" },
      token,
    );
    expect(write.status).toBe(403);
    // Days and changes of both routes: the driver's lists and reads show only theirs.
    for (const r of [mine, theirs]) {
      const [kid] = await makeStudents(t, NORTH, [["Otro", "Niño"]]);
      const joined = await change({
        routeId: r.routeId,
        date: MONDAY,
        studentId: kid,
        kind: "join",
        stopId: r.stopIds[0],
      });
      expect(joined.status).toBe(201);
    }
    const days = await readJson<{ data: { routeId: number }[] }>(
      await t.request(`${A}?pageSize=100`, { token, school: NORTH }),
    );
    expect(new Set(days.data.map((d) => d.routeId))).toEqual(new Set([mine.routeId]));
    const changes = await readJson<{ data: { id: number; routeId: number }[] }>(
      await t.request(`${S}?pageSize=100`, { token, school: NORTH }),
    );
    expect(new Set(changes.data.map((c) => c.routeId))).toEqual(new Set([mine.routeId]));
    const [theirDay] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(eq(routeAvailabilities.routeId, theirs.routeId));
    expect((await t.request(`${A}/${theirDay?.id}`, { token, school: NORTH })).status).toBe(404);
    expect((await t.request(`${S}/final-status/pdf?date=${MONDAY}`, { token, school: NORTH })).status).toBe(200);
  });
});

describe("a route the caller may not read", () => {
  // Every operation with a {routeId} in its path: a route of another school, an unknown one, and for
  // a driver a route they do not drive are all the same 404, as the route itself is.
  const ROUTE_PATHS = [
    (id: number) => `${S}/route/${id}?date=${MONDAY}`,
    (id: number) => `${S}/route/${id}`,
    (id: number) => `${S}/route/${id}/final-status?date=${MONDAY}`,
    (id: number) => `${S}/route/${id}/final-status/pdf?date=${MONDAY}`,
    (id: number) => `${A}/route/${id}?date=${MONDAY}`,
    (id: number) => `${A}/route/${id}?from=${MONDAY}&to=2027-03-03`,
  ];

  it("is a 404 naming it: another school's, an unknown one, and a route a driver does not drive", async () => {
    const driverId = DEMO.northTeacher.id;
    const mine = await makeRoute(t, NORTH, { driverUserId: driverId, riders: [["Lía", "Propia"]] });
    const theirs = await makeRoute(t, NORTH, { riders: [["Tom", "Ajeno"]] });
    const south = await makeRoute(t, SOUTH);
    // A change on each route's day, so a page of changes would have rows to show.
    for (const r of [mine, theirs]) {
      expect(
        (await change({ routeId: r.routeId, date: MONDAY, studentId: r.studentIds[0], kind: "away" })).status,
      ).toBe(201);
    }
    await t.db.run(
      sql`INSERT OR IGNORE INTO role_user (school_id, user_id, role_id) VALUES (${NORTH}, ${driverId}, ${BUILTIN_ROLES.driver.id})`,
    );
    const driver = await t.token(driverId, { [NORTH]: ["route-availability.read", "route-list.read", "route.read"] });
    const staff = await admin();
    const cases: [string, string, number, number][] = [
      ["another school's route", staff, south.routeId, 404],
      ["an unknown route", staff, 987654321, 404],
      ["a route the driver does not drive", driver, theirs.routeId, 404],
      ["the driver's own route", driver, mine.routeId, 200],
      ["any route of the school, for staff", staff, theirs.routeId, 200],
    ];
    for (const path of ROUTE_PATHS) {
      for (const [what, token, routeId, status] of cases) {
        const res = await t.request(path(routeId), { token, school: NORTH });
        expect(res.status, `${path(routeId)}: ${what}`).toBe(status);
        if (status === 404) expect((await problem(res)).detail).toBe(`Route ${routeId} not found`);
      }
    }
    // The route's check rides in the page's batch: still one D1 round trip.
    const counting = countingTestApp();
    const { res: own, calls } = await counting.measure(() =>
      counting.t.request(`${S}/route/${mine.routeId}?date=${MONDAY}`, { token: driver, school: NORTH }),
    );
    expect((await readJson<{ total: number }>(own)).total).toBe(1);
    expect(calls).toBe(1);
  });
});

describe("students stay in their school", () => {
  it("a suspended rider is away with the reason", async () => {
    const route = await makeRoute(t, NORTH, { riders: [["Leo", "Suspendido"]] });
    await t.db
      .update(routeStudents)
      .set({ suspendedFrom: "2027-02-20", suspendedUntil: "2027-03-05", suspensionReason: "Viaje familiar" })
      .where(eq(routeStudents.routeId, route.routeId));
    const res = await t.request(`${S}/route/${route.routeId}/final-status?date=${MONDAY}`, {
      token: await admin(),
      school: NORTH,
    });
    const list = await readJson<FinalStatus>(res);
    expect(list.students[0]).toMatchObject({ status: "away", reason: "Viaje familiar" });
    const [kid] = await t.db
      .select()
      .from(students)
      .where(eq(students.id, route.studentIds[0] ?? 0));
    expect(kid?.schoolId).toBe(NORTH);
  });
});

describe("the school's today", () => {
  it("answers the date on the school's clocks when none is asked, and follows a change of the school's zone at once", async () => {
    const saved = t.clock.current;
    // 02:30 UTC on a Tuesday: still Monday evening in Mexico City, already Tuesday in Tokyo.
    t.clock.current = new Date("2027-03-02T02:30:00.000Z");
    const setZone = async (timeZone: string) =>
      expect(
        (
          await t.request(`/api/v1/school/${NORTH}`, {
            method: "PUT",
            token: await admin(),
            school: NORTH,
            body: { timeZone },
          })
        ).status,
      ).toBe(204);
    const today = async () =>
      (await readJson<{ date: string }>(await t.request(`${A}/school`, { token: await admin(), school: NORTH }))).date;
    try {
      await setZone("America/Mexico_City");
      expect(await today()).toBe("2027-03-01");
      await setZone("Asia/Tokyo");
      expect(await today()).toBe("2027-03-02");
    } finally {
      await setZone("America/Mexico_City");
      t.clock.current = saved;
    }
  });
});

describe("the routes a child may change to on a date", () => {
  /** Northside's delegate of the demo parent (seed), valid 2026-08-24 .. 2027-06-30. */
  const DELEGATE = 1032;
  const as = (userId: number, role: "parent" | "staff") =>
    t.token(userId, { [NORTH]: grantsOf(role).map((p) => p.name) });
  type Option = {
    id: number;
    name: string;
    stops: { id: number; name: string; position: number; time: string }[];
    seats: number;
    available: number;
    rides: boolean;
  };
  const options = (studentId: number, token: string, date = MONDAY) =>
    t.request(`${A}/options?studentId=${studentId}&date=${date}`, { token, school: NORTH });

  it("lists the home routes of the child's level running that day, full ones with 0 seats left; 404 to anyone else", async () => {
    const [child] = await makeStudents(t, NORTH, [["Olivia", "Opciones"]]);
    if (child === undefined) throw new Error("no child");
    await t.db.update(students).set({ level: "elementary" }).where(eq(students.id, child));
    const [parent] = await t.db.select().from(parents).where(eq(parents.userId, DEMO.northParent.id));
    if (!parent) throw new Error("no demo parent");
    await t.db.insert(guardians).values({ schoolId: NORTH, studentId: child, parentId: parent.id });

    const open = await makeRoute(t, NORTH, { seats: 5, name: "Opción abierta" });
    const full = await makeRoute(t, NORTH, { seats: 1, riders: [["Lleno", "Uno"]], name: "Opción llena" });
    const ridden = await makeRoute(t, NORTH, { seats: 1, name: "Opción suya" });
    await t.db.insert(routeStudents).values({
      schoolId: NORTH,
      routeId: ridden.routeId,
      studentId: child,
      stopId: ridden.stopIds[0] ?? 0,
      weekdays: 0b11111,
      direction: "home",
    });
    const ofLevel = await makeRoute(t, NORTH, { name: "Opción primaria" });
    await t.db
      .update(routes)
      .set({ levels: ["elementary"] })
      .where(eq(routes.id, ofLevel.routeId));
    const otherLevel = await makeRoute(t, NORTH, { name: "Opción prepa" });
    await t.db
      .update(routes)
      .set({ levels: ["high"] })
      .where(eq(routes.id, otherLevel.routeId));
    const toSchool = await makeRoute(t, NORTH, { direction: "to_school", name: "Opción ida" });
    const notMondays = await makeRoute(t, NORTH, { weekdays: 0b11110, name: "Opción sin lunes" });
    const parked = await makeRoute(t, NORTH, { name: "Opción en taller" });
    await t.db.update(transports).set({ status: "out_of_service" }).where(eq(transports.id, parked.transportId));

    const parentToken = await as(DEMO.northParent.id, "parent");
    const res = await options(child, parentToken);
    expect(res.status, await res.clone().text()).toBe(200);
    const list = await readJson<Option[]>(res);
    const byId = new Map(list.map((o) => [o.id, o]));
    expect(byId.get(open.routeId)).toEqual({
      id: open.routeId,
      name: "Opción abierta",
      stops: [
        { id: open.stopIds[0], name: "Plaza Mayor", position: 1, time: "15:10" },
        { id: open.stopIds[1], name: "Calle Olmo", position: 2, time: "15:25" },
      ],
      seats: 5,
      available: 5,
      rides: false,
    });
    // A full route is listed, with nothing left: the parent sees it is full.
    expect(byId.get(full.routeId)).toMatchObject({ seats: 1, available: 0, rides: false });
    expect(byId.get(ridden.routeId)).toMatchObject({ seats: 1, available: 0, rides: true });
    expect(byId.has(ofLevel.routeId)).toBe(true);
    for (const absent of [otherLevel, toSchool, notMondays, parked]) expect(byId.has(absent.routeId)).toBe(false);
    // Every route listed goes home.
    const homes = await t.db.select({ id: routes.id, direction: routes.direction }).from(routes);
    const direction = new Map(homes.map((r) => [r.id, r.direction]));
    expect(list.every((o) => direction.get(o.id) === "home")).toBe(true);

    // One D1 round trip.
    const counting = countingTestApp();
    const { res: counted, calls } = await counting.measure(() =>
      counting.t.request(`${A}/options?studentId=${child}&date=${MONDAY}`, { token: parentToken, school: NORTH }),
    );
    expect(counted.status).toBe(200);
    expect(calls).toBe(1);

    // The demo parent's delegate, acting for them today, sees the same.
    const delegated = await options(child, await as(DELEGATE, "parent"));
    expect(delegated.status, await delegated.clone().text()).toBe(200);
    expect((await readJson<Option[]>(delegated)).map((o) => o.id)).toEqual(list.map((o) => o.id));

    // Staff with route-availability.read: 200.
    const staff = await options(child, await admin());
    expect(staff.status).toBe(200);
    expect((await readJson<Option[]>(staff)).map((o) => o.id)).toEqual(list.map((o) => o.id));

    // Another family's child, and another school's student: not found.
    const [stranger] = await makeStudents(t, NORTH, [["Otra", "Familia"]]);
    const [southern] = await makeStudents(t, SOUTH, [["Sur", "Lejano"]]);
    for (const id of [stranger, southern]) {
      const other = await options(id ?? 0, parentToken);
      expect(other.status).toBe(404);
      expect((await problem(other)).detail).toBe(`Student ${id} not found`);
    }
    const south = await options(southern ?? 0, await admin());
    expect(south.status).toBe(404);
    // A teacher without the read permission is no guardian either.
    const teacher = await options(child, await t.token(DEMO.northTeacher.id, { [NORTH]: [] }));
    expect(teacher.status).toBe(404);
  });
});
