import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";
import { students } from "../../db/schema/student";
import { withSearch } from "../../db/search";

/** A student of `school`, inserted directly (the student routes are another module's). */
export async function fixtureStudent(t: TestApp, school: number): Promise<number> {
  const [row] = await t.db
    .insert(students)
    .values(withSearch(students, { schoolId: school, firstName: uniq("Sam"), lastName: "Trusted" }))
    .returning({ id: students.id });
  if (!row) throw new Error("fixture student not inserted");
  return row.id;
}

export const fixtures: Fixtures = {
  "/api/v1/trusted-person": {
    create: async (t, school) =>
      createVia(t, "/api/v1/trusted-person", school, {
        studentId: await fixtureStudent(t, school),
        name: "Laura Gomez",
        relationship: "aunt",
        phone: "+52 55 1234 5678",
      }),
    bodies: {
      updateTrustedPerson: { name: "Laura G. Gomez" },
      decideTrustedPerson: { status: "approved", reason: "ID checked" },
      createTrustedPersonUploadUrl: { kind: "photo", contentType: "image/jpeg" },
    },
  },
};
