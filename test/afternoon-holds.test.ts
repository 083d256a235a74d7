/**
 * The afternoon holds: a decision stays true when the facts change (issue 30). Each transition
 * decides again, as the one who causes it (confirm, edit, the family's acceptance, the fixed
 * permission's days as its asker), and who may learn a child's name is the child's family, their
 * delegates, staff, and a family whose request the child's family accepted.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { notifications } from "../src/db/schema/notification";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { schoolSchedules } from "../src/db/schema/school-schedule";
import { guardians, students } from "../src/db/schema/student";
import { routeAvailabilities, routeStudents, routes, transports } from "../src/db/schema/transport";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { withSearch } from "../src/db/search";
import { readJson } from "./fixture-kit";
import { addRiderDays, makeGroup } from "./fixtures/afternoon";
import { type Family, makeFamily, parentToken, schoolDate } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp, type TestApp } from "./helpers";

const NORTH = 1;
const P = "/api/v1/exit-permission";
const t = makeTestApp();
const office = (app: TestApp = t) => app.token(DEMO.northAdmin.id, { [NORTH]: "all" });

type Permission = {
  id: number;
  status: string;
  studentId: number;
  studentName: string | null;
  parentId: number | null;
  fixedId: number | null;
  failures: { code: string; message: string }[] | null;
  acceptedAt?: string | null;
};
type Problem = { status: number; failures?: { code: string; [k: string]: unknown }[] };
type SummaryRow = {
  studentId: number;
  way: string;
  permission: { id: number; collector: { kind: string; name: string } | null } | null;
};

const call = async (app: TestApp, method: string, path: string, token: string, body?: unknown) =>
  app.request(path, { method, token, school: NORTH, body });

/** A child who rides a bus home, their father as guardian, in a group of their own (for the summary). */
async function riderFamily(app: TestApp = t) {
  const route = await makeRoute(app, NORTH, { seats: 5, riders: [["Nico", "Holds"]] });
  const [studentId] = route.studentIds;
  if (studentId === undefined) throw new Error("no rider");
  await app.db.update(students).set({ level: "elementary" }).where(eq(students.id, studentId));
  await addRiderDays(app, route.routeId);
  const father = await makeFamily(app, NORTH, { studentId });
  const group = await makeGroup(app, NORTH, [studentId]);
  const [link] = await app.db
    .select({ id: guardians.id })
    .from(guardians)
    .where(and(eq(guardians.studentId, studentId), eq(guardians.parentId, father.parentId)));
  if (!link) throw new Error("no guardian link");
  return { route, studentId, father, group, linkId: link.id };
}

