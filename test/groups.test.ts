/**
 * Groups: /api/v1/group (CRUD, delete-multiple, participants, image URL, the caller's groups),
 * /api/v1/group-teacher and /api/v1/group-student. Behaviour, bad input, visibility per role and
 * read operation, a racing duplicate, and one D1 call per read.
 */
import { and, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { groupStudents, groups, groupTeachers } from "../src/db/schema/group";
import { guardians, students } from "../src/db/schema/student";
import { teachers } from "../src/db/schema/teacher";
import { grantsOf } from "../src/modules";
import { readJson, uniq } from "./fixture-kit";
import { makeStudent, makeTeacher } from "./fixtures/modules/group";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;

type Group = {
  id: number;
  name: string;
  level: string;
  schoolYear: string;
  grade: number | null;
  image: string | null;
  teacherCount: number;
  teachers: { id: number; teacherId: number; userId: number; subject: string | null }[];
  studentCount: number;
};
type Page<T> = { data: T[]; total: number };

const roleToken = (t: TestApp, userId: number, role: "school-admin" | "staff" | "teacher" | "parent", school = NORTH) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp, school = NORTH) => t.token(school === NORTH ? 2 : 5, { [school]: "all" });

async function createGroup(t: TestApp, body: Record<string, unknown> = {}, school = NORTH) {
  const res = await t.request("/api/v1/group", {
    method: "POST",
    token: await admin(t, school),
    school,
    body: { name: uniq("Group"), level: "elementary", schoolYear: "2026-2027", ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return readJson<Group>(res);
}

/** The demo teacher's (user 3) teacher profile in the first school. */
async function demoTeacherProfile(t: TestApp) {
  const [row] = await t.db
    .select({ id: teachers.id })
    .from(teachers)
    .where(and(eq(teachers.schoolId, NORTH), eq(teachers.userId, DEMO.northTeacher.id)));
  if (!row) throw new Error("no teacher profile for the demo teacher");
  return row.id;
}

async function addParticipants(t: TestApp, id: number, body: { teacherIds?: number[]; studentIds?: number[] }) {
  const res = await t.request(`/api/v1/group/${id}/participants`, {
    method: "PUT",
    token: await admin(t),
    school: NORTH,
    body,
  });
  expect(res.status, await res.clone().text()).toBe(204);
}

describe("groups", () => {
  it("creates, reads, lists with filters, updates and deletes a group", async () => {
    const t = makeTestApp();
    const name = uniq("3rd A");
    const group = await createGroup(t, { name, grade: 3, level: "preschool" });
    expect(group).toMatchObject({ name, level: "preschool", schoolYear: "2026-2027", grade: 3, image: null });
    expect(group).toMatchObject({ teacherCount: 0, teachers: [], studentCount: 0 });

    const token = await admin(t);
    const got = await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH });
    expect(await readJson<Group>(got)).toEqual(group);

    const byName = await readJson<Page<Group>>(
      await t.request(`/api/v1/group?name=${encodeURIComponent(name)}&level=preschool&schoolYear=2026-2027`, {
        token,
        school: NORTH,
      }),
    );
    expect(byName.data.map((g) => g.id)).toEqual([group.id]);
    const otherYear = await readJson<Page<Group>>(
      await t.request(`/api/v1/group?name=${encodeURIComponent(name)}&schoolYear=2027-2028`, { token, school: NORTH }),
    );
    expect(otherYear.total).toBe(0);

    const put = await t.request(`/api/v1/group/${group.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { grade: null, level: "elementary" },
    });
    expect(put.status).toBe(204);
    const after = await readJson<Group>(await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH }));
    expect(after).toMatchObject({ grade: null, level: "elementary" });

    const del = await t.request(`/api/v1/group/${group.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
    expect((await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH })).status).toBe(404);
  });

  it("refuses bad input: a duplicate name in the year (409), a level the school does not offer (422), a bad year (400)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const dup = await t.request("/api/v1/group", {
      method: "POST",
      token,
      school: NORTH,
      body: { name: group.name, level: "middle", schoolYear: "2026-2027" },
    });
    expect(dup.status).toBe(409);
    await problem(dup);
    // The same name another year is a different group.
    await createGroup(t, { name: group.name, schoolYear: "2027-2028" });

    // Southside offers elementary, middle and high: no preschool.
    const south = await t.request("/api/v1/group", {
      method: "POST",
      token: await admin(t, SOUTH),
      school: SOUTH,
      body: { name: uniq("Tots"), level: "preschool", schoolYear: "2026-2027" },
    });
    expect(south.status).toBe(422);
    expect((await problem(south)).detail).toMatch(/does not offer the level preschool/);
    const southGroup = await createGroup(t, {}, SOUTH);
    const southPut = await t.request(`/api/v1/group/${southGroup.id}`, {
      method: "PUT",
      token: await admin(t, SOUTH),
      school: SOUTH,
      body: { level: "preschool" },
    });
    expect(southPut.status).toBe(422);

    for (const schoolYear of ["2026-2028", "2026", "26-27"]) {
      const res = await t.request("/api/v1/group", {
        method: "POST",
        token,
        school: NORTH,
        body: { name: uniq("G"), level: "elementary", schoolYear },
      });
      expect(res.status, schoolYear).toBe(400);
    }
    const longName = await t.request(`/api/v1/group?name=${"x".repeat(49)}`, { token, school: NORTH });
    expect(longName.status).toBe(400);
  });

  it("409s a name the year has in another case or with other accents, on create and update", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const tag = uniq("").replace(/[^a-z0-9]/g, "");
    await createGroup(t, { name: `Primaria 3°A ${tag}` });
    const musica = await createGroup(t, { name: `Música ${tag}` });
    for (const name of [`PRIMARIA 3°a ${tag}`, `primaria 3°A ${tag}`, `MUSICA ${tag}`, `musica ${tag}`]) {
      const res = await t.request("/api/v1/group", {
        method: "POST",
        token,
        school: NORTH,
        body: { name, level: "elementary", schoolYear: "2026-2027" },
      });
      expect(res.status, name).toBe(409);
      expect((await problem(res)).detail, name).toBe(
        "A group with this name already exists in this school year (names that differ only in case or accents are the same)",
      );
    }
    const renamed = await t.request(`/api/v1/group/${musica.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: `PRIMARIA 3°A ${tag.toUpperCase()}` },
    });
    expect(renamed.status).toBe(409);
    // Its own name in capitals is no clash; another year is another group.
    const own = await t.request(`/api/v1/group/${musica.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: `MÚSICA ${tag}` },
    });
    expect(own.status).toBe(204);
    await createGroup(t, { name: `musica ${tag}`, schoolYear: "2027-2028" });
  });

  it("sorts by name either way (sort=name, sort=-name)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const tag = uniq("sorted");
    const names = [`B ${tag}`, `C ${tag}`, `A ${tag}`];
    for (const name of names) await createGroup(t, { name });
    const sorted = async (sort: string) => {
      const res = await t.request(`/api/v1/group?name=${encodeURIComponent(tag)}&sort=${sort}`, {
        token,
        school: NORTH,
      });
      return (await readJson<Page<Group>>(res)).data.map((g) => g.name);
    };
    expect(await sorted("name")).toEqual([`A ${tag}`, `B ${tag}`, `C ${tag}`]);
    expect(await sorted("-name")).toEqual([`C ${tag}`, `B ${tag}`, `A ${tag}`]);
  });

  it("deletes several groups in one batch; another school's id is a 404 naming it, and nothing is deleted", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const [a, b] = [await createGroup(t), await createGroup(t)];
    const theirs = await createGroup(t, {}, SOUTH);
    const refused = await t.request("/api/v1/group/delete-multiple", {
      method: "DELETE",
      token,
      school: NORTH,
      body: { ids: [a.id, theirs.id, b.id] },
    });
    expect(refused.status).toBe(404);
    expect((await problem(refused)).detail).toContain(String(theirs.id));
    const still = await t.db.select({ id: groups.id }).from(groups).where(eq(groups.id, a.id));
    expect(still).toHaveLength(1);

    const ok = await t.request("/api/v1/group/delete-multiple", {
      method: "DELETE",
      token,
      school: NORTH,
      body: { ids: [a.id, b.id] },
    });
    expect(await ok.json()).toEqual({ deleted: [a.id, b.id] });
    for (const id of [a.id, b.id]) {
      expect((await t.request(`/api/v1/group/${id}`, { token, school: NORTH })).status).toBe(404);
    }
    const c = await createGroup(t);
    const viaPost = await t.request("/api/v1/group/delete-multiple", {
      method: "POST",
      token,
      school: NORTH,
      body: { ids: [c.id] },
    });
    expect(await viaPost.json()).toEqual({ deleted: [c.id] });
    expect((await t.request(`/api/v1/group/${c.id}`, { token, school: NORTH })).status).toBe(404);
    const dup = await t.request("/api/v1/group/delete-multiple", {
      method: "POST",
      token,
      school: NORTH,
      body: { ids: [theirs.id, theirs.id] },
    });
    expect(dup.status).toBe(400);
  });

  it("adds, lists and removes participants; another school's teacher or a deleted student is a 404", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const teacher = await makeTeacher(t, NORTH);
    const [s1, s2] = [await makeStudent(t, NORTH), await makeStudent(t, NORTH)];
    await addParticipants(t, group.id, { teacherIds: [teacher], studentIds: [s1, s2] });
    // Adding again changes nothing.
    await addParticipants(t, group.id, { teacherIds: [teacher], studentIds: [s1] });

    const res = await t.request(`/api/v1/group/${group.id}/participants`, { token, school: NORTH });
    const body = await readJson<{ teachers: { teacherId: number }[]; students: { studentId: number }[] }>(res);
    expect(body.teachers.map((x) => x.teacherId)).toEqual([teacher]);
    expect(body.students.map((x) => x.studentId)).toEqual([s1, s2]);
    const record = await readJson<Group>(await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH }));
    expect(record).toMatchObject({ teacherCount: 1, studentCount: 2 });
    expect(record.teachers[0]).toMatchObject({ teacherId: teacher, subject: null });

    const southTeacher = await makeTeacher(t, SOUTH);
    const foreign = await t.request(`/api/v1/group/${group.id}/participants`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { teacherIds: [southTeacher] },
    });
    expect(foreign.status).toBe(404);
    expect((await problem(foreign)).detail).toContain(String(southTeacher));

    const gone = await makeStudent(t, NORTH);
    await t.db.update(students).set({ deletedAt: "2026-11-01T00:00:00.000Z" }).where(eq(students.id, gone));
    const deleted = await t.request(`/api/v1/group/${group.id}/participants`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { studentIds: [gone] },
    });
    expect(deleted.status).toBe(404);

    const theirGroup = await createGroup(t, {}, SOUTH);
    const otherGroup = await t.request(`/api/v1/group/${theirGroup.id}/participants`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { studentIds: [s1] },
    });
    expect(otherGroup.status).toBe(404);

    const removed = await t.request(`/api/v1/group/${group.id}/participants`, {
      method: "DELETE",
      token,
      school: NORTH,
      body: { studentIds: [s1], teacherIds: [teacher] },
    });
    expect(removed.status).toBe(204);
    const after = await readJson<Group>(await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH }));
    expect(after).toMatchObject({ teacherCount: 0, studentCount: 1 });

    // Audited: the group's own rows, and one per group-teacher row created and deleted.
    const trail = await t.db
      .select({ entity: auditLog.entity, action: auditLog.action })
      .from(auditLog)
      .where(inArray(auditLog.entity, ["group", "group-teacher"]));
    const actions = trail.map((r) => `${r.entity}:${r.action}`);
    expect(actions.filter((a) => a === "group-teacher:create")).toHaveLength(1);
    expect(actions.filter((a) => a === "group-teacher:delete")).toHaveLength(1);
    expect(actions).toContain("group:add-participants");
    expect(actions).toContain("group:remove-participants");

    // Deleting the group takes its rows with it.
    const del = await t.request(`/api/v1/group/${group.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
    const left = await t.db.select().from(groupStudents).where(eq(groupStudents.groupId, group.id));
    expect(left).toEqual([]);
  });

  it("signs an upload URL for the group's image under the school's prefix; only image types", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const none = await t.request(`/api/v1/group/${group.id}/signed-url`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { method: "GET" },
    });
    expect(none.status).toBe(404);
    expect((await problem(none)).detail).toBe(`Group ${group.id} has no image; upload one with method PUT`);
    const res = await t.request(`/api/v1/group/${group.id}/signed-url`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { contentType: "image/png" },
    });
    expect(res.status).toBe(200);
    const signed = await readJson<{ image: string; url: string; method: string; headers: Record<string, string> }>(res);
    expect(signed.image).toMatch(new RegExp(`^${NORTH}/groups/${group.id}/image-[0-9a-f-]+\\.png$`));
    expect(signed.method).toBe("PUT");
    expect(signed.headers["content-type"]).toBe("image/png");
    const record = await readJson<Group>(await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH }));
    expect(record.image).toBe(signed.image);

    const pdf = await t.request(`/api/v1/group/${group.id}/signed-url`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { contentType: "application/pdf" },
    });
    expect(pdf.status).toBe(400);

    const download = await t.request(`/api/v1/group/${group.id}/signed-url`, {
      method: "PUT",
      token: await roleToken(t, DEMO.northTeacher.id, "staff"),
      school: NORTH,
      body: { method: "GET" },
    });
    expect(download.status).toBe(200);
    expect((await readJson<{ image: string }>(download)).image).toBe(signed.image);

    // A teacher (group.read, no group.write) may not upload.
    const teacherUpload = await t.request(`/api/v1/group/${group.id}/signed-url`, {
      method: "PUT",
      token: await roleToken(t, DEMO.northTeacher.id, "teacher"),
      school: NORTH,
      body: { contentType: "image/png" },
    });
    expect(teacherUpload.status).toBe(403);
  });
});

describe("group-teacher and group-student", () => {
  it("creates, reads, updates and deletes a group-teacher row; duplicates 409, another school's ids 404", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const teacher = await makeTeacher(t, NORTH);
    const created = await t.request("/api/v1/group-teacher", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: group.id, teacherId: teacher, subject: "Math" },
    });
    expect(created.status).toBe(201);
    const row = await readJson<{ id: number; groupId: number; teacherId: number; subject: string }>(created);
    expect(row).toMatchObject({ groupId: group.id, teacherId: teacher, subject: "Math" });

    const dup = await t.request("/api/v1/group-teacher", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: group.id, teacherId: teacher },
    });
    expect(dup.status).toBe(409);

    const theirGroup = await createGroup(t, {}, SOUTH);
    const theirTeacher = await makeTeacher(t, SOUTH);
    for (const body of [
      { groupId: theirGroup.id, teacherId: teacher },
      { groupId: group.id, teacherId: theirTeacher },
    ]) {
      const res = await t.request("/api/v1/group-teacher", { method: "POST", token, school: NORTH, body });
      expect(res.status, JSON.stringify(body)).toBe(404);
    }

    const put = await t.request(`/api/v1/group-teacher/${row.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { subject: null },
    });
    expect(put.status).toBe(204);
    const got = await readJson<{ subject: string | null }>(
      await t.request(`/api/v1/group-teacher/${row.id}`, { token, school: NORTH }),
    );
    expect(got.subject).toBeNull();
    const list = await readJson<Page<{ id: number }>>(
      await t.request(`/api/v1/group-teacher?groupId=${group.id}&teacherId=${teacher}`, { token, school: NORTH }),
    );
    expect(list.data.map((r) => r.id)).toEqual([row.id]);
    const del = await t.request(`/api/v1/group-teacher/${row.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
  });

  it("two racing adds of the same teacher: one 201, one 409", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const teacher = await makeTeacher(t, NORTH);
    const body = { groupId: group.id, teacherId: teacher };
    const results = await Promise.all(
      [1, 2].map(() => t.request("/api/v1/group-teacher", { method: "POST", token, school: NORTH, body })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const rows = await t.db.select().from(groupTeachers).where(eq(groupTeachers.groupId, group.id));
    expect(rows).toHaveLength(1);
  });

  it("adds a student, refuses a duplicate (409) and a deleted student (404), moves them to another group", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const [a, b] = [await createGroup(t), await createGroup(t)];
    const student = await makeStudent(t, NORTH);
    const created = await t.request("/api/v1/group-student", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: a.id, studentId: student },
    });
    expect(created.status).toBe(201);
    const row = await readJson<{ id: number; groupId: number }>(created);
    const dup = await t.request("/api/v1/group-student", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: a.id, studentId: student },
    });
    expect(dup.status).toBe(409);

    const gone = await makeStudent(t, NORTH);
    await t.db.update(students).set({ deletedAt: "2026-11-01T00:00:00.000Z" }).where(eq(students.id, gone));
    const deleted = await t.request("/api/v1/group-student", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: a.id, studentId: gone },
    });
    expect(deleted.status).toBe(404);

    const moved = await t.request(`/api/v1/group-student/${row.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { groupId: b.id },
    });
    expect(moved.status).toBe(204);
    const got = await readJson<{ groupId: number }>(
      await t.request(`/api/v1/group-student/${row.id}`, { token, school: NORTH }),
    );
    expect(got.groupId).toBe(b.id);

    const theirs = await createGroup(t, {}, SOUTH);
    const away = await t.request(`/api/v1/group-student/${row.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { groupId: theirs.id },
    });
    expect(away.status).toBe(404);

    // Moving into a group that already has the student is a 409.
    await t.request("/api/v1/group-student", {
      method: "POST",
      token,
      school: NORTH,
      body: { groupId: a.id, studentId: student },
    });
    const clash = await t.request(`/api/v1/group-student/${row.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { groupId: a.id },
    });
    expect(clash.status).toBe(409);
  });
});

