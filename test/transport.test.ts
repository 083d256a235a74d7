/**
 * Vehicles and routes: staff write them; a driver reads only the routes of the vehicles they drive
 * (404 on others, 403 on vehicles); a parent sees their children's routes at /route/mine (a delegate:
 * the parent's), with whether each runs on a date (weekdays, holidays, suspensions); another school's
 * records are 404s. Rules: seats never below a day's riders (422 naming the day and counts), a
 * vehicle serving a route stays in service (422), a stop with riders stays (409), a route or a
 * vehicle in use is not deleted (409). Riders are put on routes with SQL here.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { users } from "../src/db/schema/core";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { students } from "../src/db/schema/student";
import { routeAvailabilities, routeStudentDays, routeStudents } from "../src/db/schema/transport";
import { trustedAddresses } from "../src/db/schema/trusted-address";
import { schoolUsers } from "../src/db/schema/user";
import { withSearch } from "../src/db/search";
import { grantsOf } from "../src/modules";
import { uniq } from "./fixture-kit";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const TRANSPORT = "/api/v1/transport";
const ROUTE = "/api/v1/route";
/** The demo parent's child in Northside (seed/demo.sql): student 1, guardian parent 1 (user 4). */
const DEMO_CHILD = 1;
/** Northside's delegate of the demo parent (seed), valid 2026-08-24 .. 2027-06-30. */
const DELEGATE = 1032;

type Role = Parameters<typeof grantsOf>[0];
const as = (t: TestApp, userId: number, school: number, role: Role) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp, school = NORTH) =>
  as(t, school === NORTH ? DEMO.northAdmin.id : DEMO.southAdmin.id, school, "school-admin");

type Vehicle = {
  id: number;
  name: string;
  seats: number;
  status: string;
  driverPhone: string | null;
  driverUserId: number | null;
};
type Stop = { id: number; position: number; name: string; time: string; address: string | null };
type RouteRec = {
  id: number;
  name: string;
  transportId: number;
  transport: { name: string; seats: number };
  direction: string;
  weekdays: number[];
  levels: string[];
  stops: Stop[];
  studentCount: number;
};
type Page<T> = { data: T[]; total: number };

async function call(t: TestApp, method: string, path: string, token: string, body?: unknown, school = NORTH) {
  return t.request(path, { method, token, school, body });
}

