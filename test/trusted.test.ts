/**
 * Trusted people and trusted addresses: a parent registers them for their own children (a child who is not theirs is a 404), staff for any
 * student; the school approves or rejects (`PATCH .../status`: who, when, why, one audit row; a
 * decided request is a 409, and of two racing decisions exactly one wins). Visibility per role;
 * images through presigned URLs under the school's prefix; only approved ones count.
 */

import { and, desc, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { guardians, students } from "../src/db/schema/student";
import { trustedAddresses } from "../src/db/schema/trusted-address";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { withSearch } from "../src/db/search";
import { jobCtx } from "../src/lib/context";
import { grantsOf } from "../src/modules";
import {
  approvedTrustedAddresses,
  approvedTrustedPeople,
  trustedAddressesJson,
  trustedPeopleJson,
} from "../src/modules/trusted-person/approved";
import { uniq } from "./fixture-kit";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PEOPLE = "/api/v1/trusted-person";
const ADDRESSES = "/api/v1/trusted-address";
/** The demo parent's profile in Northside (seed/demo.sql): user 4. */
const DEMO_PARENT_ID = 1;

type Person = {
  id: number;
  studentId: number;
  parentId: number | null;
  name: string;
  relationship: string;
  phone: string;
  photo: string | null;
  idDocument: string | null;
  status: "pending" | "approved" | "rejected";
  decidedBy: number | null;
  decidedAt: string | null;
  reason: string | null;
};
type Address = Omit<Person, "name" | "relationship" | "phone" | "photo" | "idDocument"> & {
  street: string;
  country: string;
  routeStopId: number | null;
};
type Page<T> = { data: T[]; total: number };

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const staff = (t: TestApp) => as(t, 2, NORTH, "staff");
const teacher = (t: TestApp) => as(t, DEMO.northTeacher.id, NORTH, "teacher");
const parent = (t: TestApp) => as(t, DEMO.northParent.id, NORTH, "parent");

let next = 0;
const newPhone = () => `+1555${5_700_000 + ++next}`;

async function student(t: TestApp, school = NORTH) {
  const [row] = await (await t.schoolDb(school))
    .insert(students)
    .values(withSearch(students, { schoolId: school, firstName: uniq("Kid"), lastName: "Trusted" }))
    .returning({ id: students.id });
  return row?.id as number;
}

async function guardian(t: TestApp, studentId: number, parentId: number, school = NORTH) {
  await (await t.schoolDb(school)).insert(guardians).values({ schoolId: school, studentId, parentId });
}

/** A child of the demo parent. */
async function ownChild(t: TestApp) {
  const id = await student(t);
  await guardian(t, id, DEMO_PARENT_ID);
  return id;
}

/** Another parent of Northside (profile and user), with a child of their own. */
async function otherParent(t: TestApp) {
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

const personBody = (studentId: number, extra: Record<string, unknown> = {}) => ({
  studentId,
  name: "Laura Gomez",
  relationship: "aunt",
  phone: "+52 1 55 1234 5678",
  ...extra,
});

async function addPerson(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PEOPLE, { method: "POST", token: token ?? (await admin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Person;
}

const addressBody = (studentId: number, extra: Record<string, unknown> = {}) => ({
  studentId,
  street: "Calle Roble",
  number: "12",
  city: "Monterrey",
  country: "MX",
  ...extra,
});

async function addAddress(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(ADDRESSES, { method: "POST", token: token ?? (await admin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Address;
}

const decide = async (t: TestApp, path: string, id: number, body: Record<string, unknown>, token?: string) =>
  t.request(`${path}/${id}/status`, { method: "PATCH", token: token ?? (await admin(t)), body });

describe("trusted people: registering", () => {
  it("lets a parent register one for their own child: pending, their profile, phone in E.164", async () => {
    const t = makeTestApp();
    const child = await ownChild(t);
    const p = await addPerson(t, personBody(child), await parent(t));
    expect(p).toMatchObject({
      studentId: child,
      parentId: DEMO_PARENT_ID,
      name: "Laura Gomez",
      relationship: "aunt",
      phone: "+525512345678",
      status: "pending",
      decidedBy: null,
      decidedAt: null,
      photo: null,
    });
  });

  it("answers 404 to a parent naming a child who is not theirs, here or in another school", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const others = await otherParent(t);
    for (const studentId of [others.child, await student(t), await student(t, SOUTH)]) {
      const res = await t.request(PEOPLE, { method: "POST", token, body: personBody(studentId) });
      expect(res.status).toBe(404);
      expect((await problem(res)).detail).toBe(`Student ${studentId} not found`);
    }
  });

  it("lets staff register one for any student, as the school's or for a guardian", async () => {
    const t = makeTestApp();
    const child = await ownChild(t);
    expect((await addPerson(t, personBody(child), await staff(t))).parentId).toBeNull();
    expect((await addPerson(t, personBody(child, { parentId: DEMO_PARENT_ID }))).parentId).toBe(DEMO_PARENT_ID);
    const res = await t.request(PEOPLE, {
      method: "POST",
      token: await admin(t),
      body: personBody(await student(t), { parentId: DEMO_PARENT_ID }),
    });
    expect(res.status).toBe(422);
    const south = await t.request(PEOPLE, {
      method: "POST",
      token: await admin(t),
      body: personBody(await student(t, SOUTH)),
    });
    expect(south.status).toBe(404);
  });

  it("refuses an impossible phone and a blank name (400)", async () => {
    const t = makeTestApp();
    const child = await ownChild(t);
    for (const bad of [{ phone: "555-0100" }, { phone: "+99912" }, { name: " " }]) {
      const res = await t.request(PEOPLE, { method: "POST", token: await parent(t), body: personBody(child, bad) });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe(Object.keys(bad)[0]);
    }
  });

  it("refuses (422) a guardian the school restricted, or who may not request changes; an ended restriction no longer counts", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const today = t.clock.now().toISOString().slice(0, 10);
    const cases: [Partial<typeof guardians.$inferInsert>, number, RegExp | null][] = [
      [{ restricted: true, restrictionReason: "Court order" }, 422, /restricted/],
      [{ restricted: true, restrictionReason: "Court order", restrictionFrom: "2099-01-01" }, 422, /restricted/],
      [{ canRequestChanges: false }, 422, /may not request changes/],
      [{ restricted: true, restrictionReason: "Old order", restrictionUntil: "2000-01-01" }, 201, null],
      [{ restricted: true, restrictionReason: "Ends today", restrictionUntil: today }, 422, /restricted/],
    ];
    for (const [link, status, detail] of cases) {
      const child = await student(t);
      await t.db.insert(guardians).values({ schoolId: NORTH, studentId: child, parentId: DEMO_PARENT_ID, ...link });
      for (const path of [PEOPLE, ADDRESSES]) {
        const body = path === PEOPLE ? personBody(child) : addressBody(child);
        const res = await t.request(path, { method: "POST", token, body });
        expect(res.status, `${path} ${JSON.stringify(link)}`).toBe(status);
        if (detail) expect((await problem(res)).detail).toMatch(detail);
      }
    }
    // Staff still register for such a student (the school decides).
    const child = await student(t);
    await t.db
      .insert(guardians)
      .values({ schoolId: NORTH, studentId: child, parentId: DEMO_PARENT_ID, restricted: true });
    expect((await addPerson(t, personBody(child), await staff(t))).parentId).toBeNull();
  });

  it("lets a valid delegate of the parent register and see their children's", async () => {
    const t = makeTestApp();
    const child = await ownChild(t);
    const phone = newPhone();
    const made = await t.request("/api/v1/delegate", {
      method: "POST",
      token: await parent(t),
      body: { phone, firstName: "Dele", validFrom: "2026-11-01", validUntil: "2026-12-31" },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const { userId } = (await made.json()) as { userId: number };
    const token = await as(t, userId, NORTH, "parent");
    const p = await addPerson(t, personBody(child), token);
    expect(p.parentId).toBe(DEMO_PARENT_ID);
    expect((await t.request(`${PEOPLE}/${p.id}`, { token })).status).toBe(200);
    const page = (await (await t.request(`${PEOPLE}?studentId=${child}`, { token })).json()) as Page<Person>;
    expect(page.data.map((r) => r.id)).toEqual([p.id]);
    // After the delegation ends, nothing.
    t.clock.current = new Date("2027-01-02T15:00:00Z");
    const later = await as(t, userId, NORTH, "parent");
    expect((await t.request(`${PEOPLE}/${p.id}`, { token: later })).status).toBe(404);
  });
});

describe("trusted people: changing and deleting", () => {
  it("changes a pending one (204) and refuses a decided one (409)", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const p = await addPerson(t, personBody(await ownChild(t)), token);
    const put = await t.request(`${PEOPLE}/${p.id}`, {
      method: "PUT",
      token,
      body: { phone: "+1 (555) 000-0042", relationship: "neighbour" },
    });
    expect(put.status).toBe(204);
    const read = (await (await t.request(`${PEOPLE}/${p.id}`, { token })).json()) as Person;
    expect(read).toMatchObject({ phone: "+15550000042", relationship: "neighbour" });
    expect((await decide(t, PEOPLE, p.id, { status: "approved" })).status).toBe(200);
    const again = await t.request(`${PEOPLE}/${p.id}`, { method: "PUT", token, body: { name: "Someone Else" } });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toMatch(/is approved/);
    const badPhone = await t.request(`${PEOPLE}/${p.id}`, { method: "PUT", token, body: { phone: "12" } });
    expect(badPhone.status).toBe(400);
  });

  it("lets a parent delete their own (204) but not another parent's (404)", async () => {
    const t = makeTestApp();
    const mine = await addPerson(t, personBody(await ownChild(t)), await parent(t));
    const others = await otherParent(t);
    const theirs = await addPerson(t, personBody(others.child), others.token);
    expect((await t.request(`${PEOPLE}/${theirs.id}`, { method: "DELETE", token: await parent(t) })).status).toBe(404);
    expect(
      (await t.request(`${PEOPLE}/${theirs.id}`, { method: "PUT", token: await parent(t), body: { name: "X Y" } }))
        .status,
    ).toBe(404);
    expect((await t.request(`${PEOPLE}/${mine.id}`, { method: "DELETE", token: await parent(t) })).status).toBe(204);
    expect((await t.request(`${PEOPLE}/${mine.id}`, { token: await admin(t) })).status).toBe(404);
  });
});

describe("trusted people: PATCH .../status", () => {
  it("approves: who, when and why, with one audit row; a second decision is a 409", async () => {
    const t = makeTestApp();
    const p = await addPerson(t, personBody(await ownChild(t)), await parent(t));
    const res = await decide(t, PEOPLE, p.id, { status: "approved", reason: "ID checked" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: p.id,
      status: "approved",
      decidedBy: DEMO.northAdmin.id,
      decidedAt: t.clock.now().toISOString(),
      reason: "ID checked",
    });
    const rows = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "trusted-person"), eq(auditLog.recordId, p.id), eq(auditLog.action, "status")));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ schoolId: NORTH, actorType: "user", actorId: DEMO.northAdmin.id });
    expect(JSON.parse(rows[0]?.changes ?? "{}")).toMatchObject({ status: { old: "pending", new: "approved" } });
    const again = await decide(t, PEOPLE, p.id, { status: "rejected" });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toBe(
      `Trusted person ${p.id} is approved; only a pending request can be changed or decided`,
    );
  });

  it("of a concurrent approve and reject, exactly one wins and the other is a 409", async () => {
    const t = makeTestApp();
    for (let i = 0; i < 3; i++) {
      const p = await addPerson(t, personBody(await ownChild(t)));
      const token = await admin(t);
      const answers = await Promise.all([
        decide(t, PEOPLE, p.id, { status: "approved" }, token),
        decide(t, PEOPLE, p.id, { status: "rejected", reason: "Unknown person" }, token),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      const winner = (await answers.find((r) => r.status === 200)?.json()) as Person;
      const stored = (await (await t.request(`${PEOPLE}/${p.id}`, { token })).json()) as Person;
      expect(stored.status).toBe(winner.status);
      const audits = await t.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.entity, "trusted-person"), eq(auditLog.recordId, p.id), eq(auditLog.action, "status")));
      expect(audits).toHaveLength(1);
    }
  });

  it("is the school's: a parent or teacher gets 403; an unknown or invalid status is a 400", async () => {
    const t = makeTestApp();
    const p = await addPerson(t, personBody(await ownChild(t)));
    expect((await decide(t, PEOPLE, p.id, { status: "approved" }, await parent(t))).status).toBe(403);
    expect((await decide(t, PEOPLE, p.id, { status: "approved" }, await teacher(t))).status).toBe(403);
    expect((await decide(t, PEOPLE, p.id, { status: "pending" })).status).toBe(400);
    expect((await decide(t, PEOPLE, p.id, {})).status).toBe(400);
    expect((await decide(t, PEOPLE, p.id, { status: "rejected" }, await staff(t))).status).toBe(200);
  });
});