describe("a deleted student", () => {
  it("leaves the group's student rows as it leaves its participants and count: list and get agree", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const group = await createGroup(t);
    const [stay, go] = [await makeStudent(t, NORTH), await makeStudent(t, NORTH)];
    await addParticipants(t, group.id, { studentIds: [stay, go] });
    const gone = await t.request(`/api/v1/student/${go}`, { method: "DELETE", token, school: NORTH });
    expect(gone.status).toBe(204);
    const rows = await readJson<Page<{ id: number; studentId: number }>>(
      await t.request(`/api/v1/group-student?groupId=${group.id}`, { token, school: NORTH }),
    );
    expect(rows.data.map((r) => r.studentId)).toEqual([stay]);
    expect(rows.total).toBe(1);
    const byStudent = await readJson<Page<{ id: number }>>(
      await t.request(`/api/v1/group-student?studentId=${go}`, { token, school: NORTH }),
    );
    expect(byStudent.total).toBe(0);
    const [row] = await t.db
      .select({ id: groupStudents.id })
      .from(groupStudents)
      .where(and(eq(groupStudents.groupId, group.id), eq(groupStudents.studentId, go)));
    expect((await t.request(`/api/v1/group-student/${row?.id}`, { token, school: NORTH })).status).toBe(404);
    const got = await readJson<Group>(await t.request(`/api/v1/group/${group.id}`, { token, school: NORTH }));
    expect(got.studentCount).toBe(rows.total);
  });
});

