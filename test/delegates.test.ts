/**
 * Delegates: a person who acts for a parent in the app between two dates,
 * with the parent role's permissions and no more. Staff name delegates for any parent of the
 * school, a parent for themself; a parent sees and manages only their own. Reversed dates are a
 * 400, another school's parent a 404, the same person twice for one parent a 409 (also racing).
 * A delegate signing in within the dates (in the school's time zone) gets the parent role's
 * permissions in that school; outside them, none.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { users } from "../src/db/schema/core";
import { PermissionSet } from "../src/lib/access";
import type { MemberCtx } from "../src/lib/context";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { actingFor } from "../src/modules/delegate/acting";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/delegate";
/** The demo parent's profile in Northside (seed/demo.sql). */
const DEMO_PARENT_ID = 1;

type Delegate = {
  id: number;
  parentId: number;
  parentUserId: number;
  userId: number;
  firstName: string;
  lastName: string;
  phone: string | null;
  validFrom: string;
  validUntil: string;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0], extra: string[] = []) =>
  t.token(userId, { [school]: [...grantsOf(role).map((p) => p.name), ...extra] });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");
const northParent = (t: TestApp) => as(t, DEMO.northParent.id, NORTH, "parent");

let next = 0;
const newPhone = () => `+1555${5_300_000 + ++next}`;

const dates = { validFrom: "2026-11-01", validUntil: "2026-12-31" };

async function add(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Delegate;
}

