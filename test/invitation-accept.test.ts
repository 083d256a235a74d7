/**
 * Accepting a go-home invitation: the child's exit permission is asked through the rules
 * (`askExitPermissions`): the permission made is recorded on the child's row (an auto pickup by the
 * inviting guardian, linked to the invitation), or the rules' refusal, which both families read.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { guardians, students } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { grantsOf } from "../src/modules";
import { uniq } from "./fixture-kit";
import { DEMO, makeTestApp, type TestApp } from "./helpers";

const NORTH = 1;
const INV = "/api/v1/invitation";
const ISR = "/api/v1/invitation-student-response";
/** The demo parent's profile in Northside (seed/demo.sql): user 4. */
const DEMO_PARENT_ID = 1;

type Child = {
  id: number;
  studentId: number;
  answer: string;
  exitPermissionId: number | null;
  failures: unknown[] | null;
};

const as = (t: TestApp, userId: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [NORTH]: grantsOf(role).map((p) => p.name) });

let next = 0;

/** Another family of Northside: a parent and their child (elementary). */
async function family(t: TestApp) {
  const res = await t.request("/api/v1/parent", {
    method: "POST",
    token: await as(t, DEMO.northAdmin.id, "school-admin"),
    body: { phone: `+1555${5_900_000 + ++next}`, firstName: "Otra", relationship: "mother" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const p = (await res.json()) as { id: number; userId: number };
  const [kid] = await t.db
    .insert(students)
    .values(withSearch(students, { schoolId: NORTH, firstName: uniq("Ana"), lastName: "Invited", level: "elementary" }))
    .returning({ id: students.id });
  if (!kid) throw new Error("no student");
  await t.db.insert(guardians).values({ schoolId: NORTH, studentId: kid.id, parentId: p.id });
  return { ...p, child: kid.id, token: await as(t, p.userId, "parent") };
}

async function goHome(t: TestApp, studentId: number, date: string) {
  const res = await t.request(INV, {
    method: "POST",
    token: await as(t, DEMO.northParent.id, "parent"),
    body: { title: "Ana comes home with us", date, studentIds: [studentId] },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

describe("accepting a go-home invitation", () => {
  it("asks the child's exit permission: an auto pickup by the inviting guardian, linked to the invitation", async () => {
    const t = makeTestApp();
    const other = await family(t);
    // A school day soon after the test clock's date (Monday 2026-11-23): Wednesday.
    const id = await goHome(t, other.child, "2026-11-25");
    const res = await t.request(`${INV}/${id}/respond`, {
      method: "POST",
      token: other.token,
      body: { answer: "accepted" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const [row] = ((await res.json()) as { data: Child[] }).data;
    expect(row?.answer).toBe("accepted");
    expect(row?.failures ?? null).toBeNull();
    expect(row?.exitPermissionId).toEqual(expect.any(Number));
    const [permission] = await t.db
      .select()
      .from(exitPermissions)
      .where(eq(exitPermissions.id, row?.exitPermissionId ?? 0));
    expect(permission).toMatchObject({
      studentId: other.child,
      kind: "auto_pickup",
      pickupParentId: DEMO_PARENT_ID,
      invitationId: id,
    });
  });

  it("records the rules' refusal for both families (a Sunday: no school), and makes nothing", async () => {
    const t = makeTestApp();
    const other = await family(t);
    const id = await goHome(t, other.child, "2026-11-29");
    const res = await t.request(`${INV}/${id}/respond`, {
      method: "POST",
      token: other.token,
      body: { answer: "accepted" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const [row] = ((await res.json()) as { data: Child[] }).data;
    expect(row?.exitPermissionId).toBeNull();
    expect(row?.failures?.length).toBeGreaterThan(0);
    // The inviting family reads the refusal on the child's row.
    const list = (await (
      await t.request(`${ISR}?invitationId=${id}`, { token: await as(t, DEMO.northParent.id, "parent") })
    ).json()) as { data: Child[] };
    expect(list.data[0]?.failures?.length).toBeGreaterThan(0);
    const made = await t.db.select().from(exitPermissions).where(eq(exitPermissions.invitationId, id));
    expect(made).toEqual([]);
  });
});