async function summaryRow(app: TestApp, group: number, date: string, studentId: number) {
  const res = await app.request(`/api/v1/transportation-summary?date=${date}&group=${group}`, {
    token: await office(app),
    school: NORTH,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const page = await readJson<{ data: SummaryRow[] }>(res);
  return page.data.find((r) => r.studentId === studentId);
}

async function finalStatus(app: TestApp, routeId: number, date: string, studentId: number) {
  const res = await app.request(`/api/v1/route-availability-student/route/${routeId}/final-status?date=${date}`, {
    token: await office(app),
    school: NORTH,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const list = await readJson<{ students: { studentId: number; status: string }[] }>(res);
  return list.students.find((s) => s.studentId === studentId)?.status;
}

const permissionRow = async (app: TestApp, id: number) =>
  (await app.db.select().from(exitPermissions).where(eq(exitPermissions.id, id)))[0];

async function askPickup(app: TestApp, family: Family, studentId: number, date: string) {
  const res = await call(app, "POST", `${P}/auto-pickup`, await parentToken(app, family, NORTH), { studentId, date });
  expect(res.status, await res.clone().text()).toBe(201);
  return readJson<Permission>(res);
}

const confirm = async (app: TestApp, id: number) =>
  call(app, "PATCH", `${P}/${id}/confirm`, await office(app), { status: "confirmed" });

const restrict = async (app: TestApp, linkId: number) =>
  call(app, "PATCH", `/api/v1/student-guardian/${linkId}/restriction`, await office(app), {
    restricted: true,
    reason: "Court order 2026/118",
  });

/** Each family's child joins the bus on `date`, confirmed a minute apart (the earliest first): the permissions' ids. */
async function joinedOneByOne(families: readonly Family[], bus: { routeId: number; stopIds: number[] }, date: string) {
  const ids: number[] = [];
  for (const f of families) {
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, f, NORTH), {
      studentId: f.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    const asked = await readJson<Permission>(res);
    t.clock.advance(60);
    expect((await confirm(t, asked.id)).status).toBe(200);
    ids.push(asked.id);
  }
  return ids;
}

describe("finding 1: a restriction leaves no pickup of the restricted guardian standing", () => {
  it("a pending pickup: the restriction withdraws it, and confirming it is refused", async () => {
    const { studentId, father, linkId } = await riderFamily();
    const date = schoolDate(t);
    const asked = await askPickup(t, father, studentId, date);
    expect(asked.status).toBe("pending");
    const restricted = await restrict(t, linkId);
    expect(restricted.status, await restricted.clone().text()).toBe(200);
    const confirmed = await confirm(t, asked.id);
    expect(confirmed.status, await confirmed.clone().text()).toBe(409);
    const row = await permissionRow(t, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.map((f) => f.code)).toEqual(["pickup-not-allowed", "may-not-ask"]);
    expect(row?.failures?.[0]).toMatchObject({
      message: `Parent ${father.parentId} may not pick the student up on ${schoolDate(t)}: restricted`,
      date: schoolDate(t),
      pickupParentId: father.parentId,
      reason: "restricted",
    });
    expect(row?.failures?.[1]).toMatchObject({
      message: "You may not ask changes for this student: restricted by the school",
    });
  });

  it("a confirmed pickup: the summary, the driver's list and the pass no longer show it", async () => {
    const { route, studentId, father, group, linkId } = await riderFamily();
    const date = schoolDate(t);
    const asked = await askPickup(t, father, studentId, date);
    expect((await confirm(t, asked.id)).status).toBe(200);
    const before = await summaryRow(t, group, date, studentId);
    expect(before).toMatchObject({ way: "auto_pickup", permission: { collector: { kind: "guardian" } } });
    expect(await finalStatus(t, route.routeId, date, studentId)).toBe("away");

    expect((await restrict(t, linkId)).status).toBe(200);
    const after = await summaryRow(t, group, date, studentId);
    expect(after).toMatchObject({ way: "route", permission: null });
    expect(await finalStatus(t, route.routeId, date, studentId)).toBe("riding");
    const slug = (await permissionRow(t, asked.id))?.slug ?? "";
    expect((await t.request(`${P}/public?slug=${slug}`)).status).toBe(404);
  });

  it("confirming runs the rules again: a restriction made behind the API's back still refuses it (422)", async () => {
    const { studentId, father, linkId } = await riderFamily();
    const asked = await askPickup(t, father, studentId, schoolDate(t));
    await t.db
      .update(guardians)
      .set({ restricted: true, restrictionReason: "Court order" })
      .where(eq(guardians.id, linkId));
    const res = await confirm(t, asked.id);
    expect(res.status, await res.clone().text()).toBe(422);
    expect((await readJson<Problem>(res)).failures?.map((f) => f.code)).toContain("pickup-not-allowed");
    expect((await permissionRow(t, asked.id))?.status).toBe("pending");
  });
});

describe("finding 2: a guardian removed from the child no longer steers their pickup", () => {
  it("removal withdraws the pickup; his change of date is then a 409", async () => {
    const { studentId, father, linkId } = await riderFamily();
    const asked = await askPickup(t, father, studentId, schoolDate(t));
    const removed = await call(t, "DELETE", `/api/v1/student-guardian/${linkId}`, await office());
    expect(removed.status, await removed.clone().text()).toBe(204);
    const moved = await call(t, "PUT", `${P}/${asked.id}`, await parentToken(t, father, NORTH), {
      date: schoolDate(t, 3),
    });
    expect(moved.status, await moved.clone().text()).toBe(409);
    expect((await permissionRow(t, asked.id))?.status).toBe("withdrawn");
  });
});

describe("finding 3: a change of a play date asks the other family again", () => {
  it("the collector moves the date: the family's acceptance is cleared and the request awaits them again", async () => {
    const child = await makeFamily(t, NORTH);
    const friend = await makeFamily(t, NORTH);
    const asked = await askPickup(t, friend, child.studentId, schoolDate(t));
    expect(asked.status).toBe("awaiting_family");
    const accepted = await call(t, "POST", `${P}/${asked.id}/respond`, await parentToken(t, child, NORTH), {
      accept: true,
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect((await readJson<Permission>(accepted)).status).toBe("pending");
    const moved = await call(t, "PUT", `${P}/${asked.id}`, await parentToken(t, friend, NORTH), {
      date: schoolDate(t, 3),
    });
    expect(moved.status, await moved.clone().text()).toBe(204);
    const row = await permissionRow(t, asked.id);
    expect(row).toMatchObject({ status: "awaiting_family", acceptedAt: null, date: schoolDate(t, 3) });
  });
});

describe("finding 4: who may learn a child's name", () => {
  it("a request to collect another family's child answers without the child's name until that family accepts", async () => {
    const child = await makeFamily(t, NORTH);
    const friend = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    // The child's family has their own plans that day.
    const own = await call(t, "POST", `${P}/absence`, await parentToken(t, child, NORTH), {
      studentId: child.studentId,
      date,
      reason: "Dentist",
    });
    expect(own.status).toBe(201);
    const friendToken = await parentToken(t, friend, NORTH);
    const dry = await call(t, "POST", `${P}/dry-run`, friendToken, {
      kind: "auto_pickup",
      studentId: child.studentId,
      date,
    });
    expect(dry.status).toBe(200);
    expect((await readJson<{ others: unknown[] }>(dry)).others).toEqual([]);
    const asked = await askPickup(t, friend, child.studentId, date);
    expect(asked.studentName).toBeNull();
    const read = await call(t, "GET", `${P}/${asked.id}`, friendToken);
    expect((await readJson<Permission>(read)).studentName).toBeNull();
    // The child's family sees their child's name, and their own plans in the dry-run.
    const childToken = await parentToken(t, child, NORTH);
    expect((await readJson<Permission>(await call(t, "GET", `${P}/${asked.id}`, childToken))).studentName).toBeTruthy();
    const theirs = await call(t, "POST", `${P}/dry-run`, childToken, {
      kind: "no_after_school",
      studentId: child.studentId,
      date,
    });
    expect((await readJson<{ others: unknown[] }>(theirs)).others).toHaveLength(2);
    // Accepted: the collector learns whom they collect.
    await call(t, "POST", `${P}/${asked.id}/respond`, childToken, { accept: true });
    expect(
      (await readJson<Permission>(await call(t, "GET", `${P}/${asked.id}`, friendToken))).studentName,
    ).toBeTruthy();
  });
});

describe("finding 5: the days of a fixed permission are decided as its asker, never as the school", () => {
  it("a one-day fixed pickup asked after the deadline waits for the office with its reason, in the parent's name", async () => {
    const app = makeTestApp();
    // Monday 23 November 2026, 15:00 in Mexico City: after the day's 14:30 dismissal.
    app.clock.current = new Date("2026-11-23T21:00:00.000Z");
    const family = await makeFamily(app, NORTH);
    const res = await call(app, "POST", `${P}/fixed/auto-pickup`, await parentToken(app, family, NORTH), {
      studentId: family.studentId,
      weekdays: [1],
      fromDate: "2026-11-23",
      untilDate: "2026-11-23",
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const fixed = await readJson<{ id: number }>(res);
    const days = await app.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed.id));
    expect(days).toHaveLength(1);
    expect(days[0]).toMatchObject({ status: "needs_review", parentId: family.parentId, askedAs: "guardian" });
    expect(days[0]?.failures?.map((f) => f.code)).toEqual(["too-late"]);
    // It waits for the office in the day's pending list, with its reason.
    const pending = await app.request("/api/v1/transportation-summary/pending?date=2026-11-23&pageSize=100", {
      token: await office(app),
      school: NORTH,
    });
    const waiting = await readJson<{ data: { id: number; status: string; failures: { code: string }[] | null }[] }>(
      pending,
    );
    expect(waiting.data.find((p) => p.id === days[0]?.id)).toMatchObject({
      status: "needs_review",
      failures: [{ code: "too-late" }],
    });
    // The office may pass the deadline: confirming runs the rules as the school, and it holds.
    expect((await confirm(app, days[0]?.id ?? 0)).status).toBe(200);
  });
});

describe("finding 10: a fixed permission's lineage", () => {
  it("deleting a fixed permission keeps its days listed under it", async () => {
    const family = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    const res = await call(t, "POST", `${P}/fixed/auto-pickup`, token, {
      studentId: family.studentId,
      weekdays: [1, 2, 3, 4, 5],
      fromDate: schoolDate(t),
      untilDate: "2027-06-30",
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { id } = await readJson<{ id: number }>(res);
    const gone = await call(t, "DELETE", `${P}/fixed/auto-pickup/${id}`, token);
    expect(gone.status).toBe(204);
    const listed = await call(t, "GET", `${P}/fixed/generated?fixedId=${id}`, token);
    expect(listed.status, await listed.clone().text()).toBe(200);
    const days = await readJson<Permission[]>(listed);
    expect(days.length).toBeGreaterThan(0);
    expect(days.every((d) => d.fixedId === id && d.status === "cancelled")).toBe(true);
    // The fixed permission itself is gone from its own list.
    const fixedList = await readJson<{ data: { id: number }[] }>(
      await call(t, "GET", `${P}/fixed/auto-pickup?pageSize=100`, token),
    );
    expect(fixedList.data.map((f) => f.id)).not.toContain(id);
  });
});

describe("every change of a fact decides again what stood on it", () => {
  /** A rider's confirmed pickup by their father, shown by the summary and the driver's list. */
  async function confirmedPickup(app: TestApp = t) {
    const family = await riderFamily(app);
    const date = schoolDate(app);
    const asked = await askPickup(app, family.father, family.studentId, date);
    expect((await confirm(app, asked.id)).status).toBe(200);
    expect(await finalStatus(app, family.route.routeId, date, family.studentId)).toBe("away");
    return { ...family, date, permissionId: asked.id };
  }

  /** The decision no longer shows: withdrawn with `code`, the child rides their bus again in the summary and the list. */
  async function noLongerShown(
    app: TestApp,
    p: { permissionId: number; group: number; date: string; studentId: number; route: { routeId: number } },
    code: string,
  ) {
    const row = await permissionRow(app, p.permissionId);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.map((f) => f.code)).toContain(code);
    expect(await summaryRow(app, p.group, p.date, p.studentId)).toMatchObject({ way: "route", permission: null });
    expect(await finalStatus(app, p.route.routeId, p.date, p.studentId)).toBe("riding");
  }

  it("a guardian restricted: the office and the family are told", async () => {
    const p = await confirmedPickup();
    expect((await restrict(t, p.linkId)).status).toBe(200);
    await noLongerShown(t, p, "pickup-not-allowed");
    const [told] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.aboutEntity, "exit-permission"), eq(notifications.aboutId, p.permissionId)));
    expect(told).toMatchObject({ category: "afternoon" });
    expect(told?.audience).toMatchObject({ guardiansOf: [p.studentId], roles: [2, 3] });
    expect(told?.recipientCount).toBeGreaterThanOrEqual(2);
  });

  it("a guardian restricted on other days only: the pickup stands", async () => {
    const p = await confirmedPickup();
    const later = await call(t, "PATCH", `/api/v1/student-guardian/${p.linkId}/restriction`, await office(), {
      restricted: true,
      reason: "From next month",
      from: "2027-01-01",
    });
    expect(later.status).toBe(200);
    expect((await permissionRow(t, p.permissionId))?.status).toBe("confirmed");
  });

  it("a guardian removed", async () => {
    const p = await confirmedPickup();
    expect((await call(t, "DELETE", `/api/v1/student-guardian/${p.linkId}`, await office())).status).toBe(204);
    await noLongerShown(t, p, "pickup-not-allowed");
  });

  it("a guardian who may no longer pick up", async () => {
    const p = await confirmedPickup();
    const res = await call(t, "PUT", `/api/v1/student-guardian/${p.linkId}`, await office(), { canPickUp: false });
    expect(res.status, await res.clone().text()).toBe(204);
    await noLongerShown(t, p, "pickup-not-allowed");
  });

  it("a guardian who may no longer request changes: the requests they asked", async () => {
    const family = await riderFamily();
    const date = schoolDate(t);
    const res = await call(t, "POST", `${P}/absence`, await parentToken(t, family.father, NORTH), {
      studentId: family.studentId,
      date,
    });
    const asked = await readJson<Permission>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    const off = await call(t, "PUT", `/api/v1/student-guardian/${family.linkId}`, await office(), {
      canRequestChanges: false,
    });
    expect(off.status).toBe(204);
    await noLongerShown(t, { ...family, date, permissionId: asked.id }, "may-not-ask");
  });

  it("a trusted person withdrawn: the pickup, the summary, the list and the pass", async () => {
    const family = await riderFamily();
    const date = schoolDate(t);
    const [person] = await t.db
      .insert(trustedPeople)
      .values({
        schoolId: NORTH,
        studentId: family.studentId,
        name: "Tía Carmen",
        relationship: "aunt",
        phone: "+525512345678",
        status: "approved",
        decidedAt: "2026-11-01T00:00:00.000Z",
      })
      .returning({ id: trustedPeople.id });
    const res = await call(t, "POST", `${P}/auto-pickup`, await parentToken(t, family.father, NORTH), {
      studentId: family.studentId,
      date,
      trustedPersonId: person?.id,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission & { slug: string }>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    expect((await t.request(`${P}/public?slug=${asked.slug}`)).status).toBe(200);
    const gone = await call(t, "DELETE", `/api/v1/trusted-person/${person?.id}`, await office());
    expect(gone.status, await gone.clone().text()).toBe(204);
    await noLongerShown(t, { ...family, date, permissionId: asked.id }, "trusted-person-not-approved");
    expect((await t.request(`${P}/public?slug=${asked.slug}`)).status).toBe(404);
  });

  it("a route's seats lowered below the joins taken: the latest confirmed lose theirs first", async () => {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const date = schoolDate(t);
    const families = [await makeFamily(t, NORTH), await makeFamily(t, NORTH), await makeFamily(t, NORTH)];
    const group = await makeGroup(
      t,
      NORTH,
      families.map((f) => f.studentId),
    );
    const ids = await joinedOneByOne(families, bus, date);
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, bus.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(3);
    // Fewer seats than the joins: 422 only below what no permission holds (none here).
    const lowered = await call(t, "PUT", `/api/v1/route-availability/${day?.id}`, await office(), { seats: 1 });
    expect(lowered.status, await lowered.clone().text()).toBe(204);
    const rows = await Promise.all(ids.map((id) => permissionRow(t, id)));
    expect(rows.map((r) => r?.status)).toEqual(["confirmed", "withdrawn", "withdrawn"]);
    expect(rows[2]?.failures?.[0]).toMatchObject({ code: "no-seat", routeId: bus.routeId, seats: 1 });
    const [after] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(eq(routeAvailabilities.id, day?.id ?? 0));
    expect(after?.taken).toBe(1);
    const first = families[0]?.studentId ?? 0;
    expect(await finalStatus(t, bus.routeId, date, first)).toBe("joining");
    for (const f of families.slice(1)) {
      expect(await finalStatus(t, bus.routeId, date, f.studentId)).toBeUndefined();
      expect(await summaryRow(t, group, date, f.studentId)).toMatchObject({ way: "family", permission: null });
    }
  });

  it("a route moved to a smaller vehicle: the joins beyond its seats go, the latest confirmed first", async () => {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const date = schoolDate(t);
    const families = [await makeFamily(t, NORTH), await makeFamily(t, NORTH), await makeFamily(t, NORTH)];
    const ids = await joinedOneByOne(families, bus, date);
    const [small] = await t.db
      .insert(transports)
      .values(withSearch(transports, { schoolId: NORTH, name: `Minibus ${bus.routeId}`, seats: 2 }))
      .returning({ id: transports.id });
    const put = await call(t, "PUT", `/api/v1/route/${bus.routeId}`, await office(), { transportId: small?.id });
    expect(put.status, await put.clone().text()).toBe(204);
    const rows = await Promise.all(ids.map((id) => permissionRow(t, id)));
    expect(rows.map((r) => r?.status)).toEqual(["confirmed", "confirmed", "withdrawn"]);
    expect(rows[2]?.failures?.[0]).toMatchObject({ code: "no-seat", routeId: bus.routeId, seats: 2 });
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, bus.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(2);
    expect(await finalStatus(t, bus.routeId, date, families[2]?.studentId ?? 0)).toBeUndefined();
  });

  it("a holiday added: the day's decisions are withdrawn and the seat comes back", async () => {
    const app = makeTestApp();
    const bus = await makeRoute(app, NORTH, { seats: 3 });
    const family = await makeFamily(app, NORTH);
    const date = schoolDate(app, 10);
    const res = await call(app, "POST", `${P}/route-change`, await parentToken(app, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    const asked = await readJson<Permission>(res);
    expect((await confirm(app, asked.id)).status).toBe(200);
    const [year] = await app.db
      .insert(schoolConfigurations)
      .values({ schoolId: NORTH, name: "Holiday added", startDate: "2026-08-01", endDate: "2027-07-31" })
      .returning({ id: schoolConfigurations.id });
    const holiday = await call(app, "POST", "/api/v1/school-holiday-cycle", await office(app), {
      schoolConfigurationId: year?.id,
      startHolidays: `${date}T06:00:00.000Z`,
      endHolidays: `${addDay(date)}T06:00:00.000Z`,
    });
    expect(holiday.status, await holiday.clone().text()).toBe(201);
    const row = await permissionRow(app, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({ code: "not-school-day", reason: "holiday" });
    const [day] = await app.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, bus.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(0);
    await app.db.delete(schoolHolidayCycles).where(eq(schoolHolidayCycles.schoolConfigurationId, year?.id ?? 0));
    await app.db.delete(schoolConfigurations).where(eq(schoolConfigurations.id, year?.id ?? 0));
  });

  it("a student moved to a level the route does not serve: the route change is withdrawn, the seat comes back", async () => {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    await t.db
      .update(routes)
      .set({ levels: ["elementary"] })
      .where(eq(routes.id, bus.routeId));
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    const movedUp = await call(t, "PUT", `/api/v1/student/${family.studentId}`, await office(), { level: "middle" });
    expect(movedUp.status, await movedUp.clone().text()).toBe(204);
    const row = await permissionRow(t, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({
      code: "route-not-for-level",
      levels: "elementary",
      level: "middle",
      routeId: bus.routeId,
    });
    expect(await finalStatus(t, bus.routeId, date, family.studentId)).toBeUndefined();
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, bus.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(0);
  });

  it("a student deleted: their decisions are withdrawn and the seat comes back", async () => {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    const asked = await readJson<Permission>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    expect(await finalStatus(t, bus.routeId, date, family.studentId)).toBe("joining");
    const gone = await call(t, "DELETE", `/api/v1/student/${family.studentId}`, await office());
    expect(gone.status, await gone.clone().text()).toBe(204);
    const row = await permissionRow(t, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({ code: "student-removed" });
    expect(await finalStatus(t, bus.routeId, date, family.studentId)).toBeUndefined();
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, bus.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(0);
  });
});

const addDay = (date: string) => {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
};

describe("a fixed permission is decided once", () => {
  it("confirmed, its waiting days are confirmed where the rules pass and wait with reasons where not; later days too", async () => {
    const app = makeTestApp();
    const bus = await makeRoute(app, NORTH, { seats: 1 });
    const family = await makeFamily(app, NORTH);
    const token = await parentToken(app, family, NORTH);
    const from = schoolDate(app);
    const res = await call(app, "POST", `${P}/fixed/route-change`, token, {
      studentId: family.studentId,
      weekdays: [1, 2, 3, 4, 5],
      fromDate: from,
      untilDate: "2027-06-30",
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const fixed = await readJson<{ id: number; status: string }>(res);
    expect(fixed.status).toBe("pending");
    // Another child takes the only seat on the first day: that day cannot be confirmed.
    const other = await makeFamily(app, NORTH);
    const theirs = await call(app, "POST", `${P}/route-change`, await parentToken(app, other, NORTH), {
      studentId: other.studentId,
      date: from,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    expect((await confirm(app, (await readJson<Permission>(theirs)).id)).status).toBe(200);

    const decided = await call(app, "PATCH", `${P}/fixed/route-change/${fixed.id}/confirm`, await office(app), {
      status: "confirmed",
    });
    expect(decided.status, await decided.clone().text()).toBe(200);
    expect((await readJson<{ status: string }>(decided)).status).toBe("confirmed");
    const days = await app.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed.id));
    const first = days.find((d) => d.date === from);
    expect(first).toMatchObject({ status: "needs_review" });
    expect(first?.failures?.map((f) => f.code)).toEqual(["no-seat"]);
    const rest = days.filter((d) => d.date !== from);
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((d) => d.status === "confirmed")).toBe(true);
    // Decided once: a second decision is a 409.
    const again = await call(app, "PATCH", `${P}/fixed/route-change/${fixed.id}/confirm`, await office(app), {
      status: "rejected",
    });
    expect(again.status).toBe(409);
    // Days made later by the daily job are confirmed as they are made.
    app.clock.advance(7 * 86_400);
    const { generateFixedExitPermissions } = await import("../src/modules/exit-permission/fixed");
    await generateFixedExitPermissions(app.deps);
    const later = await app.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed.id));
    expect(later.length).toBeGreaterThan(days.length);
    expect(later.filter((d) => !days.some((x) => x.id === d.id)).every((d) => d.status === "confirmed")).toBe(true);
  });

  it("rejected, its waiting days are rejected and it makes no more", async () => {
    const family = await makeFamily(t, NORTH);
    const res = await call(t, "POST", `${P}/fixed/auto-pickup`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      weekdays: [1, 2, 3, 4, 5],
      fromDate: schoolDate(t),
      untilDate: "2027-06-30",
    });
    const fixed = await readJson<{ id: number }>(res);
    const decided = await call(t, "PATCH", `${P}/fixed/auto-pickup/${fixed.id}/confirm`, await office(), {
      status: "rejected",
      reason: "Grandma is not on the list",
    });
    expect(decided.status, await decided.clone().text()).toBe(200);
    const days = await t.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed.id));
    expect(days.length).toBeGreaterThan(0);
    expect(days.every((d) => d.status === "rejected")).toBe(true);
  });
});

describe("the frame of the day changes: routes, schedules, a student's status (issue 30, the rest)", () => {
  /** A confirmed route change of a new family's child of `level` onto a new bus, `ahead` days on. */
  async function confirmedRouteChange(level: "elementary" | "preschool" = "elementary", ahead = 2) {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const family = await makeFamily(t, NORTH, { level });
    const date = schoolDate(t, ahead);
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    expect(await finalStatus(t, bus.routeId, date, family.studentId)).toBe("joining");
    return { bus, family, date, permissionId: asked.id };
  }

  /** Withdrawn with `code` first, off the driver's list, its seat back. */
  async function withdrawnWith(p: Awaited<ReturnType<typeof confirmedRouteChange>>, code: string) {
    const row = await permissionRow(t, p.permissionId);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({ code });
    expect(await finalStatus(t, p.bus.routeId, p.date, p.family.studentId)).toBeUndefined();
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, p.bus.routeId), eq(routeAvailabilities.date, p.date)));
    expect(day?.taken).toBe(0);
    return row;
  }

  const isoWeekdayOf = (date: string) => ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;

  it("a route no longer running on the day's weekday: the route change to it is withdrawn (route-not-running)", async () => {
    const p = await confirmedRouteChange();
    const weekday = isoWeekdayOf(p.date);
    const weekdays = [1, 2, 3, 4, 5].filter((d) => d !== weekday);
    const put = await call(t, "PUT", `/api/v1/route/${p.bus.routeId}`, await office(), { weekdays });
    expect(put.status, await put.clone().text()).toBe(204);
    const row = await withdrawnWith(p, "route-not-running");
    expect(row?.failures?.[0]).toMatchObject({ routeId: p.bus.routeId, date: p.date });
    const [told] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.aboutEntity, "exit-permission"), eq(notifications.aboutId, p.permissionId)));
    expect(told?.audience).toMatchObject({ guardiansOf: [p.family.studentId], roles: [2, 3] });
  });

  it("a route no longer serving the student's level: the route change to it is withdrawn (route-not-for-level)", async () => {
    const p = await confirmedRouteChange();
    const put = await call(t, "PUT", `/api/v1/route/${p.bus.routeId}`, await office(), { levels: ["middle"] });
    expect(put.status, await put.clone().text()).toBe(204);
    const row = await withdrawnWith(p, "route-not-for-level");
    expect(row?.failures?.[0]).toMatchObject({ levels: "middle", level: "elementary" });
  });

  it("a route's other changes (its name, a weekday added) leave the route change standing", async () => {
    const p = await confirmedRouteChange();
    const put = await call(t, "PUT", `/api/v1/route/${p.bus.routeId}`, await office(), {
      name: `Renamed ${p.bus.routeId}`,
      weekdays: [1, 2, 3, 4, 5, 6],
    });
    expect(put.status, await put.clone().text()).toBe(204);
    expect((await permissionRow(t, p.permissionId))?.status).toBe("confirmed");
  });

  /** Northside's preschool schedule on an ISO weekday (the demo has one each school day). */
  const preschoolScheduleOn = async (weekday: number) => {
    const [schedule] = await t.db
      .select()
      .from(schoolSchedules)
      .where(
        and(
          eq(schoolSchedules.schoolId, NORTH),
          eq(schoolSchedules.level, "preschool"),
          eq(schoolSchedules.weekday, weekday),
        ),
      );
    if (!schedule) throw new Error("no preschool schedule that weekday");
    return schedule;
  };

  it("a level's schedule removed from the day's weekday: its permissions that weekday are withdrawn (not-school-day)", async () => {
    const p = await confirmedRouteChange("preschool");
    const weekday = isoWeekdayOf(p.date);
    const schedule = await preschoolScheduleOn(weekday);
    try {
      const gone = await call(t, "DELETE", `/api/v1/school-schedule/${schedule.id}`, await office());
      expect(gone.status, await gone.clone().text()).toBe(204);
      const row = await withdrawnWith(p, "not-school-day");
      expect(row?.failures?.[0]).toMatchObject({ reason: "no-schedule", level: "preschool", date: p.date });
    } finally {
      await t.db.insert(schoolSchedules).values(schedule).onConflictDoNothing();
    }
  });

  it("a level's schedule moved to another weekday: the same", async () => {
    const p = await confirmedRouteChange("preschool");
    const weekday = isoWeekdayOf(p.date);
    const schedule = await preschoolScheduleOn(weekday);
    const free = [6, 7].find((d) => d !== weekday) ?? 7;
    await t.db
      .delete(schoolSchedules)
      .where(
        and(
          eq(schoolSchedules.schoolId, NORTH),
          eq(schoolSchedules.level, "preschool"),
          eq(schoolSchedules.weekday, free),
        ),
      );
    try {
      const moved = await call(t, "PUT", `/api/v1/school-schedule/${schedule.id}`, await office(), { weekday: free });
      expect(moved.status, await moved.clone().text()).toBe(204);
      await withdrawnWith(p, "not-school-day");
    } finally {
      await t.db.update(schoolSchedules).set({ weekday }).where(eq(schoolSchedules.id, schedule.id));
    }
  });

  it("a student made inactive: their permissions are withdrawn (student-not-active), and a new ask is refused", async () => {
    const p = await confirmedRouteChange();
    const put = await call(t, "PUT", `/api/v1/student/${p.family.studentId}`, await office(), { status: "inactive" });
    expect(put.status, await put.clone().text()).toBe(204);
    await withdrawnWith(p, "student-not-active");
    const again = await call(t, "POST", `${P}/route-change`, await parentToken(t, p.family, NORTH), {
      studentId: p.family.studentId,
      date: p.date,
      routeId: p.bus.routeId,
      stopId: p.bus.stopIds[0],
    });
    expect(again.status).toBe(422);
    expect((await readJson<Problem>(again)).failures?.map((f) => f.code)).toContain("student-not-active");
  });

  it("a route cancelled for a day (POST): the route changes to it that day are withdrawn (route-cancelled)", async () => {
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t, 3);
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: bus.routeId,
      stopId: bus.stopIds[0],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission>(res);
    expect(asked.status).toBe("pending");
    const cancel = await call(t, "POST", "/api/v1/route-availability", await office(), {
      routeId: bus.routeId,
      date,
      cancelled: true,
    });
    expect(cancel.status, await cancel.clone().text()).toBe(201);
    expect(await readJson<{ cancelled: boolean }>(cancel)).toMatchObject({ cancelled: true });
    const row = await permissionRow(t, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({ code: "route-cancelled", routeId: bus.routeId, date });
  });

  it("a route cancelled for a day (PUT): the confirmed route change loses its seat, a new one is refused, the riders show it", async () => {
    const rider = await riderFamily();
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const res = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: rider.route.routeId,
      stopId: rider.route.stopIds[0],
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const asked = await readJson<Permission>(res);
    expect((await confirm(t, asked.id)).status).toBe(200);
    expect(await finalStatus(t, rider.route.routeId, date, family.studentId)).toBe("joining");
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, rider.route.routeId), eq(routeAvailabilities.date, date)));
    const before = await summaryRow(t, rider.group, date, rider.studentId);
    expect(before).toMatchObject({ way: "route", usualRoute: { cancelled: false } });
    const cancel = await call(t, "PUT", `/api/v1/route-availability/${day?.id}`, await office(), { cancelled: true });
    expect(cancel.status, await cancel.clone().text()).toBe(204);
    const row = await permissionRow(t, asked.id);
    expect(row?.status).toBe("withdrawn");
    expect(row?.failures?.[0]).toMatchObject({ code: "route-cancelled" });
    expect(await finalStatus(t, rider.route.routeId, date, family.studentId)).toBeUndefined();
    const [after] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(eq(routeAvailabilities.id, day?.id ?? 0));
    expect(after).toMatchObject({ taken: 0, cancelled: true });
    const again = await call(t, "POST", `${P}/route-change`, await parentToken(t, family, NORTH), {
      studentId: family.studentId,
      date,
      routeId: rider.route.routeId,
      stopId: rider.route.stopIds[0],
    });
    expect(again.status).toBe(422);
    expect((await readJson<Problem>(again)).failures?.map((f) => f.code)).toContain("route-cancelled");
    // The driver's list says so; the office sees the rider's home route is cancelled that day.
    const list = await call(
      t,
      "GET",
      `/api/v1/route-availability-student/route/${rider.route.routeId}/final-status?date=${date}`,
      await office(),
    );
    expect(await readJson<{ cancelled: boolean }>(list)).toMatchObject({ cancelled: true });
    const shown = await summaryRow(t, rider.group, date, rider.studentId);
    expect(shown).toMatchObject({ usualRoute: { id: rider.route.routeId, cancelled: true } });
  });

  it("a collector too late learns nothing of the child's day: no dismissal, no deadline", async () => {
    const child = await makeFamily(t, NORTH, { level: "middle" });
    const friend = await makeFamily(t, NORTH);
    const own = await makeFamily(t, NORTH, { level: "middle" });
    const was = t.clock.current;
    try {
      const date = schoolDate(t, 0);
      // Late in the evening at the school (any time zone of the Americas): the day's deadline has passed.
      t.clock.current = new Date(`${date}T23:30:00Z`);
      for (const path of ["auto-pickup", "dry-run"]) {
        const body = { ...(path === "dry-run" ? { kind: "auto_pickup" } : {}), studentId: child.studentId, date };
        const res = await call(t, "POST", `${P}/${path}`, await parentToken(t, friend, NORTH), body);
        const text = await res.clone().text();
        expect(text).toContain("too-late");
        expect(text).not.toContain("dismissal ");
        expect(text).not.toMatch(/"(deadline|dismissal)":"/);
      }
      // The child's own family is told when it closed.
      const mine = await call(t, "POST", `${P}/dry-run`, await parentToken(t, own, NORTH), {
        kind: "auto_pickup",
        studentId: own.studentId,
        date,
      });
      const verdict = await readJson<{ failures: { code: string; deadline?: string; dismissal?: string }[] }>(mine);
      expect(verdict.failures.find((f) => f.code === "too-late")).toMatchObject({
        deadline: expect.any(String),
        dismissal: expect.any(String),
      });
    } finally {
      t.clock.current = was;
    }
  });

  it("a collector refused for a day without school learns nothing of the child: no level in the failure", async () => {
    const child = await makeFamily(t, NORTH, { level: "middle" });
    const friend = await makeFamily(t, NORTH);
    const d = new Date(`${schoolDate(t)}T00:00:00Z`);
    while (d.getUTCDay() !== 6) d.setUTCDate(d.getUTCDate() + 1);
    const saturday = d.toISOString().slice(0, 10);
    for (const path of ["auto-pickup", "dry-run"]) {
      const res = await call(t, "POST", `${P}/${path}`, await parentToken(t, friend, NORTH), {
        ...(path === "dry-run" ? { kind: "auto_pickup" } : {}),
        studentId: child.studentId,
        date: saturday,
      });
      const text = await res.clone().text();
      expect(text).toContain("not-school-day");
      expect(text).not.toContain("middle");
      expect(text).not.toContain('"level"');
    }
  });
});

