/**
 * Exit permissions through the API: asking (each kind, the dry-run), every failed rule in one 422,
 * the parent's view, confirm with seats (a race for the last seats), supersession, the family's
 * answer, change and cancel, withdrawal giving the seat back.
 */
import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { students } from "../src/db/schema/student";
import { routeAvailabilities, routeAvailabilityStudents } from "../src/db/schema/transport";
import { readJson } from "./fixture-kit";
import { type Family, fixedAutoPickup, makeFamily, parentToken, schoolDate } from "./fixtures/modules/exit-permission";
import { makeRoute, makeStudents } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, makeTestApp, setModule, type TestApp } from "./helpers";

const NORTH = 1;
const P = "/api/v1/exit-permission";
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

type Permission = {
  id: number;
  status: string;
  studentId: number;
  routeId: number | null;
  supersededBy: number | null;
};
type Problem = {
  status: number;
  failures?: { code: string; message: string; [k: string]: unknown }[];
  errors?: unknown[];
};

async function ask(path: string, body: object, token: string, headers: Record<string, string> = {}) {
  return t.request(`${P}${path}`, { method: "POST", token, school: NORTH, body, headers });
}

/** Students made by the transport fixtures have no level: they get one with a schedule. */
const withLevels = (app: TestApp) => app.db.update(students).set({ level: "elementary" }).where(isNull(students.level));

async function confirm(id: number, status = "confirmed") {
  return t.request(`${P}/${id}/confirm`, { method: "PATCH", token: await admin(), school: NORTH, body: { status } });
}

async function seatsOf(routeId: number, date: string) {
  const res = await t.request(`/api/v1/route-availability/route/${routeId}?date=${date}`, {
    token: await admin(),
    school: NORTH,
  });
  const range = await readJson<{ days: { day: { seats: number; riders: number; available: number } }[] }>(res);
  const day = range.days[0]?.day;
  if (!day) throw new Error(`no day: ${JSON.stringify(range)}`);
  return day;
}

/** Switches automatic confirmation for every school year of `school` covering `date`. */
async function autoConfirm(app: TestApp, on: boolean, date: string) {
  await app.db.delete(schoolConfigurations).where(eq(schoolConfigurations.schoolId, NORTH));
  await app.db.insert(schoolConfigurations).values({
    schoolId: NORTH,
    name: "Test year",
    startDate: "2026-08-01",
    endDate: "2027-07-31",
    autoConfirmExitPermissions: on,
  });
  return date;
}

