/**
 * Invitations: a guardian invites other families' children (their own: 422; another school's: 404),
 * staff and teachers any; who sees an invitation (creator, recipients and their delegates, staff;
 * anyone else 404); recipients answer per child while open and before the expiry (409 after), a
 * second first answer is a 409, a change is a PUT; a restricted guardian may only decline; racing
 * answers: exactly one wins; the creator closes or cancels; the children's rows; Excel.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { families } from "../src/db/schema/family";
import { guardians, students } from "../src/db/schema/student";
import { routeStops } from "../src/db/schema/transport";
import { withSearch } from "../src/db/search";
import { grantsOf } from "../src/modules";
import { uniq } from "./fixture-kit";
import { fixtureRoute } from "./fixtures/modules/transport";
import { DEMO, makeTestApp, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const INV = "/api/v1/invitation";
const ISR = "/api/v1/invitation-student-response";
/** The demo parent's profile in Northside (seed/demo.sql): user 4. */
const DEMO_PARENT_ID = 1;
/** A day after the test clock's (2026-11-23), fixed. */
const FRIDAY = "2026-12-04";

type Invitation = {
  id: number;
  kind: string;
  status: string;
  parentId: number | null;
  createdBy: number | null;
  pickup: string | null;
  expiresAt: string;
  counts: { invited: number; accepted: number; declined: number; pending: number };
};
type Child = {
  id: number;
  invitationId: number;
  responseId: number;
  studentId: number;
  answer: string;
  answeredBy: number | null;
  exitPermissionId: number | null;
  failures: unknown[] | null;
};
type Page<T> = { data: T[]; total: number };

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const parent = (t: TestApp) => as(t, DEMO.northParent.id, NORTH, "parent");
const teacher = (t: TestApp) => as(t, DEMO.northTeacher.id, NORTH, "teacher");

let next = 0;
const newPhone = () => `+1555${5_800_000 + ++next}`;

async function student(t: TestApp, school = NORTH) {
  const [row] = await t.db
    .insert(students)
    .values(withSearch(students, { schoolId: school, firstName: uniq("Kid"), lastName: "Invited" }))
    .returning({ id: students.id });
  if (!row) throw new Error("no student");
  return row.id;
}

async function guardian(
  t: TestApp,
  studentId: number,
  parentId: number,
  extra: Partial<typeof guardians.$inferInsert> = {},
) {
  await t.db.insert(guardians).values({ schoolId: NORTH, studentId, parentId, ...extra });
}