async function newParent(t: TestApp, token?: string) {
  const res = await t.request("/api/v1/parent", {
    method: "POST",
    token: token ?? (await northAdmin(t)),
    body: { phone: newPhone(), firstName: "Padre", relationship: "father" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number; userId: number; phone: string };
}

/** The permission ids an access token grants in a school (its `sch` claim). */
function grantsIn(accessToken: string, school: number): number[] | undefined {
  const payload = accessToken.split(".")[1] ?? "";
  const claims = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/"))) as {
    sch: Record<string, string>;
  };
  const bitmap = claims.sch[String(school)];
  return bitmap === undefined ? undefined : PermissionSet.decode(bitmap);
}

describe("delegates", () => {
  it("staff name a delegate for a parent: an invited user with no role, the record read back", async () => {
    const t = makeTestApp();
    const parent = await newParent(t);
    const phone = newPhone();
    const d = await add(t, { parentId: parent.id, phone, firstName: "Rosa", lastName: "Ramirez", ...dates });
    expect(d).toMatchObject({ parentId: parent.id, parentUserId: parent.userId, firstName: "Rosa", phone, ...dates });
    const [user] = await t.db.select().from(users).where(eq(users.id, d.userId));
    expect(user?.status).toBe("invited");
    const roles = await t.request(`/api/v1/parent?pageSize=100`, { token: await northAdmin(t) });
    expect(((await roles.json()) as Page<{ userId: number }>).data.map((p) => p.userId)).not.toContain(d.userId);
    const got = await t.request(`${PATH}/${d.id}`, { token: await northAdmin(t) });
    expect(await got.json()).toEqual(d);
  });

  it("audits who the delegate is, also when the person was invited by this request", async () => {
    const t = makeTestApp();
    const parent = await newParent(t);
    const d = await add(t, { parentId: parent.id, phone: newPhone(), firstName: "Nueva", ...dates });
    const [row] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "delegate"), eq(auditLog.recordId, d.id)));
    expect(JSON.parse(row?.changes ?? "null")).toEqual({
      parentId: { old: null, new: parent.id },
      userId: { old: null, new: d.userId },
      validFrom: { old: null, new: dates.validFrom },
      validUntil: { old: null, new: dates.validUntil },
    });
  });

  it("refuses reversed or impossible dates (400), another school's parent (404), a repeat (409)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const parent = await newParent(t);
    const phone = newPhone();
    const post = (body: Record<string, unknown>) => t.request(PATH, { method: "POST", token, body });
    const reversed = await post({
      parentId: parent.id,
      phone,
      firstName: "R",
      validFrom: "2026-12-02",
      validUntil: "2026-12-01",
    });
    expect(reversed.status).toBe(400);
    expect((await problem(reversed)).errors?.[0]?.path).toBe("validUntil");
    expect(
      (await post({ parentId: parent.id, phone, firstName: "R", validFrom: "2026-02-30", validUntil: "2026-12-01" }))
        .status,
    ).toBe(400);
    expect((await post({ parentId: parent.id, phone, firstName: "R", validFrom: "2026-12-01" })).status).toBe(400);
    const south = await newParent(t, await southAdmin(t));
    expect((await post({ parentId: south.id, phone, firstName: "R", ...dates })).status).toBe(404);
    await add(t, { parentId: parent.id, phone, firstName: "R", ...dates });
    const again = await post({ parentId: parent.id, phone, firstName: "R", ...dates });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toBe("This person is already a delegate of this parent");
    // A parent cannot delegate to themself; staff must name the parent.
    expect((await post({ parentId: parent.id, phone: parent.phone, firstName: "R", ...dates })).status).toBe(422);
    expect((await post({ phone: newPhone(), firstName: "R", ...dates })).status).toBe(422);
    // Over before it starts (the clock reads 2026-11-23): 422, on create and on update.
    const over = await post({
      parentId: parent.id,
      phone: newPhone(),
      firstName: "R",
      validFrom: "2026-11-01",
      validUntil: "2026-11-10",
    });
    expect(over.status).toBe(422);
    expect((await problem(over)).detail).toBe("validUntil 2026-11-10 has passed: the delegation would never start");
    const made = await add(t, { parentId: parent.id, phone: newPhone(), firstName: "R", ...dates });
    const shortened = await t.request(`${PATH}/${made.id}`, {
      method: "PUT",
      token,
      body: { validFrom: "2026-11-01", validUntil: "2026-11-10" },
    });
    expect(shortened.status).toBe(422);
  });

  it("makes one delegate of concurrent identical requests: one 201, the rest 409", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const parent = await newParent(t);
    const body = { parentId: parent.id, phone: newPhone(), firstName: "Race", ...dates };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.request(PATH, { method: "POST", token, body })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it("a parent names, sees and manages only their own delegates", async () => {
    const t = makeTestApp();
    const mine = await add(t, { phone: newPhone(), firstName: "Mine", ...dates }, await northParent(t));
    expect(mine.parentId).toBe(DEMO_PARENT_ID);
    // Naming their own profile explicitly works too; another parent's is a 404.
    await add(t, { parentId: DEMO_PARENT_ID, phone: newPhone(), firstName: "Mine2", ...dates }, await northParent(t));
    const other = await newParent(t);
    const theirs = await add(t, { parentId: other.id, phone: newPhone(), firstName: "Theirs", ...dates });
    const token = await northParent(t);
    const refused = await t.request(PATH, {
      method: "POST",
      token,
      body: { parentId: other.id, phone: newPhone(), firstName: "X", ...dates },
    });
    expect(refused.status).toBe(404);
    const page = (await (await t.request(`${PATH}?pageSize=100`, { token })).json()) as Page<Delegate>;
    expect(page.data.every((d) => d.parentId === DEMO_PARENT_ID)).toBe(true);
    expect(page.data.map((d) => d.id)).toContain(mine.id);
    expect(page.data[0]?.phone).not.toBeNull();
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { validUntil: "2027-01-01" }],
      ["DELETE", undefined],
    ] as const) {
      expect((await t.request(`${PATH}/${theirs.id}`, { method, token, body })).status).toBe(404);
    }
    expect(
      (await t.request(`${PATH}/${mine.id}`, { method: "PUT", token, body: { validUntil: "2027-01-01" } })).status,
    ).toBe(204);
    expect((await t.request(`${PATH}/${mine.id}`, { method: "DELETE", token })).status).toBe(204);
    // Staff see every delegate of the school.
    const all = (await (
      await t.request(`${PATH}?pageSize=100`, { token: await northAdmin(t) })
    ).json()) as Page<Delegate>;
    expect(all.data.map((d) => d.id)).toContain(theirs.id);
    // A teacher holds no delegate permission.
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    expect((await t.request(PATH, { token: teacher })).status).toBe(403);
    // A teacher granted delegate.read and parent.read sees them all, phones masked without
    // parent.contact (or user.contact).
    const reader = await as(t, DEMO.northTeacher.id, NORTH, "teacher", ["delegate.read", "parent.read"]);
    const seen = (await (await t.request(`${PATH}?parentId=${other.id}`, { token: reader })).json()) as Page<Delegate>;
    expect(seen.data).toHaveLength(1);
    expect(seen.data[0]).toMatchObject({ id: theirs.id, phone: expect.stringMatching(/^\+1\d•+\d\d$/) });
  });

  it("changes the dates (one alone is checked against the other); reversed is a 400", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const parent = await newParent(t);
    const d = await add(t, { parentId: parent.id, phone: newPhone(), firstName: "Dates", ...dates });
    const put = (body: unknown) => t.request(`${PATH}/${d.id}`, { method: "PUT", token, body });
    expect((await put({ validFrom: "2027-01-01" })).status).toBe(400);
    expect((await put({ validFrom: "2026-12-05", validUntil: "2026-12-04" })).status).toBe(400);
    expect((await put({})).status).toBe(400);
    expect((await put({ firstName: "Renamed" })).status).toBe(400);
    expect((await put({ validFrom: "2026-12-31" })).status).toBe(204);
    const got = (await (await t.request(`${PATH}/${d.id}`, { token })).json()) as Delegate;
    expect(got).toMatchObject({ validFrom: "2026-12-31", validUntil: "2026-12-31" });
    expect((await t.request(`${PATH}/${d.id}`, { method: "DELETE", token: await southAdmin(t) })).status).toBe(404);
  });

  it("reads a page and a record in one D1 call each", async () => {
    const { t, measure } = countingTestApp();
    const token = await northAdmin(t);
    const parent = await newParent(t);
    const d = await add(t, { parentId: parent.id, phone: newPhone(), firstName: "Count", ...dates });
    const listed = await measure(() => t.request(`${PATH}?parentId=${parent.id}`, { token }));
    expect(listed.calls).toBe(1);
    const got = await measure(() => t.request(`${PATH}/${d.id}`, { token }));
    expect(got.res.status).toBe(200);
    expect(got.calls).toBe(1);
    const asParent = await measure(async () => t.request(PATH, { token: await northParent(t) }));
    expect(asParent.calls).toBe(1);
  });
});