describe("a rider moved to another home route: the confirmed decisions move with them (issue 30, the last)", () => {
  const routeStudentOf = async (routeId: number, studentId: number) => {
    const [row] = await t.db
      .select({ id: routeStudents.id })
      .from(routeStudents)
      .where(and(eq(routeStudents.routeId, routeId), eq(routeStudents.studentId, studentId)));
    if (!row) throw new Error("no rider");
    return row.id;
  };

  /** The child off route A and onto route B (delete, then create: a rider's route does not change in place). */
  async function move(studentId: number, from: number, to: { routeId: number; stopIds: number[] }) {
    const off = await call(
      t,
      "DELETE",
      `/api/v1/route-student/${await routeStudentOf(from, studentId)}`,
      await office(),
    );
    expect(off.status, await off.clone().text()).toBe(204);
    const on = await call(t, "POST", "/api/v1/route-student", await office(), {
      routeId: to.routeId,
      studentId,
      stopId: to.stopIds[0],
      weekdays: [1, 2, 3, 4, 5],
    });
    expect(on.status, await on.clone().text()).toBe(201);
  }

  it("an absence confirmed, then the child moved to another bus: the new bus's list has them away, the old one not at all", async () => {
    const { route, studentId, father } = await riderFamily();
    const date = schoolDate(t);
    const asked = await call(t, "POST", `${P}/absence`, await parentToken(t, father, NORTH), { studentId, date });
    expect(asked.status, await asked.clone().text()).toBe(201);
    const { id } = await readJson<Permission>(asked);
    expect((await confirm(t, id)).status).toBe(200);
    const away = await finalStatus(t, route.routeId, date, studentId);
    expect(away).toBeDefined();
    const other = await makeRoute(t, NORTH, { seats: 5 });
    await move(studentId, route.routeId, other);
    expect(await finalStatus(t, other.routeId, date, studentId)).toBe("away");
    expect(await finalStatus(t, route.routeId, date, studentId)).toBeUndefined();
    expect((await permissionRow(t, id))?.status).toBe("confirmed");
  });

  it("another stop of their own bus confirmed, then the child moved: the old bus takes them as a join, with a seat, and the new one has them away", async () => {
    const { route, studentId, father } = await riderFamily();
    const date = schoolDate(t);
    const asked = await call(t, "POST", `${P}/route-change`, await parentToken(t, father, NORTH), {
      studentId,
      date,
      routeId: route.routeId,
      stopId: route.stopIds[1],
    });
    expect(asked.status, await asked.clone().text()).toBe(201);
    const { id } = await readJson<Permission>(asked);
    expect((await confirm(t, id)).status).toBe(200);
    const other = await makeRoute(t, NORTH, { seats: 5 });
    await move(studentId, route.routeId, other);
    expect(await finalStatus(t, route.routeId, date, studentId)).toBe("joining");
    const [day] = await t.db
      .select()
      .from(routeAvailabilities)
      .where(and(eq(routeAvailabilities.routeId, route.routeId), eq(routeAvailabilities.date, date)));
    expect(day?.taken).toBe(1);
    const newList = await finalStatus(t, other.routeId, date, studentId);
    expect(newList).toBeDefined();
    expect(newList).not.toBe("riding");
  });

  it("a rider's weekdays widened to the day of a confirmed absence: the bus's list has them away, not riding", async () => {
    const { route, studentId, father } = await riderFamily();
    const date = schoolDate(t);
    const weekday = ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
    const rider = await routeStudentOf(route.routeId, studentId);
    const others = [1, 2, 3, 4, 5].filter((d) => d !== weekday);
    const narrowed = await call(t, "PUT", `/api/v1/route-student/${rider}`, await office(), { weekdays: others });
    expect(narrowed.status, await narrowed.clone().text()).toBe(204);
    const asked = await call(t, "POST", `${P}/absence`, await parentToken(t, father, NORTH), { studentId, date });
    const { id } = await readJson<Permission>(asked);
    expect((await confirm(t, id)).status).toBe(200);
    expect(await finalStatus(t, route.routeId, date, studentId)).toBeUndefined();
    const widened = await call(t, "PUT", `/api/v1/route-student/${rider}`, await office(), {
      weekdays: [1, 2, 3, 4, 5],
    });
    expect(widened.status, await widened.clone().text()).toBe(204);
    expect(await finalStatus(t, route.routeId, date, studentId)).toBe("away");
  });
});
