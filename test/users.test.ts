/** The school's people (`/api/v1/user`): behaviour, visibility, races and round trips. */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { schoolUsers } from "../src/db/schema/user";
import { INVITE_REQUESTS_PER_HOUR } from "../src/modules/user/invite";
import { countingTestApp, DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
const NORTH = 1;
const SOUTH = 2;
let n = 0;
const phone = () => `+1555${4_000_000 + ++n}`;
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

type Member = { id: number; phone: string; status: string; roles: { id: number; key: string | null }[] };

async function create(body: Record<string, unknown>, school = NORTH) {
  const token = school === NORTH ? await admin() : await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });
  return t.request("/api/v1/user", { method: "POST", token, school, body });
}
async function member(body: Record<string, unknown> = {}, school = NORTH) {
  const res = await create({ phone: phone(), firstName: "Ana", ...body }, school);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Member;
}

describe("create and read", () => {
  it("creates a person with roles, and reads them back in the list and by id", async () => {
    const m = await member({ roleIds: [5], language: "en" });
    expect(m).toMatchObject({ status: "invited", roles: [{ id: 5, key: "parent" }] });
    const got = await t.request(`/api/v1/user/${m.id}`, { token: await admin(), school: NORTH });
    expect(await got.json()).toMatchObject({ id: m.id, language: "en" });
    const list = await t.request("/api/v1/user?role=parent&status=invited&name=Ana", {
      token: await admin(),
      school: NORTH,
    });
    const page = (await list.json()) as { data: Member[] };
    expect(page.data.map((r) => r.id)).toContain(m.id);
  });

  it("attaches a known phone to the same user; already a member is 409; bad phone 400; unknown role 404", async () => {
    const m = await member({}, SOUTH);
    const again = await create({ phone: m.phone, firstName: "Other" });
    expect(again.status).toBe(201);
    expect(((await again.json()) as Member).id).toBe(m.id);
    expect((await create({ phone: m.phone, firstName: "Ana" })).status).toBe(409);
    expect((await create({ phone: "12", firstName: "Ana" })).status).toBe(400);
    const unknown = await create({ phone: phone(), firstName: "Ana", roleIds: [987654] });
    expect(unknown.status).toBe(404);
    expect((await problem(unknown)).detail).toMatch(/987654/);
    expect((await create({ phone: phone(), firstName: "Ana", roleIds: [1] })).status).toBe(404);
  });

  it("roleIds obey the escalation rules: staff (user.write, no school-admin permissions) cannot create an admin", async () => {
    // The built-in staff role's permissions: user.write and the parent role's, not role.write.
    const staffPerms = ["user.read", "user.write", "delegate.read", "delegate.write", "family.read", "school.read"];
    const staff = await t.token(DEMO.northAdmin.id, { [NORTH]: staffPerms });
    const req = (body: Record<string, unknown>) =>
      t.request("/api/v1/user", { method: "POST", token: staff, school: NORTH, body });
    const p = phone();
    const admin = await req({ phone: p, firstName: "Evil", roleIds: [2] });
    expect(admin.status).toBe(403);
    expect((await problem(admin)).detail).toMatch(/School admin/);
    // Nothing was written: the number is still unknown.
    const [found] = await t.db.select().from(users).where(eq(users.phone, p));
    expect(found).toBeUndefined();
    expect((await req({ phone: phone(), firstName: "Pending" })).status).toBe(201);
  });

  it("two concurrent creates of the same new number: one 201, one 409", async () => {
    const p = phone();
    const res = await Promise.all([create({ phone: p, firstName: "A" }), create({ phone: p, firstName: "B" })]);
    expect(res.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it("another school's person is a 404", async () => {
    const theirs = await member({}, SOUTH);
    const res = await t.request(`/api/v1/user/${theirs.id}`, { token: await admin(), school: NORTH });
    expect(res.status).toBe(404);
  });

  it("lists and reads in one D1 round trip", async () => {
    const { t: c, measure } = countingTestApp();
    const token = await c.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    expect((await measure(() => c.request("/api/v1/user?role=teacher", { token, school: NORTH }))).calls).toBe(1);
    expect((await measure(() => c.request("/api/v1/user/3", { token, school: NORTH }))).calls).toBe(1);
  });

  it("a teacher without user.read gets 403; a parent cannot list users", async () => {
    const teacher = await t.token(DEMO.northTeacher.id, { [NORTH]: ["student.read"].filter(() => false) });
    expect((await t.request("/api/v1/user", { token: teacher, school: NORTH })).status).toBe(403);
    const parent = await t.token(DEMO.northParent.id, { [NORTH]: [] });
    expect((await t.request("/api/v1/user", { token: parent, school: NORTH })).status).toBe(403);
  });

  it("by-role: an unknown role is 404, a bad key 400; languages; share URL", async () => {
    const token = await admin();
    expect((await t.request("/api/v1/user/by-role?role=987654", { token, school: NORTH })).status).toBe(404);
    expect((await t.request("/api/v1/user/by-role?role=nobody", { token, school: NORTH })).status).toBe(400);
    expect((await t.request("/api/v1/user/by-role", { token, school: NORTH })).status).toBe(400);
    const teachers = await t.request("/api/v1/user/by-role?role=teacher", { token, school: NORTH });
    expect(((await teachers.json()) as { data: Member[] }).data.map((m) => m.id)).toContain(DEMO.northTeacher.id);
    const langs = await t.request("/api/v1/user/languages");
    expect(await langs.json()).toEqual([
      { code: "es", name: "Español" },
      { code: "en", name: "English" },
    ]);
    const share = await t.request("/api/v1/user/share-url", { token, school: NORTH });
    expect(((await share.json()) as { url: string }).url).toMatch(/^https:\/\/.+school=1$/);
  });

  it("share URL: the message is in the caller's language and names the school", async () => {
    // The caller's language as their token carries it (sign-in writes the user's own).
    const textFor = async (user: { id: number; language: "es" | "en" }) => {
      const token = await t.token(user.id, { [NORTH]: [] }, false, user.language);
      const res = await t.request("/api/v1/user/share-url", { token, school: NORTH });
      expect(res.status).toBe(200);
      return (await res.json()) as { url: string; text: string };
    };
    const es = await member({ language: "es" });
    const en = await member({ language: "en" });
    const spanish = await textFor({ id: es.id, language: "es" });
    expect(spanish.text).toContain("Northside Demo School");
    expect(spanish.text).toContain(spanish.url);
    expect(spanish.text).toMatch(/app/);
    expect(spanish.text).not.toMatch(/^Join/);
    const english = await textFor({ id: en.id, language: "en" });
    expect(english.text).toMatch(/^Join Northside Demo School/);
    expect(english.text).not.toEqual(spanish.text);
  });

  it("my permissions and roles; a profile with the role rows", async () => {
    const token = await t.token(DEMO.northTeacher.id, { [NORTH]: ["user.read"] });
    const mine = await t.request("/api/v1/user/me/permissions", { token, school: NORTH });
    expect(await mine.json()).toMatchObject({ schoolId: 1, permissions: ["user.read"], roles: [{ key: "teacher" }] });
    const profile = await t.request(`/api/v1/user/${DEMO.northTeacher.id}/profile`, { token, school: NORTH });
    expect(await profile.json()).toMatchObject({ teacher: { subjects: [] }, parent: null });
  });
});

describe("update", () => {
  it("renames; inactive ends sign-in; refused for someone of another school (422) and for oneself", async () => {
    const m = await member();
    const token = await admin();
    const put = (id: number, body: unknown) =>
      t.request(`/api/v1/user/${id}`, { method: "PUT", token, school: NORTH, body });
    expect((await put(m.id, { lastName: "Ruiz", status: "inactive" })).status).toBe(204);
    const [row] = await t.db.select().from(users).where(eq(users.id, m.id));
    expect(row).toMatchObject({ lastName: "Ruiz", status: "inactive" });
    expect((await put(m.id, { status: "active" })).status).toBe(204);
    const shared = await member({}, SOUTH);
    await create({ phone: shared.phone, firstName: "x" });
    expect((await put(shared.id, { status: "inactive" })).status).toBe(422);
    expect((await put(DEMO.northAdmin.id, { status: "inactive" })).status).toBe(422);
    expect((await put(m.id, {})).status).toBe(400);
  });
});

describe("remove", () => {
  it("soft-deletes the membership, removes roles here only, and refuses oneself and the last admin", async () => {
    const shared = await member({ roleIds: [5] }, SOUTH);
    await create({ phone: shared.phone, firstName: "x", roleIds: [4] });
    const token = await admin();
    const removed = await t.request(`/api/v1/user/${shared.id}`, { method: "DELETE", token, school: NORTH });
    expect(removed.status).toBe(204);
    // The trail names what went: the person here, their role, and the teacher profile it took along.
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.requestId, removed.headers.get("x-request-id") ?? ""), eq(auditLog.schoolId, NORTH)));
    expect(trail.map((a) => `${a.entity}:${a.action}`).sort()).toEqual([
      "role-user:delete",
      "teacher:delete",
      "user:remove",
    ]);
    // Each school's rows where that school's are (school 2's in its shard).
    const memberships = [];
    const roles = [];
    for (const school of [NORTH, SOUTH]) {
      const db = await t.schoolDb(school);
      memberships.push(
        ...(await db
          .select()
          .from(schoolUsers)
          .where(and(eq(schoolUsers.userId, shared.id), eq(schoolUsers.schoolId, school)))),
      );
      roles.push(
        ...(await db
          .select()
          .from(roleUsers)
          .where(and(eq(roleUsers.userId, shared.id), eq(roleUsers.schoolId, school)))),
      );
    }
    expect(memberships.find((m) => m.schoolId === NORTH)?.deletedAt).not.toBeNull();
    expect(memberships.find((m) => m.schoolId === SOUTH)?.deletedAt).toBeNull();
    expect(roles.map((r) => r.schoolId)).toEqual([SOUTH]);
    expect((await t.request(`/api/v1/user/${shared.id}`, { token, school: NORTH })).status).toBe(404);

    const self = await t.request(`/api/v1/user/${DEMO.northAdmin.id}`, { method: "DELETE", token, school: NORTH });
    expect(self.status).toBe(422);
    expect((await problem(self)).detail).toMatch(/user\/me/);
    const other = await t.token(DEMO.northTeacher.id, { [NORTH]: "all" });
    const last = await t.request(`/api/v1/user/${DEMO.northAdmin.id}`, {
      method: "DELETE",
      token: other,
      school: NORTH,
    });
    expect(last.status).toBe(422);
  });

  it("delete-multiple: all or none; another school's id is a 404 naming it; racing calls remove once", async () => {
    const a = await member();
    const b = await member();
    const theirs = await member({}, SOUTH);
    const token = await admin();
    const post = (ids: number[]) =>
      t.request("/api/v1/user/delete-multiple", { method: "POST", token, school: NORTH, body: { ids } });
    const refused = await post([a.id, theirs.id]);
    expect(refused.status).toBe(404);
    expect((await problem(refused)).detail).toMatch(String(theirs.id));
    expect((await t.request(`/api/v1/user/${a.id}`, { token, school: NORTH })).status).toBe(200);
    const raced = await Promise.all([post([a.id, b.id]), post([a.id, b.id])]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 404]);
  });
});