describe("a delegate's rights", () => {
  const parentPermissions = grantsOf("parent")
    .map((p) => p.id)
    .sort((a, b) => a - b);

  it("signing in within the dates, the token grants the parent role's permissions in that school; outside, none", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    await add(t, {
      parentId: DEMO_PARENT_ID,
      phone,
      firstName: "Abuela",
      validFrom: "2026-11-25",
      validUntil: "2026-11-27",
    });
    // The clock reads 2026-11-23: not yet.
    const before = await t.signIn(phone);
    expect(grantsIn(before.accessToken, NORTH)).toBeUndefined();
    // A refresh on the first day recomputes them.
    t.clock.current = new Date("2026-11-25T15:00:00.000Z");
    const refreshed = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: before.refreshToken },
    });
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    expect(grantsIn(((await refreshed.json()) as { accessToken: string }).accessToken, NORTH)).toEqual(
      parentPermissions,
    );
    const inside = await t.signIn(phone);
    expect(grantsIn(inside.accessToken, NORTH)).toEqual(parentPermissions);
    expect(grantsIn(inside.accessToken, SOUTH)).toBeUndefined();
    // /user/me says where and for whom they act, so the app can pick the school.
    const me = await t.request("/api/v1/user/me", { token: inside.accessToken });
    expect(await me.json()).toMatchObject({
      schools: [
        {
          id: NORTH,
          roles: [],
          actsFor: [{ parentId: DEMO_PARENT_ID, validFrom: "2026-11-25", validUntil: "2026-11-27" }],
        },
      ],
    });
    // As the parent's delegate they are a member of the school: they read parent-level routes.
    const res = await t.request("/api/v1/delegate", { token: inside.accessToken });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Page<Delegate>).total).toBe(0);
    // A staff-level route stays closed.
    expect((await t.request("/api/v1/parent/export", { token: inside.accessToken })).status).toBe(403);
    // The day after the last: none.
    t.clock.current = new Date("2026-11-28T15:00:00.000Z");
    const after = await t.signIn(phone);
    expect(grantsIn(after.accessToken, NORTH)).toBeUndefined();
    expect(await (await t.request("/api/v1/user/me", { token: after.accessToken })).json()).toMatchObject({
      schools: [],
    });
  });

  it("dates are the school's: the last day lasts until midnight in the school's time zone", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    await add(t, {
      parentId: DEMO_PARENT_ID,
      phone,
      firstName: "Tia",
      validFrom: "2026-11-20",
      validUntil: "2026-11-23",
    });
    // 03:00 UTC on the 24th is 21:00 on the 23rd in Mexico City (UTC-6): still valid.
    t.clock.current = new Date("2026-11-24T03:00:00.000Z");
    expect(grantsIn((await t.signIn(phone)).accessToken, NORTH)).toEqual(parentPermissions);
    // 07:00 UTC on the 24th is 01:00 on the 24th there: over.
    t.clock.current = new Date("2026-11-24T07:00:00.000Z");
    expect(grantsIn((await t.signIn(phone)).accessToken, NORTH)).toBeUndefined();
  });

  it("no more rights than the parent: a parent made inactive (may not sign in) gives their delegate none", async () => {
    const t = makeTestApp();
    const parent = await newParent(t);
    const phone = newPhone();
    const d = await add(t, { parentId: parent.id, phone, firstName: "Vecino", ...dates });
    expect(grantsIn((await t.signIn(phone)).accessToken, NORTH)).toEqual(parentPermissions);
    const admin = await northAdmin(t);
    const off = await t.request(`/api/v1/user/${parent.userId}`, {
      method: "PUT",
      token: admin,
      body: { status: "inactive" },
    });
    expect(off.status, await off.clone().text()).toBe(204);
    expect(grantsIn((await t.signIn(phone)).accessToken, NORTH)).toBeUndefined();
    const ctx: MemberCtx = {
      deps: t.deps,
      actor: { type: "user", userId: d.userId },
      schoolId: NORTH,
      userId: d.userId,
      isSuperAdmin: false,
      can: () => false,
      requestId: null,
    };
    expect(await actingFor(ctx)).toEqual([d.userId]);
    // An access token still in hand: /user/me no longer lists the parent they acted for.
    const stale = await t.token(d.userId, { [NORTH]: grantsOf("parent").map((p) => p.name) });
    expect(await (await t.request("/api/v1/user/me", { token: stale })).json()).toMatchObject({ schools: [] });
    // Active again: the delegation works again.
    await t.request(`/api/v1/user/${parent.userId}`, { method: "PUT", token: admin, body: { status: "active" } });
    expect(grantsIn((await t.signIn(phone)).accessToken, NORTH)).toEqual(parentPermissions);
  });

  it("actingFor: the caller and the parents whose valid delegate they are today", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const d = await add(t, { parentId: DEMO_PARENT_ID, phone, firstName: "Primo", ...dates });
    const ctx = (userId: number, schoolId = NORTH): MemberCtx => ({
      deps: t.deps,
      actor: { type: "user", userId },
      schoolId,
      userId,
      isSuperAdmin: false,
      can: () => false,
      requestId: null,
    });
    expect(await actingFor(ctx(d.userId))).toEqual([d.userId, DEMO.northParent.id]);
    expect(await actingFor(ctx(d.userId, SOUTH))).toEqual([d.userId]);
    expect(await actingFor(ctx(DEMO.northParent.id))).toEqual([DEMO.northParent.id]);
    t.clock.current = new Date("2027-01-02T15:00:00.000Z");
    expect(await actingFor(ctx(d.userId))).toEqual([d.userId]);
  });
});