async function vehicle(t: TestApp, body: Record<string, unknown> = {}, school = NORTH): Promise<Vehicle> {
  const res = await call(
    t,
    "POST",
    TRANSPORT,
    await admin(t, school),
    { name: uniq("Bus"), seats: 40, ...body },
    school,
  );
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function route(t: TestApp, body: Record<string, unknown> = {}, school = NORTH): Promise<RouteRec> {
  const transportId = body.transportId ?? (await vehicle(t, {}, school)).id;
  const res = await call(
    t,
    "POST",
    ROUTE,
    await admin(t, school),
    {
      name: uniq("Route"),
      transportId,
      direction: "home",
      weekdays: [1, 2, 3, 4, 5],
      stops: [
        { name: "School gate", time: "15:00" },
        { name: "Maple & 3rd", time: "15:20", address: "301 Maple Ave" },
        { name: "Oak Park", time: "15:35" },
      ],
      ...body,
    },
    school,
  );
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function student(t: TestApp, school = NORTH) {
  const [row] = await t.db
    .insert(students)
    .values(withSearch(students, { schoolId: school, firstName: uniq("Rider"), lastName: "Transport" }))
    .returning({ id: students.id });
  if (!row) throw new Error("no student");
  return row.id;
}

/** Puts a student on a route at a stop on the weekdays (route_student + its days), as the route-student API would. */
async function ride(t: TestApp, r: RouteRec, studentId: number, stopId: number, weekdays: number[], extra = {}) {
  const mask = weekdays.reduce((m, d) => m | (1 << (d - 1)), 0);
  const [row] = await t.db
    .insert(routeStudents)
    .values({
      schoolId: NORTH,
      routeId: r.id,
      studentId,
      stopId,
      weekdays: mask,
      direction: r.direction === "home" ? "home" : "to_school",
      ...extra,
    })
    .returning({ id: routeStudents.id });
  if (!row) throw new Error("no route student");
  await t.db.insert(routeStudentDays).values(
    weekdays.map((weekday) => ({
      schoolId: NORTH,
      routeStudentId: row.id,
      studentId,
      direction: r.direction === "home" ? ("home" as const) : ("to_school" as const),
      weekday,
    })),
  );
  return row.id;
}

/** A user who is one of Northside's people (no role yet). */
async function member(t: TestApp) {
  const phone = `+1555${7_100_000 + Math.floor(Math.random() * 800_000)}`;
  const [user] = await t.db
    .insert(users)
    .values(withSearch(users, { phone, firstName: "Dora", lastName: "Driver", status: "active" }))
    .returning({ id: users.id });
  if (!user) throw new Error("no user");
  await t.db.insert(schoolUsers).values({ schoolId: NORTH, userId: user.id });
  return user.id;
}

describe("vehicles", () => {
  it("staff create, list, read, update and delete a vehicle; phones are normalised", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const name = uniq("Bus");
    const created = await vehicle(t, {
      name,
      plate: "ABC-123",
      seats: 30,
      driverName: "Dora",
      driverPhone: "+1 555 000 0099",
    });
    expect(created).toMatchObject({
      name,
      seats: 30,
      status: "active",
      driverPhone: "+15550000099",
      driverUserId: null,
    });

    const list = (await (
      await call(t, "GET", `${TRANSPORT}?name=${name}&status=active`, token)
    ).json()) as Page<Vehicle>;
    expect(list.data.map((v) => v.id)).toEqual([created.id]);
    const none = (await (
      await call(t, "GET", `${TRANSPORT}?name=${name}&status=out_of_service`, token)
    ).json()) as Page<Vehicle>;
    expect(none.total).toBe(0);

    expect((await call(t, "PUT", `${TRANSPORT}/${created.id}`, token, { seats: 45, plate: null })).status).toBe(204);
    const read = (await (await call(t, "GET", `${TRANSPORT}/${created.id}`, token)).json()) as Vehicle;
    expect(read).toMatchObject({ seats: 45, plate: null });

    const dup = await call(t, "POST", TRANSPORT, token, { name: name.toUpperCase(), seats: 10 });
    expect(dup.status).toBe(409);

    expect((await call(t, "DELETE", `${TRANSPORT}/${created.id}`, token)).status).toBe(204);
    expect((await call(t, "GET", `${TRANSPORT}/${created.id}`, token)).status).toBe(404);
  });

  it("refuses bad bodies: seats negative, zero or absurd, unknown fields, a bad phone (400)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    for (const body of [
      { name: "X", seats: -1 },
      { name: "X", seats: 0 },
      { name: "X", seats: 101 },
      { name: "X", seats: 1.5 },
      { name: "X", seats: 10, schoolId: 2 },
      { name: "X", seats: 10, driverPhone: "555-0100" },
      { name: "X", seats: 10, status: "broken" },
    ]) {
      const res = await call(t, "POST", TRANSPORT, token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const v = await vehicle(t);
    expect((await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, {})).status).toBe(400);
    expect((await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { seats: 1000 })).status).toBe(400);
  });

  it("another school's vehicle is a 404 everywhere, in a path or a body", async () => {
    const t = makeTestApp();
    const north = await vehicle(t);
    const south = await admin(t, SOUTH);
    expect((await call(t, "GET", `${TRANSPORT}/${north.id}`, south, undefined, SOUTH)).status).toBe(404);
    expect((await call(t, "PUT", `${TRANSPORT}/${north.id}`, south, { seats: 3 }, SOUTH)).status).toBe(404);
    expect((await call(t, "DELETE", `${TRANSPORT}/${north.id}`, south, undefined, SOUTH)).status).toBe(404);
    const res = await call(
      t,
      "POST",
      ROUTE,
      south,
      {
        name: "Stolen",
        transportId: north.id,
        direction: "home",
        weekdays: [1],
        stops: [{ name: "A", time: "15:00" }],
      },
      SOUTH,
    );
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toContain(`Transport ${north.id}`);
  });

  it("seats never fall below a day's riders: a 422 naming the day and the counts", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t, { seats: 10 });
    const r = await route(t, { transportId: v.id });
    const stop = r.stops[1]?.id ?? 0;
    for (let i = 0; i < 3; i++) await ride(t, r, await student(t), stop, [1, 3]);
    await ride(t, r, await student(t), stop, [1]);

    const res = await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { seats: 3 });
    expect(res.status).toBe(422);
    const detail = (await problem(res)).detail;
    expect(detail).toContain("4 riders on Monday");
    expect(detail).toContain(r.name);
    expect((await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { seats: 4 })).status).toBe(204);

    // A date with its own seats row counts its changes too: 4 riders + 2 joining on Monday 2026-11-30.
    await t.db.insert(routeAvailabilities).values({ schoolId: NORTH, routeId: r.id, date: "2026-11-30", taken: 2 });
    expect((await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { seats: 10 })).status).toBe(204);
    const dated = await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { seats: 5 });
    expect(dated.status).toBe(422);
    expect((await problem(dated)).detail).toContain("6 riders on 2026-11-30 (Monday)");
  });

  it("a vehicle serving a route cannot go out of service, and one out of service serves no route (422)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t);
    const r = await route(t, { transportId: v.id });
    const res = await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { status: "out_of_service" });
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toContain(r.name);

    const broken = await vehicle(t, { status: "out_of_service" });
    const create = await call(t, "POST", ROUTE, token, {
      name: uniq("Route"),
      transportId: broken.id,
      direction: "to_school",
      weekdays: [1],
      stops: [{ name: "A", time: "07:00" }],
    });
    expect(create.status).toBe(422);
    expect((await problem(create)).detail).toContain("out of service");
    expect((await call(t, "PUT", `${ROUTE}/${r.id}`, token, { transportId: broken.id })).status).toBe(422);

    // Moved to another vehicle, the first may go out of service.
    const spare = await vehicle(t);
    expect((await call(t, "PUT", `${ROUTE}/${r.id}`, token, { transportId: spare.id })).status).toBe(204);
    expect((await call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { status: "out_of_service" })).status).toBe(204);
  });

  it("a vehicle going out of service while a route is created on it: exactly one of the two wins", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    for (let i = 0; i < 3; i++) {
      const v = await vehicle(t);
      const [off, created] = await Promise.all([
        call(t, "PUT", `${TRANSPORT}/${v.id}`, token, { status: "out_of_service" }),
        call(t, "POST", ROUTE, token, {
          name: uniq("Race"),
          transportId: v.id,
          direction: "home",
          weekdays: [1],
          stops: [{ name: "A", time: "15:00" }],
        }),
      ]);
      expect(
        [off.status, created.status].filter((s) => s < 300),
        `${off.status} ${created.status}`,
      ).toHaveLength(1);
      expect([off.status, created.status].filter((s) => s >= 300)).toEqual([422]);
    }
  });

  it("a vehicle serving a route is not deleted (409)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const r = await route(t);
    const res = await call(t, "DELETE", `${TRANSPORT}/${r.transportId}`, token);
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toContain(r.name);
  });

  it("a driver user from another school is a 404; one of this school's people gets the driver role", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const res = await call(t, "POST", TRANSPORT, token, {
      name: uniq("Bus"),
      seats: 20,
      driverUserId: DEMO.southAdmin.id,
    });
    expect(res.status).toBe(404);
    const driver = await member(t);
    const v = await vehicle(t, { driverUserId: driver });
    expect(v.driverUserId).toBe(driver);
    const roles = await t.db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM role_user WHERE user_id = ${driver} AND role_id = 6 AND school_id = ${NORTH}`,
    );
    expect(roles[0]?.n).toBe(1);
    // Given again (another vehicle): the role is kept, not doubled.
    await vehicle(t, { driverUserId: driver });
    const again = await t.db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM role_user WHERE user_id = ${driver} AND role_id = 6`,
    );
    expect(again[0]?.n).toBe(1);
  });
});