/** Another parent of Northside with a child of their own. */
async function family(t: TestApp) {
  const res = await t.request("/api/v1/parent", {
    method: "POST",
    token: await admin(t),
    body: { phone: newPhone(), firstName: "Otra", relationship: "mother" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const p = (await res.json()) as { id: number; userId: number };
  const child = await student(t);
  await guardian(t, child, p.id);
  return { ...p, child, token: await as(t, p.userId, NORTH, "parent") };
}

async function invite(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request(INV, { method: "POST", token, body: { title: "Ana comes home with us", date: FRIDAY, ...body } });
}

async function invited(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await invite(t, token, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Invitation;
}

const respond = (t: TestApp, id: number, token: string, body: Record<string, unknown>) =>
  t.request(`${INV}/${id}/respond`, { method: "POST", token, body });

describe("inviting", () => {
  it("lets a guardian invite another family's child: open, as their profile, counted, auto_pickup by default", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [other.child] });
    expect(inv).toMatchObject({
      kind: "go_home",
      status: "open",
      parentId: DEMO_PARENT_ID,
      createdBy: DEMO.northParent.id,
      pickup: "auto_pickup",
      counts: { invited: 1, accepted: 0, declined: 0, pending: 1 },
    });
    // Default expiry: the end of the day at the school.
    expect(new Date(inv.expiresAt).getTime()).toBeGreaterThan(new Date(`${FRIDAY}T00:00:00Z`).getTime());
  });

  it("refuses a guardian's own child (422), another school's student (404), a past day (422)", async () => {
    const t = makeTestApp();
    const own = await student(t);
    await guardian(t, own, DEMO_PARENT_ID);
    const token = await parent(t);
    expect((await invite(t, token, { studentIds: [own] })).status).toBe(422);
    expect((await invite(t, token, { studentIds: [await student(t, SOUTH)] })).status).toBe(404);
    const other = await family(t);
    expect((await invite(t, token, { studentIds: [other.child], date: "2026-11-20" })).status).toBe(422);
    expect((await invite(t, token, { studentIds: [other.child], kind: "general", pickup: "auto_pickup" })).status).toBe(
      422,
    );
  });

  it("lets a teacher or staff invite any children to a general invitation; a go_home one needs a collecting guardian", async () => {
    const t = makeTestApp();
    const a = await family(t);
    const b = await family(t);
    const general = await invited(t, await teacher(t), { kind: "general", studentIds: [a.child, b.child] });
    expect(general).toMatchObject({ kind: "general", parentId: null, counts: { invited: 2 } });
    expect((await invite(t, await admin(t), { studentIds: [a.child] })).status).toBe(422);
    expect((await invite(t, await admin(t), { studentIds: [a.child], pickup: "route_change" })).status).toBe(422);
  });

  it("refuses an expiry after the day or in the past", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const token = await parent(t);
    expect((await invite(t, token, { studentIds: [other.child], expiresAt: "2026-12-06T00:00:00Z" })).status).toBe(422);
    expect((await invite(t, token, { studentIds: [other.child], expiresAt: "2026-11-01T00:00:00Z" })).status).toBe(422);
    const ok = await invited(t, token, { studentIds: [other.child], expiresAt: "2026-12-03T20:00:00Z" });
    expect(ok.expiresAt).toBe("2026-12-03T20:00:00.000Z");
  });
});

describe("who sees an invitation", () => {
  it("its creator, its recipients and staff; anyone else a 404", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const stranger = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [other.child] });
    expect((await t.request(`${INV}/${inv.id}`, { token: await parent(t) })).status).toBe(200);
    expect((await t.request(`${INV}/${inv.id}`, { token: other.token })).status).toBe(200);
    expect((await t.request(`${INV}/${inv.id}`, { token: await admin(t) })).status).toBe(200);
    expect((await t.request(`${INV}/${inv.id}`, { token: stranger.token })).status).toBe(404);

    const created = (await (
      await t.request(`${INV}/mine/created`, { token: await parent(t) })
    ).json()) as Page<Invitation>;
    expect(created.data.map((i) => i.id)).toContain(inv.id);
    const received = (await (
      await t.request(`${INV}/mine/received`, { token: other.token })
    ).json()) as Page<Invitation>;
    expect(received.data.map((i) => i.id)).toEqual([inv.id]);
    const none = (await (
      await t.request(`${INV}/mine/received`, { token: stranger.token })
    ).json()) as Page<Invitation>;
    expect(none.total).toBe(0);
    const all = (await (
      await t.request(`${INV}?status=open&date=${FRIDAY}`, { token: await admin(t) })
    ).json()) as Page<Invitation>;
    expect(all.data.map((i) => i.id)).toContain(inv.id);
  });

  it("downloads an Excel file of the caller's invitations", async () => {
    const t = makeTestApp();
    const other = await family(t);
    await invited(t, await parent(t), { studentIds: [other.child] });
    const res = await t.request(`${INV}/export`, { token: await parent(t) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("spreadsheetml");
  });
});