describe("visibility", () => {
  /** A group the demo teacher teaches (with a student the demo parent guards) and one they do not. */
  async function world(t: TestApp) {
    const mine = await createGroup(t);
    const other = await createGroup(t);
    const child = await makeStudent(t, NORTH);
    const stranger = await makeStudent(t, NORTH);
    const at = t.clock.now().toISOString();
    // The demo parent (user 4) has parent profile 1 in the first school.
    await t.db
      .insert(guardians)
      .values({ schoolId: NORTH, studentId: child, parentId: 1, createdAt: at, updatedAt: at });
    await addParticipants(t, mine.id, { teacherIds: [await demoTeacherProfile(t)], studentIds: [child] });
    await addParticipants(t, other.id, { teacherIds: [await makeTeacher(t, NORTH)], studentIds: [stranger] });
    return { mine, other };
  }

  const ids = (page: { data: { id: number }[] }) => page.data.map((g) => g.id);

  it("staff and school admins see every group and row", async () => {
    const t = makeTestApp();
    const { mine, other } = await world(t);
    for (const role of ["staff", "school-admin"] as const) {
      const token = await roleToken(t, DEMO.northAdmin.id, role);
      const list = await readJson<Page<Group>>(await t.request("/api/v1/group?pageSize=100", { token, school: NORTH }));
      expect(ids(list)).toEqual(expect.arrayContaining([mine.id, other.id]));
      expect((await t.request(`/api/v1/group/${other.id}`, { token, school: NORTH })).status).toBe(200);
      expect((await t.request(`/api/v1/group/${other.id}/participants`, { token, school: NORTH })).status).toBe(200);
      const gt = await readJson<Page<{ groupId: number }>>(
        await t.request(`/api/v1/group-teacher?groupId=${other.id}`, { token, school: NORTH }),
      );
      expect(gt.total).toBe(1);
      const gs = await readJson<Page<{ groupId: number }>>(
        await t.request(`/api/v1/group-student?groupId=${other.id}`, { token, school: NORTH }),
      );
      expect(gs.total).toBe(1);
      // Staff's own groups: none they teach or have children in.
      const own = await readJson<{ data: Group[] }>(await t.request("/api/v1/group/mine", { token, school: NORTH }));
      expect(own.data).toEqual([]);
    }
  });

  it("a teacher sees the groups they teach, and only their rows", async () => {
    const t = makeTestApp();
    const { mine, other } = await world(t);
    const token = await roleToken(t, DEMO.northTeacher.id, "teacher");
    const list = await readJson<Page<Group>>(await t.request("/api/v1/group?pageSize=100", { token, school: NORTH }));
    expect(ids(list)).toContain(mine.id);
    expect(ids(list)).not.toContain(other.id);
    expect((await t.request(`/api/v1/group/${mine.id}`, { token, school: NORTH })).status).toBe(200);
    expect((await t.request(`/api/v1/group/${other.id}`, { token, school: NORTH })).status).toBe(404);
    expect((await t.request(`/api/v1/group/${mine.id}/participants`, { token, school: NORTH })).status).toBe(200);
    expect((await t.request(`/api/v1/group/${other.id}/participants`, { token, school: NORTH })).status).toBe(404);

    const gt = await readJson<Page<{ groupId: number; id: number }>>(
      await t.request("/api/v1/group-teacher?pageSize=100", { token, school: NORTH }),
    );
    expect(new Set(gt.data.map((r) => r.groupId))).toEqual(new Set(ids(list)));
    const [otherRow] = await t.db.select().from(groupTeachers).where(eq(groupTeachers.groupId, other.id));
    expect((await t.request(`/api/v1/group-teacher/${otherRow?.id}`, { token, school: NORTH })).status).toBe(404);
    const gs = await readJson<Page<{ groupId: number }>>(
      await t.request("/api/v1/group-student?pageSize=100", { token, school: NORTH }),
    );
    expect(gs.data.every((r) => ids(list).includes(r.groupId))).toBe(true);
    const [otherStudent] = await t.db.select().from(groupStudents).where(eq(groupStudents.groupId, other.id));
    expect((await t.request(`/api/v1/group-student/${otherStudent?.id}`, { token, school: NORTH })).status).toBe(404);

    for (const path of ["/api/v1/group/teacher/mine", "/api/v1/group/mine"]) {
      const own = await readJson<{ data: Group[] }>(await t.request(path, { token, school: NORTH }));
      expect(ids(own), path).toContain(mine.id);
      expect(ids(own), path).not.toContain(other.id);
    }
    // Writes need group.write.
    const write = await t.request(`/api/v1/group/${mine.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { grade: 2 },
    });
    expect(write.status).toBe(403);
  });

  it("a parent sees their children's groups at /group/mine only; their delegate too", async () => {
    const t = makeTestApp();
    const { mine, other } = await world(t);
    const token = await roleToken(t, DEMO.northParent.id, "parent");
    const own = await readJson<{ data: Group[] }>(await t.request("/api/v1/group/mine", { token, school: NORTH }));
    expect(ids(own)).toContain(mine.id);
    // The list takes no filter or page: one sent is a 400 naming it, never silently ignored.
    for (const query of ["pageSize=5", "name=Primaria"]) {
      const refused = await t.request(`/api/v1/group/mine?${query}`, { token, school: NORTH });
      expect(refused.status).toBe(400);
      expect((await problem(refused)).errors?.[0]?.path).toBe(query.split("=")[0]);
    }
    expect(ids(own)).not.toContain(other.id);
    for (const path of [
      "/api/v1/group",
      `/api/v1/group/${mine.id}`,
      `/api/v1/group/${mine.id}/participants`,
      "/api/v1/group/teacher/mine",
      "/api/v1/group-teacher",
      "/api/v1/group-student",
    ]) {
      expect((await t.request(path, { token, school: NORTH })).status, path).toBe(403);
    }
    // The image of their child's group: a download URL (an upload is staff's); another group: 404.
    const image = (id: number, body: Record<string, unknown>, as = token) =>
      t.request(`/api/v1/group/${id}/signed-url`, { method: "PUT", token: as, school: NORTH, body });
    const upload = { contentType: "image/png" };
    const uploaded = await readJson<{ image: string }>(await image(mine.id, upload, await admin(t)));
    const seen = await image(mine.id, { method: "GET" });
    expect(seen.status).toBe(200);
    expect(await readJson<{ image: string; method: string }>(seen)).toMatchObject({
      image: uploaded.image,
      method: "GET",
    });
    expect((await image(mine.id, upload)).status).toBe(403);
    expect((await image(other.id, upload, await admin(t))).status).toBe(200);
    expect((await image(other.id, { method: "GET" })).status).toBe(404);
    // User 1032 is the demo parent's delegate from 2026-08-24 to 2027-06-30 (seed).
    const delegate = await roleToken(t, 1032, "parent");
    const theirs = await readJson<{ data: Group[] }>(
      await t.request("/api/v1/group/mine", { token: delegate, school: NORTH }),
    );
    expect(ids(theirs)).toContain(mine.id);
    t.clock.current = new Date("2027-08-01T15:00:00.000Z");
    const expired = await readJson<{ data: Group[] }>(
      await t.request("/api/v1/group/mine", { token: await roleToken(t, 1032, "parent"), school: NORTH }),
    );
    expect(ids(expired)).not.toContain(mine.id);
  });

  it("another school's groups are 404s and never listed", async () => {
    const t = makeTestApp();
    const theirs = await createGroup(t, {}, SOUTH);
    const token = await admin(t);
    expect((await t.request(`/api/v1/group/${theirs.id}`, { token, school: NORTH })).status).toBe(404);
    const list = await readJson<Page<Group>>(await t.request("/api/v1/group?pageSize=100", { token, school: NORTH }));
    expect(ids(list)).not.toContain(theirs.id);
  });
});

describe("round trips", () => {
  it("list, get, participants and mine are one D1 call each", async () => {
    const { t, measure } = countingTestApp();
    const group = await createGroup(t);
    await addParticipants(t, group.id, {
      teacherIds: [await demoTeacherProfile(t)],
      studentIds: [await makeStudent(t, NORTH)],
    });
    const staff = await admin(t);
    const teacher = await roleToken(t, DEMO.northTeacher.id, "teacher");
    for (const [path, token] of [
      ["/api/v1/group?level=elementary", staff],
      [`/api/v1/group/${group.id}`, staff],
      [`/api/v1/group/${group.id}/participants`, teacher],
      ["/api/v1/group/mine", teacher],
      ["/api/v1/group/teacher/mine", teacher],
      ["/api/v1/group-teacher", teacher],
      ["/api/v1/group-student", teacher],
    ] as const) {
      const { res, calls } = await measure(() => t.request(path, { token, school: NORTH }));
      expect(res.status, path).toBe(200);
      expect(calls, path).toBe(1);
    }
  });
});