describe("delete my account", () => {
  it("anonymises, frees the number, ends sessions, and sign-in no longer finds them", async () => {
    const m = await member({ roleIds: [5] });
    const session = await t.signIn(m.phone);
    const res = await t.request("/api/v1/user/me", { method: "DELETE", token: session.accessToken });
    expect(res.status).toBe(204);
    // The access token still verifies, but /me knows the account is gone.
    const me = await t.request("/api/v1/user/me", { token: session.accessToken });
    expect(me.status).toBe(401);
    // In the person's language: a new person speaks the school's (Northside's: Spanish).
    expect((await problem(me)).detail).toBe("Esta cuenta se eliminó: vuelva a iniciar sesión para empezar una nueva.");
    const [row] = await t.db.select().from(users).where(eq(users.id, m.id));
    expect(row).toMatchObject({ phone: `deleted:${m.id}`, firstName: "", email: null, status: "inactive" });
    expect(row?.deletedAt).not.toBeNull();
    const refresh = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: session.refreshToken },
    });
    expect(refresh.status).toBe(401);
    const check = await t.request("/api/v1/auth/verify-phone-number", { method: "POST", body: { phone: m.phone } });
    expect(await check.json()).toMatchObject({ registered: false });
    // The number is free: the school may add it again, as a new user.
    const again = await create({ phone: m.phone, firstName: "New" });
    expect(((await again.json()) as Member).id).not.toBe(m.id);
  });

  it("removes the memberships and roles of every school, those on another database too", async () => {
    const m = await member({ roleIds: [5] }, SOUTH);
    await create({ phone: m.phone, firstName: "x", roleIds: [4] });
    const res = await t.request("/api/v1/user/me", { method: "DELETE", token: await t.token(m.id, {}) });
    expect(res.status).toBe(204);
    for (const school of [NORTH, SOUTH]) {
      const db = await t.schoolDb(school);
      const ofSchool = (table: typeof schoolUsers | typeof roleUsers) =>
        and(eq(table.userId, m.id), eq(table.schoolId, school));
      const memberships = await db.select().from(schoolUsers).where(ofSchool(schoolUsers));
      expect(memberships.map((r) => r.deletedAt === null)).toEqual([false]);
      expect(await db.select().from(roleUsers).where(ofSchool(roleUsers))).toHaveLength(0);
    }
  });

  it("is refused for a school's last administrator", async () => {
    const res = await t.request("/api/v1/user/me", {
      method: "DELETE",
      token: await t.token(DEMO.southAdmin.id, {}),
    });
    expect(res.status).toBe(422);
  });
});