describe("answering", () => {
  it("takes one answer per child, then 409; a change is a PUT; the family's status follows", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const inv = await invited(t, await teacher(t), { kind: "general", studentIds: [other.child] });
    const res = await respond(t, inv.id, other.token, { answer: "declined" });
    expect(res.status, await res.clone().text()).toBe(200);
    const [row] = ((await res.json()) as { data: Child[] }).data;
    expect(row).toMatchObject({ studentId: other.child, answer: "declined", answeredBy: other.userId });
    expect((await respond(t, inv.id, other.token, { answer: "accepted" })).status).toBe(409);

    const put = await t.request(`${INV}/${inv.id}/response`, {
      method: "PUT",
      token: other.token,
      body: { answer: "accepted" },
    });
    expect(put.status, await put.clone().text()).toBe(204);
    const families = (await (
      await t.request(`${INV}/${inv.id}/responses`, { token: await teacher(t) })
    ).json()) as Page<{
      id: number;
      status: string;
    }>;
    expect(families.data).toHaveLength(1);
    expect(families.data[0]?.status).toBe("accepted");
    const got = (await (await t.request(`${INV}/${inv.id}`, { token: await teacher(t) })).json()) as Invitation;
    expect(got.counts).toMatchObject({ invited: 1, accepted: 1, pending: 0 });
    // The children's rows of the family's response.
    const kids = (await (
      await t.request(`${ISR}/response/${families.data[0]?.id}`, { token: other.token })
    ).json()) as Page<Child>;
    expect(kids.data.map((k) => k.answer)).toEqual(["accepted"]);
  });

  it("refuses the creator who is no guardian (403), a stranger (404), a closed or expired invitation (409)", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const stranger = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [other.child], expiresAt: "2026-12-01T00:00:00Z" });
    expect((await respond(t, inv.id, await parent(t), { answer: "declined" })).status).toBe(403);
    expect((await respond(t, inv.id, stranger.token, { answer: "declined" })).status).toBe(404);
    t.clock.advance(9 * 24 * 3600);
    const later = await as(t, other.userId, NORTH, "parent");
    expect((await respond(t, inv.id, later, { answer: "declined" })).status).toBe(409);

    const t2 = makeTestApp();
    const b = await family(t2);
    const inv2 = await invited(t2, await parent(t2), { studentIds: [b.child] });
    const closed = await t2.request(`${INV}/${inv2.id}/status`, {
      method: "PATCH",
      token: await parent(t2),
      body: { status: "closed" },
    });
    expect(closed.status).toBe(200);
    expect((await respond(t2, inv2.id, b.token, { answer: "declined" })).status).toBe(409);
  });

  it("shows an open invitation past its expiresAt as expired, in reads and in the status filter", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [other.child], expiresAt: "2026-12-01T00:00:00Z" });
    expect(inv.status).toBe("open");
    const listed = async (status: string) =>
      (
        (await (
          await t.request(`${INV}?status=${status}&pageSize=100`, { token: await parent(t) })
        ).json()) as Page<Invitation>
      ).data.map((i) => i.id);
    expect(await listed("open")).toContain(inv.id);
    t.clock.current = new Date("2026-12-01T00:00:00.000Z");
    const read = await t.request(`${INV}/${inv.id}`, { token: await parent(t) });
    expect(((await read.json()) as Invitation).status).toBe("expired");
    expect(await listed("expired")).toContain(inv.id);
    expect(await listed("open")).not.toContain(inv.id);
  });

  it("lets a restricted guardian decline, not accept; a guardian who may not request changes neither", async () => {
    const t = makeTestApp();
    const inviter = await family(t);
    const res = await t.request("/api/v1/parent", {
      method: "POST",
      token: await admin(t),
      body: { phone: newPhone(), firstName: "Rest", relationship: "father" },
    });
    const p = (await res.json()) as { id: number; userId: number };
    const kid = await student(t);
    await guardian(t, kid, p.id, { restricted: true });
    const token = await as(t, p.userId, NORTH, "parent");
    const inv = await invited(t, inviter.token, { studentIds: [kid] });
    expect((await respond(t, inv.id, token, { answer: "accepted" })).status).toBe(422);
    expect((await respond(t, inv.id, token, { answer: "declined" })).status).toBe(200);

    const kid2 = await student(t);
    await guardian(t, kid2, p.id, { canRequestChanges: false });
    const inv2 = await invited(t, inviter.token, { studentIds: [kid2] });
    expect((await respond(t, inv2.id, token, { answer: "declined" })).status).toBe(422);
  });

  it("of two guardians answering the same child at once, exactly one wins", async () => {
    const t = makeTestApp();
    const mother = await family(t);
    const res = await t.request("/api/v1/parent", {
      method: "POST",
      token: await admin(t),
      body: { phone: newPhone(), firstName: "Padre", relationship: "father" },
    });
    const father = (await res.json()) as { id: number; userId: number };
    await guardian(t, mother.child, father.id);
    const fatherToken = await as(t, father.userId, NORTH, "parent");
    const inv = await invited(t, await teacher(t), { kind: "general", studentIds: [mother.child] });
    const answers = await Promise.all([
      respond(t, inv.id, mother.token, { answer: "declined" }),
      respond(t, inv.id, fatherToken, { answer: "accepted" }),
      respond(t, inv.id, mother.token, { answer: "accepted" }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });
});

describe("the creator's changes", () => {
  it("closes or cancels once (409 after); a recipient may not (403); delete refused with an accepted answer", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const inv = await invited(t, await teacher(t), { kind: "general", studentIds: [other.child] });
    const patch = (token: string, status: string) =>
      t.request(`${INV}/${inv.id}/status`, { method: "PATCH", token, body: { status } });
    expect((await patch(other.token, "cancelled")).status).toBe(403);
    expect(
      (await t.request(`${INV}/${inv.id}`, { method: "PUT", token: other.token, body: { title: "x" } })).status,
    ).toBe(403);
    expect((await respond(t, inv.id, other.token, { answer: "accepted" })).status).toBe(200);
    expect((await t.request(`${INV}/${inv.id}`, { method: "DELETE", token: await teacher(t) })).status).toBe(409);
    const cancelled = await patch(await teacher(t), "cancelled");
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as Invitation).status).toBe("cancelled");
    expect((await patch(await teacher(t), "closed")).status).toBe(409);
    expect(
      (await t.request(`${INV}/${inv.id}`, { method: "PUT", token: await teacher(t), body: { title: "x" } })).status,
    ).toBe(409);
  });

  it("adds a child and withdraws a child not answered yet (an answered one: 409)", async () => {
    const t = makeTestApp();
    const a = await family(t);
    const b = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [a.child] });
    const add = await t.request(ISR, {
      method: "POST",
      token: await parent(t),
      body: { invitationId: inv.id, studentId: b.child },
    });
    expect(add.status, await add.clone().text()).toBe(201);
    const added = (await add.json()) as Child;
    expect(
      (
        await t.request(ISR, {
          method: "POST",
          token: await parent(t),
          body: { invitationId: inv.id, studentId: b.child },
        })
      ).status,
    ).toBe(409);
    // A recipient does not add children.
    expect(
      (await t.request(ISR, { method: "POST", token: a.token, body: { invitationId: inv.id, studentId: b.child } }))
        .status,
    ).toBe(403);
    expect((await t.request(`${ISR}/${added.id}`, { method: "DELETE", token: await parent(t) })).status).toBe(204);
    const [first] = ((await (await respond(t, inv.id, a.token, { answer: "declined" })).json()) as { data: Child[] })
      .data;
    expect((await t.request(`${ISR}/${first?.id}`, { method: "DELETE", token: await parent(t) })).status).toBe(409);
    // The child's own row: the guardian changes the answer there too.
    const put = await t.request(`${ISR}/${first?.id}`, { method: "PUT", token: a.token, body: { answer: "declined" } });
    expect(put.status).toBe(204);
    const list = (await (await t.request(`${ISR}?invitationId=${inv.id}`, { token: a.token })).json()) as Page<Child>;
    expect(list.data.map((c) => c.studentId)).toEqual([a.child]);
  });
});