describe("trusted people: who sees what", () => {
  it("list, get and images: admin and staff see the school's, a parent their children's, a teacher nothing", async () => {
    const t = makeTestApp();
    const mineChild = await ownChild(t);
    const mine = await addPerson(t, personBody(mineChild), await parent(t));
    const others = await otherParent(t);
    const theirs = await addPerson(t, personBody(others.child), others.token);
    const south = await addPerson(
      t,
      personBody(await student(t, SOUTH)),
      await as(t, DEMO.southAdmin.id, SOUTH, "school-admin"),
    );

    const ids = async (token: string, query = "") => {
      const res = await t.request(`${PEOPLE}?pageSize=100${query}`, { token });
      expect(res.status).toBe(200);
      return ((await res.json()) as Page<Person>).data.map((r) => r.id);
    };
    for (const token of [await admin(t), await staff(t)]) {
      const seen = await ids(token);
      expect(seen).toEqual(expect.arrayContaining([mine.id, theirs.id]));
      expect(seen).not.toContain(south.id);
      expect((await t.request(`${PEOPLE}/${theirs.id}`, { token })).status).toBe(200);
      expect((await t.request(`${PEOPLE}/${theirs.id}/signed-url`, { token })).status).toBe(200);
    }
    const p = await parent(t);
    const seen = await ids(p);
    expect(seen).toContain(mine.id);
    expect(seen).not.toContain(theirs.id);
    expect(await ids(p, `&studentId=${others.child}`)).toEqual([]);
    expect(await ids(p, `&studentId=${mineChild}&status=pending`)).toEqual([mine.id]);
    expect((await t.request(`${PEOPLE}/${mine.id}`, { token: p })).status).toBe(200);
    expect((await t.request(`${PEOPLE}/${theirs.id}`, { token: p })).status).toBe(404);
    expect((await t.request(`${PEOPLE}/${mine.id}/signed-url`, { token: p })).status).toBe(200);
    expect((await t.request(`${PEOPLE}/${theirs.id}/signed-url`, { token: p })).status).toBe(404);
    expect(await ids(others.token)).toEqual([theirs.id]);

    const tt = await teacher(t);
    expect((await t.request(PEOPLE, { token: tt })).status).toBe(403);
    expect((await t.request(`${PEOPLE}/${mine.id}`, { token: tt })).status).toBe(403);
    expect((await t.request(`${PEOPLE}/${mine.id}/signed-url`, { token: tt })).status).toBe(403);
    // A teacher granted trusted.read alone sees only their own children's: none.
    const granted = await t.token(DEMO.northTeacher.id, { [NORTH]: ["trusted.read"] });
    expect(await ids(granted)).toEqual([]);
    const manager = await t.token(DEMO.northTeacher.id, { [NORTH]: ["trusted.read", "trusted.manage"] });
    expect(await ids(manager)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
  });
});

describe("trusted people: images", () => {
  it("signs an upload under {schoolId}/trusted-people/{id}/ and stores the key; staff get signed GETs", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const p = await addPerson(t, personBody(await ownChild(t)), token);
    const res = await t.request(`${PEOPLE}/${p.id}/signed-url`, {
      method: "PUT",
      token,
      body: { kind: "id-document", contentType: "application/pdf" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const upload = (await res.json()) as { id: number; key: string; url: string; method: string; headers: object };
    expect(upload.key).toBe(`${NORTH}/trusted-people/${p.id}/id-document`);
    expect(upload).toMatchObject({ id: p.id, method: "PUT", headers: { "content-type": "application/pdf" } });
    expect(new URL(upload.url).pathname).toMatch(new RegExp(`/${NORTH}/trusted-people/${p.id}/id-document$`));
    expect(new URL(upload.url).searchParams.get("X-Amz-Signature")).toBeTruthy();

    const stored = (await (await t.request(`${PEOPLE}/${p.id}`, { token })).json()) as Person;
    expect(stored).toMatchObject({ idDocument: upload.key, photo: null });
    const audit = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "trusted-person"), eq(auditLog.recordId, p.id)))
      .orderBy(desc(auditLog.id))
      .limit(1);
    expect(audit[0]?.action).toBe("upload");

    const images = await t.request(`${PEOPLE}/${p.id}/signed-url`, { token: await staff(t) });
    expect(images.status).toBe(200);
    const body = (await images.json()) as { photo: null; idDocument: { url: string; method: string } };
    expect(body.photo).toBeNull();
    expect(body.idDocument.method).toBe("GET");
    expect(new URL(body.idDocument.url).pathname).toMatch(/\/1\/trusted-people\/\d+\/id-document$/);
  });

  it("refuses a photo that is not an image (400) and an upload once decided (409)", async () => {
    const t = makeTestApp();
    const p = await addPerson(t, personBody(await ownChild(t)));
    const pdf = await t.request(`${PEOPLE}/${p.id}/signed-url`, {
      method: "PUT",
      token: await admin(t),
      body: { kind: "photo", contentType: "application/pdf" },
    });
    expect(pdf.status).toBe(400);
    expect((await decide(t, PEOPLE, p.id, { status: "approved" })).status).toBe(200);
    const late = await t.request(`${PEOPLE}/${p.id}/signed-url`, {
      method: "PUT",
      token: await admin(t),
      body: { kind: "photo", contentType: "image/png" },
    });
    expect(late.status).toBe(409);
  });
});

