import { createVia, type Fixtures, fixturePhone, type Made, uniq } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";
import { groups } from "../../db/schema/group";
import { students } from "../../db/schema/student";
import { withSearch } from "../../db/search";

/** A group in `school` (elementary: both demo schools offer it). */
export const makeGroup: Made<number> = (t, school) =>
  createVia(t, "/api/v1/group", school, { name: uniq("Group"), level: "elementary", schoolYear: "2026-2027" });

/** A teacher profile in `school`. */
export const makeTeacher: Made<number> = (t, school) =>
  createVia(t, "/api/v1/teacher", school, { phone: fixturePhone(), firstName: "Gina" });

/** A student in `school`, inserted directly (the student module owns its API). */
export const makeStudent: Made<number> = async (t, school) => {
  const at = t.clock.now().toISOString();
  const [row] = await t.db
    .insert(students)
    .values(
      withSearch(students, {
        schoolId: school,
        firstName: "Sol",
        lastName: uniq("Student"),
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning({ id: students.id });
  if (!row) throw new Error("no student");
  return row.id;
};

/** A group inserted directly (no audit row of its own: for the delete-multiple audit check). */
const insertGroup: Made<number> = async (t, school) => {
  const at = t.clock.now().toISOString();
  const [row] = await t.db
    .insert(groups)
    .values(
      withSearch(groups, {
        schoolId: school,
        name: uniq("Group"),
        level: "elementary",
        schoolYear: "2026-2027",
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning({ id: groups.id });
  if (!row) throw new Error("no group");
  return row.id;
};

export const fixtures: Fixtures = {
  "/api/v1/group": {
    create: makeGroup,
    bodies: {
      updateGroup: { grade: 4 },
      addGroupParticipants: async (t: TestApp, school: number) => ({ teacherIds: [await makeTeacher(t, school)] }),
      removeGroupParticipants: { teacherIds: [1] },
      createGroupSignedUrl: { contentType: "image/png" },
      deleteMultipleGroups: async (t: TestApp, school: number) => ({ ids: [await insertGroup(t, school)] }),
      deleteMultipleGroupsPost: async (t: TestApp, school: number) => ({ ids: [await insertGroup(t, school)] }),
    },
  },
  "/api/v1/group-teacher": {
    create: async (t, school) =>
      createVia(t, "/api/v1/group-teacher", school, {
        groupId: await makeGroup(t, school),
        teacherId: await makeTeacher(t, school),
        subject: "Math",
      }),
    bodies: { updateGroupTeacher: { subject: "Physics" } },
  },
  "/api/v1/group-student": {
    create: async (t, school) =>
      createVia(t, "/api/v1/group-student", school, {
        groupId: await makeGroup(t, school),
        studentId: await makeStudent(t, school),
      }),
    bodies: { updateGroupStudent: async (t: TestApp, school: number) => ({ groupId: await makeGroup(t, school) }) },
  },
};
