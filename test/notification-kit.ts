/**
 * People, families and groups made straight in the database for the notification tests: each
 * test knows exactly who its audience is (the demo data's people stay out of its counts).
 */
import { and, eq } from "drizzle-orm";
import { roleUsers, users } from "../src/db/schema/core";
import { deviceTokens } from "../src/db/schema/device-token";
import { groupStudents, groups } from "../src/db/schema/group";
import { parents } from "../src/db/schema/parent";
import { guardians, students } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { fixturePhone, uniq } from "./fixture-kit";
import type { TestApp } from "./helpers";

const now = (t: TestApp) => t.clock.now().toISOString();

/** A user with a role in `school` (default: parent, whose profile the role's trigger makes). */
export async function member(t: TestApp, school: number, { role = 5, language = "en" } = {}) {
  const at = now(t);
  const [user] = await t.db
    .insert(users)
    .values(
      withSearch(users, {
        phone: fixturePhone(),
        firstName: "Pat",
        lastName: uniq("Kit"),
        language,
        status: "active",
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning({ id: users.id });
  const id = user?.id ?? 0;
  await t.anchorUsers(school, id);
  await (await t.schoolDb(school))
    .insert(roleUsers)
    .values({ schoolId: school, userId: id, roleId: role, createdAt: at, updatedAt: at });
  return id;
}

/** A student of `school`. */
export async function student(
  t: TestApp,
  school: number,
  level: "preschool" | "elementary" | "middle" | "high" = "elementary",
) {
  const at = now(t);
  const [row] = await (await t.schoolDb(school))
    .insert(students)
    .values(
      withSearch(students, {
        schoolId: school,
        firstName: "Kid",
        lastName: uniq("Kit"),
        level,
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning({ id: students.id });
  return row?.id ?? 0;
}

/** `userId` (a parent of `school`) guards `studentId`. */
export async function guard(
  t: TestApp,
  school: number,
  userId: number,
  studentId: number,
  receivesNotifications = true,
) {
  const at = now(t);
  const [parent] = await (await t.schoolDb(school))
    .select({ id: parents.id })
    .from(parents)
    .where(and(eq(parents.schoolId, school), eq(parents.userId, userId)));
  await (await t.schoolDb(school)).insert(guardians).values({
    schoolId: school,
    studentId,
    parentId: parent?.id ?? 0,
    receivesNotifications,
    createdAt: at,
    updatedAt: at,
  });
}

/** A group of `school` with these students. */
export async function group(t: TestApp, school: number, studentIds: number[]) {
  const at = now(t);
  const [row] = await (await t.schoolDb(school))
    .insert(groups)
    .values(
      withSearch(groups, {
        schoolId: school,
        name: uniq("Kit group"),
        level: "elementary",
        schoolYear: "2026-2027",
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning({ id: groups.id });
  const id = row?.id ?? 0;
  for (const s of studentIds)
    await (await t.schoolDb(school))
      .insert(groupStudents)
      .values({ schoolId: school, groupId: id, studentId: s, createdAt: at, updatedAt: at });
  return id;
}

/** A device of `userId`: its token value. */
export async function device(t: TestApp, userId: number, token = `fcm-${crypto.randomUUID()}`) {
  const at = now(t);
  await t.db.insert(deviceTokens).values({ userId, token, platform: "android", createdAt: at, updatedAt: at });
  return token;
}

/**
 * A group of three families: one guardian of two children (siblings), two guardians of one
 * child, and a guardianship the school set not to receive notifications; each guardian with a
 * device. Answers who should be reached and who should not.
 */
export async function classWithFamilies(t: TestApp, school: number) {
  const [a, b, c, muted] = [
    await member(t, school),
    await member(t, school, { language: "es" }),
    await member(t, school),
    await member(t, school),
  ];
  const [s1, s2, s3] = [await student(t, school), await student(t, school), await student(t, school)];
  await guard(t, school, a, s1);
  await guard(t, school, a, s2);
  await guard(t, school, b, s3);
  await guard(t, school, c, s3);
  await guard(t, school, muted, s3, false);
  const groupId = await group(t, school, [s1, s2, s3]);
  const tokens = new Map<number, string>();
  for (const u of [a, b, c, muted]) tokens.set(u, await device(t, u));
  return { groupId, guardians: [a, b, c].sort((x, y) => x - y), muted, students: [s1, s2, s3], tokens };
}