describe("declining a go-home invitation", () => {
  it("writes nothing else: no exit permission", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [other.child] });
    const res = await respond(t, inv.id, other.token, { answer: "declined" });
    expect(res.status).toBe(200);
    const made = await t.db.select().from(exitPermissions).where(eq(exitPermissions.invitationId, inv.id));
    expect(made).toEqual([]);
  });
});

describe("at the declared maximum", () => {
  it("invites 50 children at once: one family row each (no family), one child row each, one batch", async () => {
    const t = makeTestApp();
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await student(t));
    const inv = await invited(t, await admin(t), { kind: "general", studentIds: ids });
    expect(inv.counts).toMatchObject({ invited: 50, pending: 50 });
    const families = (await (
      await t.request(`${INV}/${inv.id}/responses?pageSize=100`, { token: await admin(t) })
    ).json()) as Page<{ id: number }>;
    expect(families.total).toBe(50);
    const kids = (await (
      await t.request(`${ISR}?invitationId=${inv.id}&pageSize=100`, { token: await admin(t) })
    ).json()) as Page<Child>;
    expect(kids.data.map((k) => k.studentId).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    // Each child in its own family's row.
    expect(new Set(kids.data.map((k) => k.responseId)).size).toBe(50);
    const answered = await respond(t, inv.id, await admin(t), { answer: "declined", studentIds: ids });
    expect(answered.status).toBe(200);
  });
});