describe("invitations", () => {
  it("invites by phone (deduped), texts once with the school's name, and skips the recently invited", async () => {
    const token = await admin();
    const p = phone();
    const res = await t.request("/api/v1/user/invite/school", {
      method: "POST",
      token,
      school: NORTH,
      body: { phones: [p, p.replace("+1", "+1 ")] },
    });
    expect(await res.json()).toMatchObject({ sent: 1, skipped: [] });
    const outbox = await t.request(`/api/v1/dev/outbox?to=${encodeURIComponent(p)}`);
    const messages = ((await outbox.json()) as { data: { body: string }[] }).data;
    expect(messages).toHaveLength(1);
    expect(messages[0]?.body).toMatch(/school=1/);
    const [u] = await t.db.select().from(users).where(eq(users.phone, p));
    const again = await t.request("/api/v1/user/invite/users", {
      method: "POST",
      token,
      school: NORTH,
      body: { userIds: [u?.id ?? 0] },
    });
    expect(await again.json()).toMatchObject({ sent: 0, skipped: [{ reason: "recently-invited" }] });
    const theirs = await member({}, SOUTH);
    const other = await t.request("/api/v1/user/invite/users", {
      method: "POST",
      token,
      school: NORTH,
      body: { userIds: [theirs.id] },
    });
    expect(other.status).toBe(404);
  });

  it("invites a role's never-signed-in members; pending members become parents", async () => {
    const token = await admin();
    const pending = await member();
    const assigned = await t.request("/api/v1/user/assign-pending-to-parents", {
      method: "POST",
      token,
      school: NORTH,
      body: { userIds: [pending.id] },
    });
    expect(await assigned.json()).toMatchObject({ assigned: [pending.id] });
    const inactive = await t.request("/api/v1/user/invite/inactive", {
      method: "POST",
      token,
      school: NORTH,
      body: { role: "parent" },
    });
    expect(inactive.status).toBe(200);
    const [row] = await t.db.select().from(schoolUsers).where(eq(schoolUsers.userId, pending.id));
    expect(row?.invitedAt).not.toBeNull();
  });

  it("invite/inactive: a role the school does not have is a 404 naming it; a role id may be a JSON number", async () => {
    const token = await admin();
    const invite = (role: unknown) =>
      t.request("/api/v1/user/invite/inactive", { method: "POST", token, school: NORTH, body: { role } });
    for (const role of ["987654", 987654]) {
      const res = await invite(role);
      expect(res.status, String(role)).toBe(404);
      expect((await problem(res)).detail).toMatch(/987654/);
    }
    const southRole = await t.request("/api/v1/role", {
      method: "POST",
      token: await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" }),
      school: SOUTH,
      body: { name: "Their role", permissions: [] },
    });
    const theirs = ((await southRole.json()) as { id: number }).id;
    expect((await invite(theirs)).status).toBe(404);
    expect((await invite(1)).status).toBe(404);
    expect((await invite(4)).status).toBe(200);
    expect((await invite("teacher")).status).toBe(200);
    expect((await invite(0)).status).toBe(400);
  });

  it("by default makes parents only of pending members who have signed in; the others wait", async () => {
    const token = await admin();
    const [came, away] = [phone(), phone()];
    const invited = await t.request("/api/v1/user/invite/school", {
      method: "POST",
      token,
      school: NORTH,
      body: { phones: [came, away] },
    });
    expect(invited.status).toBe(200);
    const session = await t.signIn(came);
    const [notYet] = await t.db.select({ id: users.id }).from(users).where(eq(users.phone, away));
    const assign = () =>
      t.request("/api/v1/user/assign-pending-to-parents", { method: "POST", token, school: NORTH, body: {} });
    const first = (await (await assign()).json()) as { assigned: number[] };
    expect(first.assigned).toContain(session.user.id);
    expect(first.assigned).not.toContain(notYet?.id);
    const rolesOf = async (id: number | undefined) => {
      const res = await t.request(`/api/v1/user/${id}`, { token, school: NORTH });
      return ((await res.json()) as Member).roles.map((r) => r.key);
    };
    expect(await rolesOf(session.user.id)).toEqual(["parent"]);
    expect(await rolesOf(notYet?.id)).toEqual([]);
    const second = (await (await assign()).json()) as { assigned: number[] };
    expect(second.assigned).not.toContain(session.user.id);
    await t.signIn(away);
    expect(((await (await assign()).json()) as { assigned: number[] }).assigned).toEqual([notYet?.id]);
  });

  it("is rate-limited per school, also under concurrent requests (429 with retry-after)", async () => {
    const s = makeTestApp();
    const token = await s.token(DEMO.southAdmin.id, { [SOUTH]: "all" });
    const res = await Promise.all(
      Array.from({ length: INVITE_REQUESTS_PER_HOUR + 3 }, () =>
        s.request("/api/v1/user/invite/inactive", { method: "POST", token, school: SOUTH, body: { role: "teacher" } }),
      ),
    );
    const statuses = res.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(INVITE_REQUESTS_PER_HOUR);
    const limited = res.find((r) => r.status === 429);
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
