/**
 * Route students: /api/v1/route-student. Create and its rules (another school's route, stop or
 * student, a stop off the route, a weekday the route does not run, a level it does not serve, an
 * inactive or deleted student), one route per student, direction and weekday (the 409 names the
 * route, also under a race), update, delete, delete several, a route's riders, suspensions, the
 * export, what a driver sees, and the student list's `route` filter.
 */
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { students } from "../src/db/schema/student";
import { routeStudentDays, routeStudents } from "../src/db/schema/transport";
import { BUILTIN_ROLES } from "../src/lib/access";
import { readXlsx } from "../src/lib/xlsx";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { enableTransport, makeRider, makeRoute } from "./fixtures/modules/route-student";
import { countingTestApp, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const DRIVER_USER = 3; // the demo teacher, who also drives in these tests

type Rider = {
  id: number;
  routeId: number;
  studentId: number;
  stopId: number;
  student: { id: number; firstName: string; lastName: string; idNumber: string | null; level: string | null };
  route: { id: number; name: string; direction: string };
  stop: { id: number; name: string; time: string; position: number };
  weekdays: number[];
  suspension: { from: string; until: string; reason: string } | null;
};
type Page<T> = { data: T[]; total: number };

const admin = (t: TestApp, school = NORTH) => t.token(school === NORTH ? 2 : 5, { [school]: "all" });
/** A signed-in driver: the user holds the built-in driver role in the school (what narrows their view). */
async function driver(t: TestApp, userId = DRIVER_USER) {
  await t.db.run(
    sql`INSERT OR IGNORE INTO role_user (school_id, user_id, role_id) VALUES (${NORTH}, ${userId}, ${BUILTIN_ROLES.driver.id})`,
  );
  return t.token(userId, { [NORTH]: grantsOf("driver").map((p) => p.name) });
}

async function post(t: TestApp, body: unknown, school = NORTH) {
  return t.request("/api/v1/route-student", { method: "POST", token: await admin(t, school), school, body });
}

async function assign(t: TestApp, body: { routeId: number; studentId: number; stopId?: number; weekdays: number[] }) {
  const res = await post(t, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return readJson<Rider>(res);
}

/** A route home and an active elementary student of the first school. */
async function setUp(t: TestApp, spec: Parameters<typeof makeRoute>[2] = {}) {
  const route = await makeRoute(t, NORTH, spec);
  const student = await makeRider(t, NORTH);
  const stopId = route.stops[0]?.id ?? 0;
  return { route, student, stopId };
}

describe("route students", () => {
  it("creates, reads, lists with filters, updates and deletes a rider", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    const rider = await assign(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [3, 1] });
    expect(rider).toMatchObject({
      routeId: route.id,
      studentId: student.id,
      stopId,
      student: { id: student.id, firstName: student.firstName, idNumber: student.idNumber, level: "elementary" },
      route: { id: route.id, name: route.name, direction: "home" },
      stop: { id: stopId, position: 1, time: "15:10" },
      weekdays: [1, 3],
      suspension: null,
    });
    const token = await admin(t);
    const got = await t.request(`/api/v1/route-student/${rider.id}`, { token, school: NORTH });
    expect(await readJson<Rider>(got)).toEqual(rider);

    for (const query of [
      `route=${route.id}`,
      `student=${student.id}`,
      `stop=${stopId}`,
      `route=${route.id}&weekday=3`,
      `route=${route.id}&direction=home`,
      `route=${route.id}&suspended=false`,
      `route=${route.id}&name=${student.firstName}`,
    ]) {
      const page = await readJson<Page<Rider>>(
        await t.request(`/api/v1/route-student?${query}`, { token, school: NORTH }),
      );
      expect(
        page.data.map((r) => r.id),
        query,
      ).toEqual([rider.id]);
    }
    for (const query of [
      `route=${route.id}&weekday=2`,
      `route=${route.id}&direction=to_school`,
      `route=${route.id}&suspended=true`,
    ]) {
      const page = await readJson<Page<Rider>>(
        await t.request(`/api/v1/route-student?${query}`, { token, school: NORTH }),
      );
      expect(page.total, query).toBe(0);
    }

    const second = route.stops[1]?.id ?? 0;
    const put = await t.request(`/api/v1/route-student/${rider.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { stopId: second, weekdays: [2, 4, 5] },
    });
    expect(put.status, await put.clone().text()).toBe(204);
    const after = await readJson<Rider>(await t.request(`/api/v1/route-student/${rider.id}`, { token, school: NORTH }));
    expect(after).toMatchObject({ stopId: second, weekdays: [2, 4, 5], stop: { position: 2 } });
    const days = await t.db.select().from(routeStudentDays).where(eq(routeStudentDays.routeStudentId, rider.id));
    expect(days.map((d) => d.weekday).sort()).toEqual([2, 4, 5]);

    const del = await t.request(`/api/v1/route-student/${rider.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
    expect((await t.request(`/api/v1/route-student/${rider.id}`, { token, school: NORTH })).status).toBe(404);
    expect(await t.db.select().from(routeStudentDays).where(eq(routeStudentDays.routeStudentId, rider.id))).toEqual([]);
    const audit = await t.db.select().from(auditLog).where(eq(auditLog.entity, "route-student"));
    expect(audit.filter((a) => a.recordId === rider.id).map((a) => a.action)).toEqual(["create", "update", "delete"]);
  });

  it("refuses another school's route, stop or student (404), and a stop off the route (422)", async () => {
    const t = makeTestApp();
    await enableTransport(t, SOUTH);
    const { route, student, stopId } = await setUp(t);
    const theirRoute = await makeRoute(t, SOUTH);
    const theirStudent = await makeRider(t, SOUTH);
    const other = await makeRoute(t, NORTH);
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ routeId: theirRoute.id }, 404, /Route/],
      [{ studentId: theirStudent.id }, 404, /Student/],
      [{ stopId: theirRoute.stops[0]?.id }, 404, /Stop/],
      [{ stopId: other.stops[0]?.id }, 422, /not a stop of route/],
      [{ weekdays: [6] }, 422, /does not run on Saturday/],
    ];
    for (const [change, status, detail] of cases) {
      const res = await post(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1], ...change });
      expect(res.status, JSON.stringify(change)).toBe(status);
      expect((await problem(res)).detail).toMatch(detail);
    }
    // And the other school's rider is a 404 to this one's admin.
    const theirs = await post(
      t,
      { routeId: theirRoute.id, studentId: theirStudent.id, stopId: theirRoute.stops[0]?.id, weekdays: [1] },
      SOUTH,
    );
    expect(theirs.status).toBe(201);
    const id = (await readJson<Rider>(theirs)).id;
    expect((await t.request(`/api/v1/route-student/${id}`, { token: await admin(t), school: NORTH })).status).toBe(404);
  });

  it("refuses a level the route does not serve, an inactive student (422) and a deleted one (404)", async () => {
    const t = makeTestApp();
    const route = await makeRoute(t, NORTH, { levels: ["high"] });
    const stopId = route.stops[0]?.id;
    const young = await makeRider(t, NORTH, { level: "elementary" });
    const res = await post(t, { routeId: route.id, studentId: young.id, stopId, weekdays: [1] });
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toMatch(/serves high/);
    const old = await makeRider(t, NORTH, { level: "high" });
    expect((await post(t, { routeId: route.id, studentId: old.id, stopId, weekdays: [1] })).status).toBe(201);

    const open = await makeRoute(t, NORTH);
    const inactive = await makeRider(t, NORTH, { status: "graduated" });
    const refused = await post(t, {
      routeId: open.id,
      studentId: inactive.id,
      stopId: open.stops[0]?.id,
      weekdays: [1],
    });
    expect(refused.status).toBe(422);
    expect((await problem(refused)).detail).toMatch(/graduated/);
    const gone = await makeRider(t, NORTH);
    await t.db.update(students).set({ deletedAt: "2026-11-01T00:00:00.000Z" }).where(eq(students.id, gone.id));
    expect(
      (await post(t, { routeId: open.id, studentId: gone.id, stopId: open.stops[0]?.id, weekdays: [1] })).status,
    ).toBe(404);
  });

  it("refuses bad bodies (400)", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    const base = { routeId: route.id, studentId: student.id, stopId, weekdays: [1] };
    for (const body of [
      { ...base, weekdays: [] },
      { ...base, weekdays: [1, 1] },
      { ...base, weekdays: [0] },
      { ...base, weekdays: [8] },
      { ...base, routeId: "1" },
      { ...base, schoolId: 2 },
      { routeId: route.id, studentId: student.id, weekdays: [1] },
    ]) {
      const res = await post(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      await problem(res);
    }
    const rider = await assign(t, base);
    const token = await admin(t);
    for (const body of [{}, { routeId: route.id }, { weekdays: [] }]) {
      const res = await t.request(`/api/v1/route-student/${rider.id}`, { method: "PUT", token, school: NORTH, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const body of [
      { from: "2099-01-10", until: "2099-01-09", reason: "x" },
      { from: "2099-01-10", until: "2099-01-12" },
      { from: "10/01/2099", until: "2099-01-12", reason: "x" },
    ]) {
      const res = await t.request(`/api/v1/route-student/${rider.id}/suspend`, {
        method: "PUT",
        token,
        school: NORTH,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("keeps one route per student, direction and weekday: the 409 names the route ridden", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    const first = await assign(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1, 2, 3] });
    const other = await makeRoute(t, NORTH);
    const res = await post(t, {
      routeId: other.id,
      studentId: student.id,
      stopId: other.stops[0]?.id,
      weekdays: [3, 4],
    });
    expect(res.status).toBe(409);
    const detail = (await problem(res)).detail;
    expect(detail).toContain(`${student.firstName} Rider already rides '${route.name}' (route ${route.id}`);
    expect(detail).toMatch(/on Wednesday$/);
    // The same route twice is a 409 naming the rider to change.
    const again = await post(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1, 5] });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toMatch(new RegExp(`already on this route \\(route student ${first.id}\\)`));
    // Other weekdays are free; the other direction is another ride.
    await assign(t, { routeId: other.id, studentId: student.id, stopId: other.stops[0]?.id, weekdays: [4, 5] });
    const morning = await makeRoute(t, NORTH, { direction: "to_school" });
    await assign(t, { routeId: morning.id, studentId: student.id, stopId: morning.stops[0]?.id, weekdays: [1, 2, 3] });
    // An update onto a taken weekday: 409 naming the route, nothing changed.
    const put = await t.request(`/api/v1/route-student/${first.id}`, {
      method: "PUT",
      token: await admin(t),
      school: NORTH,
      body: { weekdays: [1, 5] },
    });
    expect(put.status).toBe(409);
    expect((await problem(put)).detail).toMatch(/on Friday$/);
    const [row] = await t.db.select().from(routeStudents).where(eq(routeStudents.id, first.id));
    expect(row?.weekdays).toBe(0b111);
  });

  it("two admins assigning the same student at once: one 201, one 409, one rider", async () => {
    const t = makeTestApp();
    const a = await makeRoute(t, NORTH);
    const b = await makeRoute(t, NORTH);
    const student = await makeRider(t, NORTH);
    const results = await Promise.all([
      post(t, { routeId: a.id, studentId: student.id, stopId: a.stops[0]?.id, weekdays: [1, 2] }),
      post(t, { routeId: b.id, studentId: student.id, stopId: b.stops[0]?.id, weekdays: [2, 3] }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const rows = await t.db.select().from(routeStudents).where(eq(routeStudents.studentId, student.id));
    expect(rows).toHaveLength(1);
    const loser = results.find((r) => r.status === 409);
    expect((await problem(loser ?? results[0] ?? new Response())).detail).toMatch(/already rides .* on Tuesday$/);
  });

  it("two updates taking the same weekday for one student at once: one 204, one 409", async () => {
    const t = makeTestApp();
    const a = await makeRoute(t, NORTH);
    const b = await makeRoute(t, NORTH);
    const student = await makeRider(t, NORTH);
    const onA = await assign(t, { routeId: a.id, studentId: student.id, stopId: a.stops[0]?.id, weekdays: [1] });
    const onB = await assign(t, { routeId: b.id, studentId: student.id, stopId: b.stops[0]?.id, weekdays: [2] });
    const token = await admin(t);
    const put = (id: number, weekdays: number[]) =>
      t.request(`/api/v1/route-student/${id}`, { method: "PUT", token, school: NORTH, body: { weekdays } });
    const results = await Promise.all([put(onA.id, [1, 3]), put(onB.id, [2, 3])]);
    expect(results.map((r) => r.status).sort()).toEqual([204, 409]);
    const wednesday = await t.db.select().from(routeStudentDays).where(eq(routeStudentDays.studentId, student.id));
    expect(wednesday.filter((d) => d.weekday === 3)).toHaveLength(1);
  });

  it("suspends and cancels a suspension (audited actions)", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    const rider = await assign(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1] });
    const token = await admin(t);
    const suspend = (body: unknown) =>
      t.request(`/api/v1/route-student/${rider.id}/suspend`, { method: "PUT", token, school: NORTH, body });
    // The test clock says 2026-11-23.
    const past = await suspend({ from: "2026-11-01", until: "2026-11-20", reason: "Late" });
    expect(past.status).toBe(422);
    const res = await suspend({ from: "2026-11-23", until: "2026-12-04", reason: "Broken leg" });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await readJson<Rider>(res)).suspension).toEqual({
      from: "2026-11-23",
      until: "2026-12-04",
      reason: "Broken leg",
    });
    for (const [query, n] of [
      ["suspended=true", 1],
      ["suspendedOn=2026-12-04", 1],
      ["suspendedOn=2026-12-05", 0],
      // Mondays: 2026-11-30 suspended, 2026-12-07 back; never on a Tuesday.
      ["ridesOn=2026-11-30", 0],
      ["ridesOn=2026-12-07", 1],
      ["ridesOn=2026-12-08", 0],
    ] as const) {
      const page = await readJson<Page<Rider>>(
        await t.request(`/api/v1/route-student?route=${route.id}&${query}`, { token, school: NORTH }),
      );
      expect(page.total, query).toBe(n);
    }
    const cancel = () =>
      t.request(`/api/v1/route-student/${rider.id}/cancel-suspension`, { method: "PATCH", token, school: NORTH });
    const cancelled = await cancel();
    expect(cancelled.status).toBe(200);
    expect((await readJson<Rider>(cancelled)).suspension).toBeNull();
    const twice = await cancel();
    expect(twice.status).toBe(409);
    expect((await problem(twice)).detail).toMatch(/not suspended/);
    const actions = (await t.db.select().from(auditLog).where(eq(auditLog.recordId, rider.id)))
      .filter((a) => a.entity === "route-student")
      .map((a) => a.action);
    expect(actions).toEqual(["create", "suspend", "cancel-suspension"]);
    expect(
      (await t.request("/api/v1/route-student/987654/cancel-suspension", { method: "PATCH", token, school: NORTH }))
        .status,
    ).toBe(404);
  });

  it("deletes several riders all at once, or none (404 naming the missing)", async () => {
    const t = makeTestApp();
    const route = await makeRoute(t, NORTH);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await makeRider(t, NORTH);
      ids.push((await assign(t, { routeId: route.id, studentId: s.id, stopId: route.stops[0]?.id, weekdays: [1] })).id);
    }
    const token = await admin(t);
    const call = (body: unknown) =>
      t.request("/api/v1/route-student/delete-multiple", { method: "POST", token, school: NORTH, body });
    const refused = await call({ ids: [ids[0], 987654] });
    expect(refused.status).toBe(404);
    expect((await problem(refused)).detail).toMatch(/987654 not found; nothing was deleted/);
    expect(await t.db.select().from(routeStudents).where(eq(routeStudents.routeId, route.id))).toHaveLength(3);
    const done = await call({ ids: ids.slice(0, 2) });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ deleted: ids.slice(0, 2) });
    expect(
      (await t.db.select().from(routeStudents).where(eq(routeStudents.routeId, route.id))).map((r) => r.id),
    ).toEqual([ids[2]]);
  });

  it("lists a route's riders in stop order, in one round trip; an unknown route is a 404", async () => {
    const { t, measure } = countingTestApp();
    const route = await makeRoute(t, NORTH, { stops: 3 });
    const [s1, s2, s3] = [await makeRider(t, NORTH), await makeRider(t, NORTH), await makeRider(t, NORTH)];
    await assign(t, { routeId: route.id, studentId: s1.id, stopId: route.stops[2]?.id, weekdays: [1] });
    await assign(t, { routeId: route.id, studentId: s2.id, stopId: route.stops[0]?.id, weekdays: [1, 2] });
    await assign(t, { routeId: route.id, studentId: s3.id, stopId: route.stops[1]?.id, weekdays: [2] });
    const token = await admin(t);
    const { res: result, calls } = await measure(() =>
      t.request(`/api/v1/route-student/route?routeId=${route.id}`, { token, school: NORTH }),
    );
    expect(calls).toBe(1);
    const page = await readJson<Page<Rider>>(result);
    expect(page.data.map((r) => r.studentId)).toEqual([s2.id, s3.id, s1.id]);
    const monday = await readJson<Page<Rider>>(
      await t.request(`/api/v1/route-student/route?routeId=${route.id}&weekday=1`, { token, school: NORTH }),
    );
    expect(monday.data.map((r) => r.studentId)).toEqual([s2.id, s1.id]);
    expect((await t.request("/api/v1/route-student/route?routeId=987654", { token, school: NORTH })).status).toBe(404);
    const list = await measure(() => t.request(`/api/v1/route-student?route=${route.id}`, { token, school: NORTH }));
    expect(list.calls).toBe(1);
  });

  it("never puts more riders on a weekday than the vehicle seats, even when admins race for the last seat", async () => {
    const t = makeTestApp();
    const route = await makeRoute(t, NORTH, { seats: 3 });
    const stopId = route.stops[0]?.id;
    const riders = await Promise.all(Array.from({ length: 8 }, () => makeRider(t, NORTH)));
    await assign(t, { routeId: route.id, studentId: riders[0]?.id ?? 0, stopId, weekdays: [1, 2] });
    await assign(t, { routeId: route.id, studentId: riders[1]?.id ?? 0, stopId, weekdays: [1] });
    // One seat left on Monday, two on Tuesday: five admins at once for Monday, one wins.
    const race = await Promise.all(
      riders.slice(2, 7).map((r) => post(t, { routeId: route.id, studentId: r.id, stopId, weekdays: [1] })),
    );
    expect(race.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
    const refused = race.find((r) => r.status === 422);
    if (!refused) throw new Error("no refusal");
    expect((await problem(refused)).detail).toBe(
      `Route '${route.name}' has no seat left on Monday: its vehicle seats 3`,
    );
    const monday = await t.db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM route_student WHERE route_id = ${route.id} AND (weekdays & 1) = 1`,
    );
    expect(monday[0]?.n).toBe(3);
    // Tuesday still has seats; moving a Tuesday rider onto Monday is refused the same way, and changes nothing.
    const tuesday = await assign(t, { routeId: route.id, studentId: riders[7]?.id ?? 0, stopId, weekdays: [2] });
    const moved = await t.request(`/api/v1/route-student/${tuesday.id}`, {
      method: "PUT",
      token: await admin(t),
      school: NORTH,
      body: { weekdays: [1, 2] },
    });
    expect(moved.status).toBe(422);
    expect((await problem(moved)).detail).toContain("no seat left on Monday");
    const after = await readJson<Rider>(
      await t.request(`/api/v1/route-student/${tuesday.id}`, { token: await admin(t), school: NORTH }),
    );
    expect(after.weekdays).toEqual([2]);
  });

  it("shows a driver only the riders of the routes they drive", async () => {
    const t = makeTestApp();
    const mine = await makeRoute(t, NORTH, { driverUserId: DRIVER_USER });
    const theirs = await makeRoute(t, NORTH);
    const a = await makeRider(t, NORTH);
    const b = await makeRider(t, NORTH);
    const ride = await assign(t, { routeId: mine.id, studentId: a.id, stopId: mine.stops[0]?.id, weekdays: [1] });
    const other = await assign(t, { routeId: theirs.id, studentId: b.id, stopId: theirs.stops[0]?.id, weekdays: [1] });
    const token = await driver(t);
    const page = await readJson<Page<Rider>>(
      await t.request("/api/v1/route-student?pageSize=100", { token, school: NORTH }),
    );
    expect(page.data.map((r) => r.id)).toEqual([ride.id]);
    expect((await t.request(`/api/v1/route-student/${ride.id}`, { token, school: NORTH })).status).toBe(200);
    expect((await t.request(`/api/v1/route-student/${other.id}`, { token, school: NORTH })).status).toBe(404);
    expect((await t.request(`/api/v1/route-student/route?routeId=${mine.id}`, { token, school: NORTH })).status).toBe(
      200,
    );
    expect((await t.request(`/api/v1/route-student/route?routeId=${theirs.id}`, { token, school: NORTH })).status).toBe(
      404,
    );
    const file = await t.request("/api/v1/route-student/export", { token, school: NORTH });
    expect(file.status).toBe(200);
    const rows = readXlsx(new Uint8Array(await file.arrayBuffer()));
    expect(rows.slice(1).map((r) => r[1])).toEqual([mine.name]);
    // Reading only: a driver writes nothing.
    const write = await t.request(`/api/v1/route-student/${ride.id}`, { method: "DELETE", token, school: NORTH });
    expect(write.status).toBe(403);
    // Another driver sees none of these.
    const stranger = await driver(t, 4);
    const none = await readJson<Page<Rider>>(
      await t.request("/api/v1/route-student", { token: stranger, school: NORTH }),
    );
    expect(none.total).toBe(0);
  });

  it("exports the riders to Excel with the list's filters", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    const rider = await assign(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1, 3] });
    const res = await t.request(`/api/v1/route-student/export?route=${route.id}`, {
      token: await admin(t),
      school: NORTH,
    });
    expect(res.status).toBe(200);
    const rows = readXlsx(new Uint8Array(await res.arrayBuffer()));
    expect(rows[0]).toEqual([
      "Id",
      "Route",
      "Direction",
      "Stop",
      "Stop time",
      "Student id number",
      "Student",
      "Level",
      "Weekdays",
      "Suspended from",
      "Suspended until",
      "Suspension reason",
    ]);
    expect(rows.slice(1).map((r) => r.slice(0, 9))).toEqual([
      [
        rider.id,
        route.name,
        "home",
        route.stops[0]?.name,
        "15:10",
        student.idNumber,
        `${student.firstName} Rider`,
        "elementary",
        "Mon, Wed",
      ],
    ]);
  });

  it("answers 403 naming the module where transport is disabled", async () => {
    const t = makeTestApp();
    await enableTransport(t, SOUTH, false);
    // A super-admin's school lookup reads the school's modules (a member's token carries them).
    const res = await t.request("/api/v1/route-student", { token: await t.token(1, {}, true), school: SOUTH });
    expect(res.status).toBe(403);
    expect((await problem(res)).detail).toMatch(/transport/i);
  });

  it("filters the student list by route", async () => {
    const t = makeTestApp();
    const { route, student, stopId } = await setUp(t);
    await makeRider(t, NORTH);
    await assign(t, { routeId: route.id, studentId: student.id, stopId, weekdays: [1] });
    const page = await readJson<Page<{ id: number }>>(
      await t.request(`/api/v1/student?route=${route.id}`, { token: await admin(t), school: NORTH }),
    );
    expect(page.data.map((s) => s.id)).toEqual([student.id]);
  });
});