describe("the answers' visibility", () => {
  it("a recipient sees their own family's answers, the creator every family's, a stranger none (404)", async () => {
    const t = makeTestApp();
    const a = await family(t);
    const b = await family(t);
    const stranger = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [a.child, b.child] });
    const families = async (token: string) =>
      (await (await t.request(`${INV}/${inv.id}/responses`, { token })).json()) as Page<{ id: number }>;
    expect((await families(await parent(t))).total).toBe(2);
    const own = await families(a.token);
    expect(own.total).toBe(1);
    expect((await t.request(`${INV}/${inv.id}/responses`, { token: stranger.token })).status).toBe(404);
    const theirs = (await families(b.token)).data[0]?.id;
    expect((await t.request(`${ISR}/response/${theirs}`, { token: a.token })).status).toBe(404);
    expect((await t.request(`${ISR}/response/${own.data[0]?.id}`, { token: a.token })).status).toBe(200);
    const kids = (await (await t.request(ISR, { token: a.token })).json()) as Page<Child>;
    expect(kids.data.map((k) => k.studentId)).toEqual([a.child]);
  });

  it("a valid delegate of a recipient sees and answers for the parent's child", async () => {
    const t = makeTestApp();
    const a = await family(t);
    const inv = await invited(t, await parent(t), { studentIds: [a.child] });
    const made = await t.request("/api/v1/delegate", {
      method: "POST",
      token: await admin(t),
      body: {
        parentId: a.id,
        phone: newPhone(),
        firstName: "Abuela",
        validFrom: "2026-11-20",
        validUntil: "2026-12-31",
      },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const delegate = (await made.json()) as { userId: number };
    const token = await as(t, delegate.userId, NORTH, "parent");
    expect((await t.request(`${INV}/${inv.id}`, { token })).status).toBe(200);
    const res = await respond(t, inv.id, token, { answer: "declined" });
    expect(res.status, await res.clone().text()).toBe(200);
  });
});