describe("asking", () => {
  it("lets a parent ask for their child, and hides another family's child (404)", async () => {
    const family = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    const date = schoolDate(t);
    const res = await ask("/absence", { studentId: family.studentId, date, reason: "Fever" }, token);
    expect(res.status, await res.clone().text()).toBe(201);
    const created = await readJson<Permission & { warnings: unknown[]; deadline: string }>(res);
    expect(created).toMatchObject({ status: "pending", kind: "absence", parentId: family.parentId });
    expect(created.deadline).toMatch(/-06:00$/);

    const theirs = await ask("/absence", { studentId: other.studentId, date }, token);
    expect(theirs.status).toBe(404);

    const list = await t.request(`${P}?studentId=${other.studentId}`, { token, school: NORTH });
    expect((await readJson<{ total: number }>(list)).total).toBe(0);
    const mine = await t.request(P, { token, school: NORTH });
    const page = await readJson<{ data: Permission[] }>(mine);
    expect(page.data.map((p) => p.id)).toEqual([created.id]);
    const byType = await t.request(`${P}/type?kind=absence`, { token, school: NORTH });
    expect((await readJson<{ total: number }>(byType)).total).toBe(1);
  });

  it("answers every failed rule in one 422, in the caller's language", async () => {
    const family = await makeFamily(t, NORTH, { canRequestChanges: false });
    const token = await parentToken(t, family, NORTH);
    // A Saturday well beyond four weeks.
    const res = await ask("/absence", { studentId: family.studentId, date: "2027-06-05" }, token, {
      "accept-language": "es-MX,es;q=0.9",
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = await readJson<Problem>(res);
    const codes = problem.failures?.map((f) => f.code).sort();
    expect(codes).toEqual(["may-not-ask", "not-school-day", "too-far"]);
    expect(problem.failures?.find((f) => f.code === "not-school-day")).toMatchObject({ reason: "weekend" });
    expect(problem.failures?.find((f) => f.code === "too-far")?.message).toContain("demasiado");

    // Not a calendar date: a 400 on the field before the rules run (as a date out of range is).
    const invalid = await ask("/absence", { studentId: family.studentId, date: "2027-02-30" }, token);
    expect(invalid.status).toBe(400);
    expect((await readJson<{ errors: { path: string }[] }>(invalid)).errors.map((e) => e.path)).toEqual(["date"]);
  });

  it("refuses too late for parents and records it with a warning for staff", async () => {
    const family = await makeFamily(t, NORTH);
    // The test clock's own day (Monday 2026-11-23, 09:00 in Mexico City) after dismissal (14:30).
    const app = makeTestApp();
    app.clock.current = new Date("2026-11-23T21:00:00.000Z");
    const late = await app.request(`${P}/absence`, {
      method: "POST",
      token: await parentToken(app, family, NORTH),
      school: NORTH,
      body: { studentId: family.studentId, date: "2026-11-23" },
    });
    expect(late.status).toBe(422);
    const failure = (await readJson<Problem>(late)).failures?.[0];
    expect(failure).toMatchObject({ code: "too-late", deadline: "2026-11-23T14:30:00-06:00", dismissal: "14:30" });
    const staff = await app.request(`${P}/absence`, {
      method: "POST",
      token: await app.token(DEMO.northAdmin.id, { [NORTH]: "all" }),
      school: NORTH,
      body: { studentId: family.studentId, date: "2026-11-23" },
    });
    expect(staff.status).toBe(201);
    expect((await readJson<{ warnings: { code: string }[] }>(staff)).warnings.map((w) => w.code)).toEqual(["too-late"]);
  });

  it("answers the dry-run's verdict with 200 and writes nothing", async () => {
    const family = await makeFamily(t, NORTH);
    const body = { kind: "no_after_school", studentId: family.studentId, date: schoolDate(t) };
    const res = await ask("/dry-run", body, await parentToken(t, family, NORTH));
    expect(res.status).toBe(200);
    expect(await readJson<{ ok: boolean; failures: unknown[] }>(res)).toMatchObject({ ok: true, failures: [] });
    const rows = await t.db.select().from(exitPermissions).where(eq(exitPermissions.studentId, family.studentId));
    expect(rows).toHaveLength(0);
  });

  it("refuses an auto pickup by a guardian who may not pick up, and a foreign trusted person", async () => {
    const family = await makeFamily(t, NORTH, { canPickUp: false });
    const res = await ask(
      "/auto-pickup",
      { studentId: family.studentId, date: schoolDate(t) },
      await parentToken(t, family, NORTH),
    );
    expect(res.status).toBe(422);
    expect((await readJson<Problem>(res)).failures?.[0]).toMatchObject({
      code: "pickup-not-allowed",
      reason: "may not pick up",
    });
  });
});

describe("route changes and seats", () => {
  it("confirming takes the seat and makes the child away from their own route; a later one supersedes it", async () => {
    const home = await makeRoute(t, NORTH, { seats: 5, riders: [["Rita", "Rider"]] });
    const other = await makeRoute(t, NORTH, { seats: 2 });
    await withLevels(t);
    const [studentId] = home.studentIds;
    if (studentId === undefined) throw new Error("no rider");
    const family: Family = await makeFamily(t, NORTH, { studentId });
    const date = schoolDate(t);
    const token = await parentToken(t, family, NORTH);
    const res = await ask(
      "/route-change",
      { studentId, date, routeId: other.routeId, stopId: other.stopIds[1] },
      token,
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const first = await readJson<Permission>(res);
    const confirmed = await confirm(first.id);
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    expect((await seatsOf(other.routeId, date)).available).toBe(1);
    expect((await seatsOf(home.routeId, date)).riders).toBe(0);
    const again = await confirm(first.id);
    expect(again.status).toBe(409);

    const absent = await readJson<Permission>(await ask("/absence", { studentId, date }, token));
    expect((await confirm(absent.id)).status).toBe(200);
    const [earlier] = await t.db.select().from(exitPermissions).where(eq(exitPermissions.id, first.id));
    expect(earlier).toMatchObject({ status: "superseded", supersededBy: absent.id });
    expect((await seatsOf(other.routeId, date)).available).toBe(2);
    expect((await seatsOf(home.routeId, date)).riders).toBe(0);
    const changes = await t.db
      .select()
      .from(routeAvailabilityStudents)
      .where(eq(routeAvailabilityStudents.studentId, studentId));
    expect(changes.map((c) => [c.kind, c.exitPermissionId])).toEqual([["away", absent.id]]);

    // Staff withdraw the confirmed absence: the child rides home again.
    const withdrawn = await t.request(`${P}/${absent.id}`, { method: "DELETE", token: await admin(), school: NORTH });
    expect(withdrawn.status).toBe(204);
    expect((await seatsOf(home.routeId, date)).riders).toBe(1);
  });

  it("gives exactly the free seats to 20 families at once when the school confirms automatically", async () => {
    const app = makeTestApp();
    const date = await autoConfirm(app, true, schoolDate(app, 3));
    try {
      const route = await makeRoute(app, NORTH, { seats: 3 });
      const families = await Promise.all(Array.from({ length: 20 }, () => makeFamily(app, NORTH)));
      const answers = await Promise.all(
        families.map(async (f) =>
          app.request(`${P}/route-change`, {
            method: "POST",
            token: await parentToken(app, f, NORTH),
            school: NORTH,
            body: { studentId: f.studentId, date, routeId: route.routeId, stopId: route.stopIds[0] },
          }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(3);
      expect(statuses.filter((s) => s === 422)).toHaveLength(17);
      for (const r of answers.filter((a) => a.status === 422)) {
        expect((await readJson<Problem>(r)).failures?.map((f) => f.code)).toEqual(["no-seat"]);
      }
      const [day] = await app.db
        .select()
        .from(routeAvailabilities)
        .where(and(eq(routeAvailabilities.routeId, route.routeId), eq(routeAvailabilities.date, date)));
      expect(day?.taken).toBe(3);
    } finally {
      await autoConfirm(app, false, date);
    }
  });

  it("gives exactly the free seats to 20 concurrent staff confirmations", async () => {
    const route = await makeRoute(t, NORTH, { seats: 3 });
    const date = schoolDate(t, 4);
    const ids = await makeStudents(
      t,
      NORTH,
      Array.from({ length: 20 }, (_, i) => [`Kid${i}`, "Race"] as [string, string]),
    );
    await withLevels(t);
    const token = await admin();
    const asked = await Promise.all(
      ids.map(async (studentId) =>
        readJson<Permission>(
          await ask("/route-change", { studentId, date, routeId: route.routeId, stopId: route.stopIds[0] }, token),
        ),
      ),
    );
    const answers = await Promise.all(asked.map((p) => confirm(p.id)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 422)).toHaveLength(17);
    expect((await seatsOf(route.routeId, date)).available).toBe(0);
  });

  it("two reviewers deciding one permission at once: one wins, the others get 409, one seat taken", async () => {
    const route = await makeRoute(t, NORTH, { seats: 3 });
    const date = schoolDate(t, 5);
    const [studentId] = await makeStudents(t, NORTH, [["Dos", "Revisores"]]);
    if (studentId === undefined) throw new Error("no student");
    await withLevels(t);
    const asked = await readJson<Permission>(
      await ask("/route-change", { studentId, date, routeId: route.routeId, stopId: route.stopIds[0] }, await admin()),
    );
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, () => confirm(asked.id)),
      confirm(asked.id, "rejected"),
    ]);
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(4);
    const [row] = await t.db.select().from(exitPermissions).where(eq(exitPermissions.id, asked.id));
    const won = statuses.indexOf(200) === 4 ? "rejected" : "confirmed";
    expect(row?.status).toBe(won);
    expect((await seatsOf(route.routeId, date)).available).toBe(won === "confirmed" ? 2 : 3);
  });
});

describe("the family's answer", () => {
  it("waits for the child's family when a parent collects another family's child", async () => {
    const child = await makeFamily(t, NORTH);
    const friend = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const res = await ask("/auto-pickup", { studentId: child.studentId, date }, await parentToken(t, friend, NORTH));
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission>(res);
    expect(asked.status).toBe("awaiting_family");
    const byCollector = await t.request(`${P}/${asked.id}/respond`, {
      method: "POST",
      token: await parentToken(t, friend, NORTH),
      school: NORTH,
      body: { accept: true },
    });
    expect(byCollector.status).toBe(403);
    const accepted = await t.request(`${P}/${asked.id}/respond`, {
      method: "POST",
      token: await parentToken(t, child, NORTH),
      school: NORTH,
      body: { accept: true },
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect((await readJson<Permission>(accepted)).status).toBe("pending");
  });
});

describe("change and cancel", () => {
  it("lets the asker change and cancel while pending, and refuses once decided", async () => {
    const family = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    const created = await readJson<Permission>(
      await ask("/absence", { studentId: family.studentId, date: schoolDate(t) }, token),
    );
    const put = await t.request(`${P}/${created.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { reason: "Dentist" },
    });
    expect(put.status, await put.clone().text()).toBe(204);
    const del = await t.request(`${P}/${created.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
    const again = await t.request(`${P}/${created.id}`, { method: "PUT", token, school: NORTH, body: { reason: "x" } });
    expect(again.status).toBe(409);
  });
});

describe("the school day", () => {
  it("tells a school day, an early release and its deadline, and a weekend", async () => {
    const token = await admin();
    const get = async (q: string) => {
      const res = await t.request(`/api/v1/school-schedule/day?${q}`, { token, school: NORTH });
      expect(res.status, await res.clone().text()).toBe(200);
      return readJson<Record<string, unknown>>(res);
    };
    expect(await get("date=2026-11-27&level=elementary")).toMatchObject({
      schoolDay: true,
      reason: null,
      dismissal: "13:00",
      usualDismissal: "14:30",
      earlyRelease: true,
      deadline: "2026-11-27T13:00:00-06:00",
    });
    expect(await get("date=2026-11-28&level=elementary")).toMatchObject({ schoolDay: false, reason: "weekend" });
    const bad = await t.request("/api/v1/school-schedule/day?date=2026-02-30&level=elementary", {
      token,
      school: NORTH,
    });
    expect(bad.status).toBe(400);
  });
});

describe("fixed permissions", () => {
  it("makes the days ahead once, and cancels the future ones when deleted", async () => {
    const family = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    const from = schoolDate(t);
    const res = await ask(
      "/fixed/auto-pickup",
      { studentId: family.studentId, weekdays: [1, 3], fromDate: from, untilDate: "2027-06-30" },
      token,
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const fixed = await readJson<{ id: number; generatedUntil: string | null; weekdays: number[] }>(res);
    expect(fixed.weekdays).toEqual([1, 3]);
    expect(fixed.generatedUntil).not.toBeNull();
    const generated = async () => {
      const list = await t.request(`${P}/fixed/generated?fixedId=${fixed.id}`, { token, school: NORTH });
      expect(list.status).toBe(200);
      return readJson<{ id: number; date: string; status: string }[]>(list);
    };
    const made = await generated();
    // Mondays and Wednesdays from the first date, four weeks ahead of the school's today.
    expect(made.length).toBeGreaterThanOrEqual(6);
    expect(made.every((p) => p.status === "pending")).toBe(true);

    const { generateFixedExitPermissions } = await import("../src/modules/exit-permission/fixed");
    await generateFixedExitPermissions(t.deps);
    expect((await generated()).length).toBe(made.length);

    const gone = await t.request(`${P}/fixed/auto-pickup/${fixed.id}`, { method: "DELETE", token, school: NORTH });
    expect(gone.status).toBe(204);
    const after = await t.db.select().from(exitPermissions).where(eq(exitPermissions.studentId, family.studentId));
    expect(after.length).toBe(made.length);
    expect(after.every((p) => p.status === "cancelled")).toBe(true);
  });
});

describe("fixed permissions where the school has exit permissions switched off", () => {
  it("the daily job makes no days ahead for it until they are on again", async () => {
    const own = makeTestApp();
    const { days: made } = await fixedAutoPickup(own, NORTH);
    const before = await made();
    expect(before).toBeGreaterThan(0);
    // Two weeks on, the job would make two more weeks of days.
    own.clock.advance(14 * 86_400);
    const { generateFixedExitPermissions } = await import("../src/modules/exit-permission/fixed");
    await setModule(own, NORTH, "exit-permissions", false);
    try {
      await generateFixedExitPermissions(own.deps);
      expect(await made()).toBe(before);
    } finally {
      await setModule(own, NORTH, "exit-permissions", true);
    }
    await generateFixedExitPermissions(own.deps);
    expect(await made()).toBeGreaterThan(before);
  });
});

describe("round trips", () => {
  it("asks in two D1 round trips (the snapshot, then one batch), a parent too", async () => {
    const { t: counted, measure } = countingTestApp();
    const family = await makeFamily(counted, NORTH);
    const token = await parentToken(counted, family, NORTH);
    const { res, calls } = await measure(() =>
      counted.request(`${P}/absence`, {
        method: "POST",
        token,
        school: NORTH,
        body: { studentId: family.studentId, date: schoolDate(counted) },
      }),
    );
    expect(res.status, await res.clone().text()).toBe(201);
    expect(calls).toBe(2);
  });
});

describe("other schools and holidays", () => {
  it("answers 404 for another school's route and 422 not-school-day on a holiday", async () => {
    const family = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    const south = await makeRoute(t, 2);
    const date = schoolDate(t, 9);
    const foreign = await ask(
      "/route-change",
      { studentId: family.studentId, date, routeId: south.routeId, stopId: south.stopIds[0] },
      token,
    );
    expect(foreign.status).toBe(404);

    const [year] = await t.db
      .insert(schoolConfigurations)
      .values({ schoolId: NORTH, name: "Holiday year", startDate: "2026-08-01", endDate: "2027-07-31" })
      .returning({ id: schoolConfigurations.id });
    if (!year) throw new Error("no year");
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: year.id,
      startHolidays: `${date}T06:00:00.000Z`,
      endHolidays: `${date}T23:00:00.000Z`,
    });
    const res = await ask("/absence", { studentId: family.studentId, date }, token);
    expect(res.status).toBe(422);
    expect((await readJson<Problem>(res)).failures?.[0]).toMatchObject({ code: "not-school-day", reason: "holiday" });
  });
});