describe("trusted addresses", () => {
  it("a parent registers one for their own child; not for another's (404); a bad country is a 400", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const child = await ownChild(t);
    const a = await addAddress(t, addressBody(child, { latitude: 25.67, longitude: -100.31 }), token);
    expect(a).toMatchObject({ studentId: child, parentId: DEMO_PARENT_ID, status: "pending", routeStopId: null });
    const others = await otherParent(t);
    const res = await t.request(ADDRESSES, { method: "POST", token, body: addressBody(others.child) });
    expect(res.status).toBe(404);
    for (const country of ["mx", "XX", "MEX"]) {
      const bad = await t.request(ADDRESSES, { method: "POST", token, body: addressBody(child, { country }) });
      expect(bad.status, country).toBe(400);
      expect((await problem(bad)).errors?.[0]?.path).toBe("country");
    }
    const put = await t.request(`${ADDRESSES}/${a.id}`, { method: "PUT", token, body: { country: "ZZ" } });
    expect(put.status).toBe(400);
  });

  it("decides once (who, when, route stop, audit row), refuses a second decision and a change (409)", async () => {
    const t = makeTestApp();
    const a = await addAddress(t, addressBody(await ownChild(t)), await parent(t));
    expect(
      (await t.request(`${ADDRESSES}/${a.id}`, { method: "PUT", token: await parent(t), body: { number: "14" } }))
        .status,
    ).toBe(204);
    const res = await decide(t, ADDRESSES, a.id, { status: "approved", routeStopId: 7 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: "approved",
      routeStopId: 7,
      decidedBy: DEMO.northAdmin.id,
      number: "14",
    });
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "trusted-address"), eq(auditLog.recordId, a.id), eq(auditLog.action, "status")));
    expect(audits).toHaveLength(1);
    const again = await decide(t, ADDRESSES, a.id, { status: "rejected" });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toMatch(/only a pending request can be changed or decided$/);
    expect(
      (await t.request(`${ADDRESSES}/${a.id}`, { method: "PUT", token: await parent(t), body: { number: "1" } }))
        .status,
    ).toBe(409);
  });

  it("of a concurrent approve and reject, exactly one wins", async () => {
    const t = makeTestApp();
    const a = await addAddress(t, addressBody(await ownChild(t)));
    const token = await admin(t);
    const answers = await Promise.all([
      decide(t, ADDRESSES, a.id, { status: "approved" }, token),
      decide(t, ADDRESSES, a.id, { status: "rejected" }, token),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it("list and get: staff the school's, a parent their children's, a teacher 403", async () => {
    const t = makeTestApp();
    const mine = await addAddress(t, addressBody(await ownChild(t)), await parent(t));
    const others = await otherParent(t);
    const theirs = await addAddress(t, addressBody(others.child), others.token);
    const ids = async (token: string) =>
      ((await (await t.request(`${ADDRESSES}?pageSize=100`, { token })).json()) as Page<Address>).data.map((r) => r.id);
    for (const token of [await admin(t), await staff(t)]) {
      expect(await ids(token)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
      expect((await t.request(`${ADDRESSES}/${theirs.id}`, { token })).status).toBe(200);
    }
    const p = await parent(t);
    expect(await ids(p)).toContain(mine.id);
    expect(await ids(p)).not.toContain(theirs.id);
    expect((await t.request(`${ADDRESSES}/${theirs.id}`, { token: p })).status).toBe(404);
    expect((await t.request(`${ADDRESSES}/${mine.id}`, { token: p })).status).toBe(200);
    expect((await t.request(ADDRESSES, { token: await teacher(t) })).status).toBe(403);
    expect((await t.request(`${ADDRESSES}/${mine.id}`, { token: await teacher(t) })).status).toBe(403);
  });
});

describe("trusted people and addresses alike (one definition serves both)", () => {
  const kinds = [
    { path: PEOPLE, entity: "trusted-person", body: personBody, change: { name: "Laura G." } },
    { path: ADDRESSES, entity: "trusted-address", body: addressBody, change: { number: "14" } },
  ];

  it("filter by student and status; delete in any state (204, audited), another parent's is a 404", async () => {
    const t = makeTestApp();
    for (const kind of kinds) {
      const token = await parent(t);
      const child = await ownChild(t);
      const add = async (body: Record<string, unknown>, as?: string) => {
        const res = await t.request(kind.path, { method: "POST", token: as ?? token, body });
        expect(res.status, `${kind.path} ${await res.clone().text()}`).toBe(201);
        return (await res.json()) as { id: number };
      };
      const first = await add(kind.body(child));
      const second = await add(kind.body(child));
      expect((await decide(t, kind.path, second.id, { status: "rejected", reason: "No" })).status).toBe(200);
      const ids = async (query: string) =>
        (
          (await (await t.request(`${kind.path}?pageSize=100&${query}`, { token })).json()) as Page<{ id: number }>
        ).data.map((r) => r.id);
      expect(await ids(`studentId=${child}`), kind.path).toEqual([first.id, second.id]);
      expect(await ids(`studentId=${child}&status=pending`), kind.path).toEqual([first.id]);
      expect(await ids(`studentId=${child}&status=rejected`), kind.path).toEqual([second.id]);
      expect((await t.request(`${kind.path}?status=withdrawn`, { token })).status, kind.path).toBe(400);

      const others = await otherParent(t);
      const theirs = await add(kind.body(others.child), others.token);
      const del = (id: number, as = token) => t.request(`${kind.path}/${id}`, { method: "DELETE", token: as });
      expect((await del(theirs.id)).status, kind.path).toBe(404);
      expect((await del(second.id)).status, `${kind.path} decided`).toBe(204);
      expect((await del(first.id)).status, `${kind.path} pending`).toBe(204);
      expect((await t.request(`${kind.path}/${first.id}`, { token })).status, kind.path).toBe(404);
      const audits = await t.db
        .select({ recordId: auditLog.recordId })
        .from(auditLog)
        .where(
          and(
            eq(auditLog.entity, kind.entity),
            eq(auditLog.action, "delete"),
            inArray(auditLog.recordId, [first.id, second.id, theirs.id]),
          ),
        );
      expect(audits.map((a) => a.recordId).sort(), kind.path).toEqual([first.id, second.id].sort());
    }
  });

  it("a change: 204 while pending with its audit row, 404 for another parent's, 409 once decided, 400 when empty", async () => {
    const t = makeTestApp();
    for (const kind of kinds) {
      const token = await parent(t);
      const res = await t.request(kind.path, { method: "POST", token, body: kind.body(await ownChild(t)) });
      const { id } = (await res.json()) as { id: number };
      const put = (body: Record<string, unknown>, as = token) =>
        t.request(`${kind.path}/${id}`, { method: "PUT", token: as, body });
      expect((await put({})).status, kind.path).toBe(400);
      expect((await put(kind.change, (await otherParent(t)).token)).status, kind.path).toBe(404);
      expect((await put(kind.change)).status, kind.path).toBe(204);
      const [audit] = await t.db
        .select({ action: auditLog.action })
        .from(auditLog)
        .where(and(eq(auditLog.entity, kind.entity), eq(auditLog.recordId, id)))
        .orderBy(desc(auditLog.id))
        .limit(1);
      expect(audit?.action, kind.path).toBe("update");
      expect(await (await t.request(`${kind.path}/${id}`, { token })).json(), kind.path).toMatchObject(kind.change);
      expect((await decide(t, kind.path, id, { status: "approved" })).status, kind.path).toBe(200);
      const late = await put(kind.change);
      expect(late.status, kind.path).toBe(409);
      expect((await problem(late)).detail, kind.path).toMatch(
        /is approved; only a pending request can be changed or decided$/,
      );
    }
  });

  it("the decision body: a route stop only for an address; left out, it stays as it was", async () => {
    const t = makeTestApp();
    const person = await addPerson(t, personBody(await ownChild(t)));
    expect((await decide(t, PEOPLE, person.id, { status: "approved", routeStopId: 3 })).status).toBe(400);
    const address = await addAddress(t, addressBody(await ownChild(t)));
    const res = await decide(t, ADDRESSES, address.id, { status: "rejected" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "rejected", routeStopId: null, reason: null });
  });
});

describe("only approved ones count", () => {
  it("approvedTrustedPeople / approvedTrustedAddresses and their JSON sub-selects", async () => {
    const t = makeTestApp();
    const child = await ownChild(t);
    const yes = await addPerson(t, personBody(child, { name: "Ana Approved" }));
    const no = await addPerson(t, personBody(child, { name: "Rita Rejected" }));
    await addPerson(t, personBody(child, { name: "Pedro Pending" }));
    const home = await addAddress(t, addressBody(child, { street: "Approved St" }));
    await addAddress(t, addressBody(child, { street: "Pending St" }));
    expect((await decide(t, PEOPLE, yes.id, { status: "approved" })).status).toBe(200);
    expect((await decide(t, PEOPLE, no.id, { status: "rejected" })).status).toBe(200);
    expect((await decide(t, ADDRESSES, home.id, { status: "approved" })).status).toBe(200);

    const ctx = jobCtx(t.deps, "test", NORTH);
    expect((await approvedTrustedPeople(ctx, child)).map((p) => p.name)).toEqual(["Ana Approved"]);
    expect((await approvedTrustedAddresses(ctx, child)).map((a) => a.street)).toEqual(["Approved St"]);
    expect(await approvedTrustedPeople(jobCtx(t.deps, "test", SOUTH), child)).toEqual([]);

    const [row] = await t.db
      .select({ people: trustedPeopleJson(students.id), addresses: trustedAddressesJson(students.id) })
      .from(students)
      .where(eq(students.id, child));
    expect(JSON.parse(row?.people ?? "null")).toEqual([
      { id: yes.id, name: "Ana Approved", relationship: "aunt", phone: "+525512345678" },
    ]);
    expect(JSON.parse(row?.addresses ?? "null")).toEqual([
      { id: home.id, street: "Approved St", number: "12", city: "Monterrey", country: "MX", routeStopId: null },
    ]);
    const [none] = await t.db
      .select({ people: trustedPeopleJson(students.id) })
      .from(students)
      .where(eq(students.id, await student(t)));
    expect(JSON.parse(none?.people ?? "null")).toEqual([]);
  });
});

/**
 * Who may change a request: the rule of create holds for every operation a guardian or their
 * delegate can call that writes one (update, delete, the image upload). A guardian changes only the
 * requests they registered (or the parent they act for registered), and only while the school lets
 * them change the way home (not restricted, `canRequestChanges`); staff change any.
 */
describe("trusted people and addresses: who may change a request", () => {
  type Kind = {
    label: string;
    path: string;
    entity: string;
    table: typeof trustedPeople | typeof trustedAddresses;
    body: (studentId: number, extra?: Record<string, unknown>) => Record<string, unknown>;
    change: Record<string, unknown>;
  };
  const PERSON: Kind = {
    label: "Trusted person",
    path: PEOPLE,
    entity: "trusted-person",
    table: trustedPeople,
    body: personBody,
    change: { name: "Mallory Impostor", phone: "+1 555 000 0666" },
  };
  const ADDRESS: Kind = {
    label: "Trusted address",
    path: ADDRESSES,
    entity: "trusted-address",
    table: trustedAddresses,
    body: addressBody,
    change: { street: "Calle Falsa", number: "123" },
  };

  /** The request an operation acts on, and who stands around it. */
  type Scene = { kind: Kind; id: number; child: number; owner: number | null; caller: number };

  /**
   * Every operation a guardian or delegate can call that writes a request: one line each. `state`
   * is the request's state when it is called (one the operation accepts from whoever may). For
   * create, the request's `owner` is the parent named as its registrant.
   */
  const OPERATIONS: {
    name: string;
    kinds: Kind[];
    state: "pending" | "approved";
    call: (t: TestApp, s: Scene, token: string) => Promise<Response>;
  }[] = [
    {
      name: "create",
      kinds: [PERSON, ADDRESS],
      state: "pending",
      call: (t, s, token) =>
        t.request(s.kind.path, {
          method: "POST",
          token,
          body: s.kind.body(s.child, s.owner === s.caller || s.owner === null ? {} : { parentId: s.owner }),
        }),
    },
    {
      name: "update",
      kinds: [PERSON, ADDRESS],
      state: "pending",
      call: (t, s, token) => t.request(`${s.kind.path}/${s.id}`, { method: "PUT", token, body: s.kind.change }),
    },
    {
      name: "delete a pending one",
      kinds: [PERSON, ADDRESS],
      state: "pending",
      call: (t, s, token) => t.request(`${s.kind.path}/${s.id}`, { method: "DELETE", token }),
    },
    {
      name: "delete an approved one",
      kinds: [PERSON, ADDRESS],
      state: "approved",
      call: (t, s, token) => t.request(`${s.kind.path}/${s.id}`, { method: "DELETE", token }),
    },
    {
      name: "image upload (signed URL)",
      kinds: [PERSON],
      state: "pending",
      call: (t, s, token) =>
        t.request(`${s.kind.path}/${s.id}/signed-url`, {
          method: "PUT",
          token,
          body: { kind: "photo", contentType: "image/jpeg" },
        }),
    },
  ];

  const barred = (reason: string) => (s: Scene) =>
    `Parent ${s.caller} may not authorise trusted people or addresses for student ${s.child}: ${reason}`;
  const RESTRICTED = barred("the school has restricted this guardian (may not pick up)");
  const NO_CHANGES = barred("this guardian may not request changes to the student's way home");
  /** The 403 of a request someone else registered (for create: naming someone else as registrant). */
  const notTheirs = (op: string) => (s: Scene) =>
    op === "create"
      ? `Parent ${s.owner} is not you or a parent you act for: a parent registers in their own name`
      : `${s.kind.label} ${s.id} was registered by ${s.owner === null ? "the school" : "another guardian"}; only ${
          s.owner === null ? "the school" : "they or the school"
        } may change or withdraw it`;

  /** The caller (the demo parent, or their delegate), the link the school gave them, whose request. */
  const CASES: {
    name: string;
    link: Partial<typeof guardians.$inferInsert>;
    owner: "caller" | "other" | "school";
    via?: "delegate";
    status: number;
    detail: (op: string) => (s: Scene) => string;
  }[] = [
    {
      name: "a guardian the school restricted, their own request",
      link: { restricted: true, restrictionReason: "Court order" },
      owner: "caller",
      status: 422,
      detail: () => RESTRICTED,
    },
    {
      name: "a guardian restricted from a later date, their own request",
      link: { restricted: true, restrictionReason: "Court order", restrictionFrom: "2099-01-01" },
      owner: "caller",
      status: 422,
      detail: () => RESTRICTED,
    },
    {
      name: "a guardian who may not request changes, their own request",
      link: { canRequestChanges: false },
      owner: "caller",
      status: 422,
      detail: () => NO_CHANGES,
    },
    {
      name: "a delegate of a restricted guardian, that guardian's request",
      link: { restricted: true, restrictionReason: "Court order" },
      owner: "caller",
      via: "delegate",
      status: 422,
      detail: () => RESTRICTED,
    },
    {
      name: "a guardian, the other guardian's request",
      link: {},
      owner: "other",
      status: 403,
      detail: notTheirs,
    },
    {
      name: "a restricted guardian, the other guardian's request",
      link: { restricted: true, restrictionReason: "Court order" },
      owner: "other",
      status: 403,
      detail: notTheirs,
    },
    {
      name: "a delegate of a guardian, the other guardian's request",
      link: {},
      owner: "other",
      via: "delegate",
      status: 403,
      detail: notTheirs,
    },
    {
      name: "a guardian, the school's own request",
      link: {},
      owner: "school",
      status: 403,
      detail: notTheirs,
    },
  ];

  /** A child of the demo parent (the caller) and of another parent (the mother). */
  async function family(t: TestApp) {
    const child = await student(t);
    await guardian(t, child, DEMO_PARENT_ID);
    const mother = await otherParent(t);
    await guardian(t, child, mother.id);
    return { child, mother };
  }

  /** A delegate of the demo parent, valid today; their token. */
  async function delegateOfParent(t: TestApp) {
    const made = await t.request("/api/v1/delegate", {
      method: "POST",
      token: await parent(t),
      body: { phone: newPhone(), firstName: "Dele", validFrom: "2026-11-01", validUntil: "2026-12-31" },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const { userId } = (await made.json()) as { userId: number };
    return as(t, userId, NORTH, "parent");
  }

  /** The kind's rows of the student and the kind's audit trail: what a refused call must leave alone. */
  async function snapshot(t: TestApp, kind: Kind, child: number) {
    const rows = await t.db.select().from(kind.table).where(eq(kind.table.studentId, child));
    const audits = await t.db.select({ id: auditLog.id }).from(auditLog).where(eq(auditLog.entity, kind.entity));
    return { rows, audits: audits.length };
  }

  for (const c of CASES) {
    for (const op of OPERATIONS) {
      // The school's own request cannot be asked for in someone's name: create has no such case.
      if (op.name === "create" && c.owner === "school") continue;
      for (const kind of op.kinds) {
        it(`${c.name}: ${op.name} of a ${kind.label.toLowerCase()} is a ${c.status}, nothing changes`, async () => {
          const t = makeTestApp();
          const { child, mother } = await family(t);
          const owner = c.owner === "caller" ? DEMO_PARENT_ID : c.owner === "other" ? mother.id : null;
          // The request, registered by staff in its owner's name, in the state the operation needs.
          const made = await t.request(kind.path, {
            method: "POST",
            token: await staff(t),
            body: kind.body(child, owner === null ? {} : { parentId: owner }),
          });
          expect(made.status, await made.clone().text()).toBe(201);
          const { id } = (await made.json()) as { id: number };
          if (op.state === "approved")
            expect((await decide(t, kind.path, id, { status: "approved" })).status).toBe(200);
          const token = c.via === "delegate" ? await delegateOfParent(t) : await parent(t);
          if (Object.keys(c.link).length) {
            await t.db
              .update(guardians)
              .set(c.link)
              .where(and(eq(guardians.studentId, child), eq(guardians.parentId, DEMO_PARENT_ID)));
          }
          const scene: Scene = { kind, id, child, owner, caller: DEMO_PARENT_ID };
          // The caller sees the request (a guardian reads every request of their children).
          if (op.name !== "create") expect((await t.request(`${kind.path}/${id}`, { token })).status).toBe(200);

          const before = await snapshot(t, kind, child);
          const res = await op.call(t, scene, token);
          expect(res.status, await res.clone().text()).toBe(c.status);
          expect((await problem(res)).detail).toBe(c.detail(op.name)(scene));
          expect(await snapshot(t, kind, child)).toEqual(before);
        });
      }
    }
  }

  it("the registrant (or their delegate) changes, uploads and withdraws their own; staff any; an ended restriction no longer counts", async () => {
    const t = makeTestApp();
    const { child, mother } = await family(t);
    // A restriction that ended is no restriction.
    await t.db
      .update(guardians)
      .set({ restricted: true, restrictionReason: "Old order", restrictionUntil: "2000-01-01" })
      .where(and(eq(guardians.studentId, child), eq(guardians.parentId, DEMO_PARENT_ID)));
    const mine = await addPerson(t, personBody(child), await parent(t));
    const theirs = await addPerson(t, personBody(child), mother.token);
    const address = await addAddress(t, addressBody(child), await delegateOfParent(t));
    expect(address.parentId).toBe(DEMO_PARENT_ID);
    const put = (path: string, id: number, body: Record<string, unknown>, token: string) =>
      t.request(`${path}/${id}`, { method: "PUT", token, body });

    expect((await put(PEOPLE, mine.id, { name: "Laura G." }, await parent(t))).status).toBe(204);
    expect((await put(PEOPLE, mine.id, { name: "Laura Gómez" }, await delegateOfParent(t))).status).toBe(204);
    expect((await put(ADDRESSES, address.id, { number: "14" }, await parent(t))).status).toBe(204);
    const upload = await t.request(`${PEOPLE}/${mine.id}/signed-url`, {
      method: "PUT",
      token: await delegateOfParent(t),
      body: { kind: "photo", contentType: "image/jpeg" },
    });
    expect(upload.status, await upload.clone().text()).toBe(200);
    // The mother's own, by the mother; then by staff.
    expect((await put(PEOPLE, theirs.id, { relationship: "grandmother" }, mother.token)).status).toBe(204);
    expect((await put(PEOPLE, theirs.id, { relationship: "grandma" }, await staff(t))).status).toBe(204);
    const read = (await (await t.request(`${PEOPLE}/${theirs.id}`, { token: await parent(t) })).json()) as Person;
    expect(read).toMatchObject({ relationship: "grandma", status: "pending", parentId: mother.id });

    // An approved request is not edited (the school approved that name and phone): 409, still approved.
    expect((await decide(t, PEOPLE, mine.id, { status: "approved" })).status).toBe(200);
    const late = await put(PEOPLE, mine.id, { phone: "+1 555 000 0777" }, await parent(t));
    expect(late.status).toBe(409);
    const kept = (await (await t.request(`${PEOPLE}/${mine.id}`, { token: await parent(t) })).json()) as Person;
    expect(kept).toMatchObject({ name: "Laura Gómez", status: "approved" });

    // Withdrawn by its registrant's delegate, and the mother's by staff.
    const del = (path: string, id: number, token: string) => t.request(`${path}/${id}`, { method: "DELETE", token });
    expect((await del(PEOPLE, mine.id, await delegateOfParent(t))).status).toBe(204);
    expect((await del(ADDRESSES, address.id, await parent(t))).status).toBe(204);
    expect((await del(PEOPLE, theirs.id, await admin(t))).status).toBe(204);
  });
});