describe("families", () => {
  it("gives siblings one family row, each other family its own, and a child added later joins its family's row", async () => {
    const t = makeTestApp();
    const made = async () => {
      const [row] = await t.db
        .insert(families)
        .values(withSearch(families, { schoolId: NORTH, familyNumber: uniq("F"), name: uniq("Familia") }))
        .returning({ id: families.id });
      if (!row) throw new Error("no family");
      return row.id;
    };
    const [f1, f2] = [await made(), await made()];
    const inFamily = async (familyId: number) => {
      const id = await student(t);
      await t.db.update(students).set({ familyId }).where(eq(students.id, id));
      return id;
    };
    const [s1, s2, s3, s4] = [await inFamily(f1), await inFamily(f2), await inFamily(f1), await inFamily(f2)];
    const loner = await student(t);
    const inv = await invited(t, await admin(t), { kind: "general", studentIds: [s1, s2, loner, s3] });
    const rows = (await (
      await t.request(`${ISR}?invitationId=${inv.id}`, { token: await admin(t) })
    ).json()) as Page<Child>;
    const byStudent = new Map(rows.data.map((r) => [r.studentId, r.responseId]));
    expect(byStudent.get(s1)).toBe(byStudent.get(s3));
    expect(new Set(byStudent.values()).size).toBe(3);
    const fams = (await (await t.request(`${INV}/${inv.id}/responses`, { token: await admin(t) })).json()) as Page<{
      id: number;
      familyId: number | null;
    }>;
    const familyOf = new Map(fams.data.map((f) => [f.id, f.familyId]));
    expect(familyOf.get(byStudent.get(s1) ?? 0)).toBe(f1);
    expect(familyOf.get(byStudent.get(s2) ?? 0)).toBe(f2);
    expect(familyOf.get(byStudent.get(loner) ?? 0)).toBeNull();
    const add = await t.request(ISR, {
      method: "POST",
      token: await admin(t),
      body: { invitationId: inv.id, studentId: s4 },
    });
    expect(add.status).toBe(201);
    expect(((await add.json()) as Child).responseId).toBe(byStudent.get(s2));
  });
});

describe("a go-home invitation on a route", () => {
  it("names a route and a stop of it (another stop: 422; unknown: 404)", async () => {
    const t = makeTestApp();
    const routeId = await fixtureRoute(t, NORTH);
    const [stop] = await t.db.select({ id: routeStops.id }).from(routeStops).where(eq(routeStops.routeId, routeId));
    const otherRoute = await fixtureRoute(t, NORTH);
    const [otherStop] = await t.db
      .select({ id: routeStops.id })
      .from(routeStops)
      .where(eq(routeStops.routeId, otherRoute));
    const other = await family(t);
    const body = { studentIds: [other.child], pickup: "route_change", routeId };
    const inv = await invited(t, await parent(t), { ...body, stopId: stop?.id });
    expect(inv).toMatchObject({ pickup: "route_change", routeId, stopId: stop?.id });
    expect((await invite(t, await parent(t), { ...body, stopId: otherStop?.id })).status).toBe(422);
    expect((await invite(t, await parent(t), { ...body, stopId: 987654 })).status).toBe(404);
    expect((await invite(t, await parent(t), { studentIds: [other.child], pickup: "route_change" })).status).toBe(422);
  });
});

describe("filters of the answers' lists", () => {
  it("filters the families by status and a family's children by answer", async () => {
    const t = makeTestApp();
    const a = await family(t);
    const b = await family(t);
    const inv = await invited(t, await teacher(t), { kind: "general", studentIds: [a.child, b.child] });
    expect((await respond(t, inv.id, a.token, { answer: "declined" })).status).toBe(200);
    const declined = (await (
      await t.request(`${INV}/${inv.id}/responses?status=declined`, { token: await teacher(t) })
    ).json()) as Page<{ id: number }>;
    expect(declined.total).toBe(1);
    const id = declined.data[0]?.id;
    const pending = (await (
      await t.request(`${ISR}/response/${id}?answer=pending`, { token: await teacher(t) })
    ).json()) as Page<Child>;
    expect(pending.total).toBe(0);
    expect((await t.request(`${ISR}/response/${id}?answer=maybe`, { token: await teacher(t) })).status).toBe(400);
  });
});