describe("routes", () => {
  it("staff create a route with ordered stops and read it with its vehicle; filters", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t, { name: uniq("Bus"), seats: 33 });
    const r = await route(t, {
      transportId: v.id,
      direction: "to_school",
      weekdays: [5, 1, 3],
      levels: ["elementary"],
    });
    expect(r).toMatchObject({
      transportId: v.id,
      direction: "to_school",
      weekdays: [1, 3, 5],
      levels: ["elementary"],
      studentCount: 0,
    });
    expect(r.transport).toMatchObject({ name: v.name, seats: 33 });
    expect(r.stops.map((s) => [s.position, s.name, s.time])).toEqual([
      [1, "School gate", "15:00"],
      [2, "Maple & 3rd", "15:20"],
      [3, "Oak Park", "15:35"],
    ]);

    const list = async (q: string) =>
      ((await (await call(t, "GET", `${ROUTE}?transport=${v.id}&${q}`, token)).json()) as Page<RouteRec>).data.map(
        (x) => x.id,
      );
    expect(await list("direction=to_school")).toEqual([r.id]);
    expect(await list("direction=home")).toEqual([]);
    expect(await list("weekday=3")).toEqual([r.id]);
    expect(await list("weekday=2")).toEqual([]);
    expect(await list("level=elementary")).toEqual([r.id]);
    expect(await list("level=high")).toEqual([]);
    expect(await list(`name=${encodeURIComponent(r.name)}`)).toEqual([r.id]);
    expect((await call(t, "GET", `${ROUTE}?weekday=8`, token)).status).toBe(400);
  });

  it("refuses bad bodies (400) and levels the school does not offer (422)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t);
    const base = {
      name: uniq("Route"),
      transportId: v.id,
      direction: "home",
      weekdays: [1],
      stops: [{ name: "A", time: "15:00" }],
    };
    for (const body of [
      { ...base, weekdays: [] },
      { ...base, weekdays: [0] },
      { ...base, weekdays: [1, 1] },
      { ...base, direction: "sideways" },
      { ...base, stops: [] },
      { ...base, stops: [{ name: "A", time: "25:00" }] },
      {
        ...base,
        stops: [
          { name: "A", time: "15:30" },
          { name: "B", time: "15:00" },
        ],
      },
      { ...base, stops: Array.from({ length: 51 }, (_, i) => ({ name: `S${i}`, time: "15:00" })) },
      { ...base, levels: ["college"] },
      { ...base, extra: 1 },
    ]) {
      const res = await call(t, "POST", ROUTE, token, body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
    }
    await t.db.run(sql`UPDATE school SET levels = '["elementary"]' WHERE id = ${NORTH}`);
    const res = await call(t, "POST", ROUTE, token, { ...base, levels: ["high"] });
    expect(res.status).toBe(422);
  });

  it("a stop's trusted address must be this school's (404) and approved (422)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t);
    const address = async (school: number, status: "approved" | "pending") => {
      const kid = await student(t, school);
      const [row] = await t.db
        .insert(trustedAddresses)
        .values({
          schoolId: school,
          studentId: kid,
          street: "Main",
          city: "Town",
          country: "MX",
          status,
          decidedAt: status === "approved" ? "2026-11-01T00:00:00.000Z" : null,
        })
        .returning({ id: trustedAddresses.id });
      return row?.id ?? 0;
    };
    const body = (trustedAddressId: number) => ({
      name: uniq("Route"),
      transportId: v.id,
      direction: "home",
      weekdays: [1],
      stops: [{ name: "A", time: "15:00", trustedAddressId }],
    });
    expect((await call(t, "POST", ROUTE, token, body(await address(SOUTH, "approved")))).status).toBe(404);
    expect((await call(t, "POST", ROUTE, token, body(await address(NORTH, "pending")))).status).toBe(422);
    expect((await call(t, "POST", ROUTE, token, body(await address(NORTH, "approved")))).status).toBe(201);
  });

  it("replacing stops keeps the ids sent, refuses removing a stop with riders (409) and a stop of another route (422)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const r = await route(t);
    const [gate, maple, oak] = r.stops;
    if (!gate || !maple || !oak) throw new Error("stops");
    await ride(t, r, await student(t), maple.id, [1, 2]);
    await ride(t, r, await student(t), maple.id, [3]);

    const removing = await call(t, "PUT", `${ROUTE}/${r.id}`, token, {
      stops: [
        { id: gate.id, name: gate.name, time: gate.time },
        { id: oak.id, name: oak.name, time: oak.time },
      ],
    });
    expect(removing.status).toBe(409);
    expect((await problem(removing)).detail).toContain("2 rider(s)");

    const other = await route(t);
    const foreign = await call(t, "PUT", `${ROUTE}/${r.id}`, token, {
      stops: [
        { id: other.stops[0]?.id, name: "X", time: "15:00" },
        { id: maple.id, name: maple.name, time: "15:10" },
      ],
    });
    expect(foreign.status).toBe(422);

    // Maple first, a new stop, Gate renamed; Oak (no riders) removed.
    const ok = await call(t, "PUT", `${ROUTE}/${r.id}`, token, {
      name: uniq("Renamed"),
      stops: [
        { id: maple.id, name: "Maple", time: "14:50" },
        { name: "New corner", time: "15:05" },
        { id: gate.id, name: "Gate", time: "15:10" },
      ],
    });
    expect(ok.status, await ok.clone().text()).toBe(204);
    const after = (await (await call(t, "GET", `${ROUTE}/${r.id}`, token)).json()) as RouteRec;
    expect(after.stops.map((s) => [s.id === maple.id, s.name, s.position])).toEqual([
      [true, "Maple", 1],
      [false, "New corner", 2],
      [false, "Gate", 3],
    ]);
    expect(after.stops[2]?.id).toBe(gate.id);
    expect(after.studentCount).toBe(2);
  });

  it("a route with riders keeps its direction and their weekdays (409); a new vehicle must seat them (422)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const r = await route(t);
    const stop = r.stops[0]?.id ?? 0;
    await ride(t, r, await student(t), stop, [2]);
    await ride(t, r, await student(t), stop, [2]);
    expect((await call(t, "PUT", `${ROUTE}/${r.id}`, token, { direction: "to_school" })).status).toBe(409);
    const dropped = await call(t, "PUT", `${ROUTE}/${r.id}`, token, { weekdays: [1, 3] });
    expect(dropped.status).toBe(409);
    expect((await problem(dropped)).detail).toContain("Tuesday");
    const small = await vehicle(t, { seats: 1 });
    const moved = await call(t, "PUT", `${ROUTE}/${r.id}`, token, { transportId: small.id });
    expect(moved.status).toBe(422);
    expect((await problem(moved)).detail).toContain("2 riders on Tuesday");
  });

  it("a route with riders is not deleted (409 naming how many); one without is", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const r = await route(t);
    await ride(t, r, await student(t), r.stops[0]?.id ?? 0, [1]);
    const res = await call(t, "DELETE", `${ROUTE}/${r.id}`, token);
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toContain("1 student(s)");
    const empty = await route(t);
    expect((await call(t, "DELETE", `${ROUTE}/${empty.id}`, token)).status).toBe(204);
    expect((await call(t, "GET", `${ROUTE}/${empty.id}`, token)).status).toBe(404);
  });

  it("of two creates of one name at once, exactly one wins", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const v = await vehicle(t);
    const body = {
      name: uniq("Race"),
      transportId: v.id,
      direction: "home",
      weekdays: [1],
      stops: [{ name: "A", time: "15:00" }],
    };
    const results = await Promise.all([1, 2, 3].map(() => call(t, "POST", ROUTE, token, body)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  it("a driver reads only the routes of the vehicles they drive; others are 404; vehicles are 403", async () => {
    const t = makeTestApp();
    const driver = await member(t);
    const mine = await route(t, { transportId: (await vehicle(t, { driverUserId: driver })).id });
    const other = await route(t);
    const token = await as(t, driver, NORTH, "driver");
    const list = (await (await call(t, "GET", `${ROUTE}?pageSize=100`, token)).json()) as Page<RouteRec>;
    expect(list.data.map((r) => r.id)).toEqual([mine.id]);
    expect((await call(t, "GET", `${ROUTE}/${mine.id}`, token)).status).toBe(200);
    expect((await call(t, "GET", `${ROUTE}/${other.id}`, token)).status).toBe(404);
    expect((await call(t, "GET", TRANSPORT, token)).status).toBe(403);
    expect((await call(t, "PUT", `${ROUTE}/${mine.id}`, token, { name: "Mine now" })).status).toBe(403);
    // A teacher (route.read, no driver role) reads every route.
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    expect((await call(t, "GET", `${ROUTE}/${other.id}`, teacher)).status).toBe(200);
  });
});

describe("route information for the current parent", () => {
  type Family = {
    date: string;
    weekday: number;
    holiday: boolean;
    data: {
      routeStudentId: number;
      student: { id: number };
      route: { id: number; direction: string };
      stop: Stop | null;
      stops: Stop[];
      vehicle: { name: string; driverPhone: string | null };
      runs: boolean;
      suspended: boolean;
      suspension: { from: string; until: string; reason: string | null } | null;
    }[];
  };
  const mine = async (t: TestApp, token: string, query = "") => {
    const res = await call(t, "GET", `${ROUTE}/mine${query}`, token);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Family;
  };

  it("a parent sees only their children's rides, with stop, time, vehicle and whether it runs on the date", async () => {
    const t = makeTestApp();
    const v = await vehicle(t, { driverName: "Dora", driverPhone: "+15550000005" });
    const r = await route(t, { transportId: v.id, weekdays: [1, 2, 3, 4, 5] });
    const maple = r.stops[1];
    if (!maple) throw new Error("stop");
    const own = await ride(t, r, DEMO_CHILD, maple.id, [1, 3]);
    await ride(t, r, await student(t), maple.id, [1]);
    const parent = await as(t, DEMO.northParent.id, NORTH, "parent");

    // The test clock: Monday 2026-11-23, 09:00 in Mexico City.
    const today = await mine(t, parent);
    expect(today).toMatchObject({ date: "2026-11-23", weekday: 1, holiday: false });
    const rides = today.data.filter((d) => d.route.id === r.id);
    expect(rides).toHaveLength(1);
    expect(rides[0]).toMatchObject({
      routeStudentId: own,
      student: { id: DEMO_CHILD },
      stop: { id: maple.id, time: "15:20" },
      vehicle: { name: v.name, driverPhone: "+15550000005" },
      runs: true,
      suspended: false,
    });
    expect(rides[0]?.stops).toHaveLength(3);

    // Tuesday: the route runs, the child does not ride it.
    const tuesday = (await mine(t, parent, "?date=2026-11-24")).data.find((d) => d.route.id === r.id);
    expect(tuesday?.runs).toBe(false);
    expect((await call(t, "GET", `${ROUTE}/mine?date=2026-13-01`, parent)).status).toBe(400);

    // Suspended for a week: listed, not running, with its reason.
    await t.db.run(
      sql`UPDATE route_student SET suspended_from = '2026-11-25', suspended_until = '2026-11-27', suspension_reason = 'Broken arm' WHERE id = ${own}`,
    );
    const wednesday = (await mine(t, parent, "?date=2026-11-25")).data.find((d) => d.route.id === r.id);
    expect(wednesday).toMatchObject({ runs: false, suspended: true, suspension: { reason: "Broken arm" } });
    const monday = (await mine(t, parent)).data.find((d) => d.route.id === r.id);
    expect(monday).toMatchObject({ runs: true, suspended: false, suspension: { from: "2026-11-25" } });

    // A holiday: nothing runs.
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: 1,
      startHolidays: "2026-12-01",
      endHolidays: "2026-12-04",
    });
    const holiday = await mine(t, parent, "?date=2026-12-02");
    expect(holiday.holiday).toBe(true);
    expect(holiday.data.find((d) => d.route.id === r.id)?.runs).toBe(false);

    // Another parent of the school sees none of it.
    const stranger = await as(t, 1001, NORTH, "parent");
    expect((await mine(t, stranger)).data.find((d) => d.route.id === r.id)).toBeUndefined();
  });

  it("a delegate sees what their parent sees, within their window only", async () => {
    const t = makeTestApp();
    const r = await route(t, { direction: "to_school", stops: [{ name: "Oak", time: "07:00" }] });
    await ride(t, r, DEMO_CHILD, r.stops[0]?.id ?? 0, [2]);
    const delegate = await as(t, DELEGATE, NORTH, "parent");
    expect((await mine(t, delegate)).data.some((d) => d.route.id === r.id)).toBe(true);
    // After the delegation ends (2027-06-30), nothing.
    t.clock.current = new Date("2027-07-05T15:00:00.000Z");
    const later = await as(t, DELEGATE, NORTH, "parent");
    expect((await mine(t, later)).data.some((d) => d.route.id === r.id)).toBe(false);
  });

  it("is one D1 round trip", async () => {
    const { t, measure } = countingTestApp();
    const r = await route(t, { direction: "to_school", stops: [{ name: "Oak", time: "07:00" }] });
    await ride(t, r, DEMO_CHILD, r.stops[0]?.id ?? 0, [4]);
    const parent = await as(t, DEMO.northParent.id, NORTH, "parent");
    const { res, calls } = await measure(() => t.request(`${ROUTE}/mine`, { token: parent, school: NORTH }));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
  });

  it("staff without children get an empty list; a school without the module gets 403 naming it", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    expect((await mine(t, token)).data).toEqual([]);
    const superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
    const off = await call(t, "PUT", "/api/v1/application-module/school/transport/enabled", superAdmin, {
      enabled: false,
    });
    expect(off.status).toBe(204);
    for (const path of [ROUTE, `${ROUTE}/mine`, TRANSPORT]) {
      const res = await call(t, "GET", path, superAdmin);
      expect(res.status, path).toBe(403);
      expect((await problem(res)).detail).toBe(`The transport module is disabled in school ${NORTH}`);
    }
  });
});
