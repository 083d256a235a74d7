import { asSuperAdmin, createVia, type Fixtures, fixturePhone, readJson } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";

let next = 0;

const student = (t: TestApp, school: number) =>
  createVia(t, "/api/v1/student", school, { firstName: "Sara", lastName: `Student ${++next}`, level: "elementary" });
const parent = (t: TestApp, school: number) =>
  createVia(t, "/api/v1/parent", school, { phone: fixturePhone(), firstName: "Gina", relationship: "mother" });

export const fixtures: Fixtures = {
  "/api/v1/student": {
    create: student,
    bodies: {
      updateStudent: { level: "middle" },
      addStudentGuardian: async (t: TestApp, school: number) => ({ parentId: await parent(t, school) }),
    },
  },
  // Restore needs a deleted student.
  "/api/v1/student/{id}/restore": {
    create: async (t, school) => {
      const id = await student(t, school);
      const res = await t.request(`/api/v1/student/${id}`, { method: "DELETE", token: await asSuperAdmin(t), school });
      if (res.status !== 204) throw new Error(`fixture deleted student: ${res.status} ${await res.text()}`);
      return id;
    },
  },
  "/api/v1/student-guardian": {
    create: async (t, school) => {
      const id = await student(t, school);
      const res = await t.request(`/api/v1/student/${id}/guardian`, {
        method: "POST",
        token: await asSuperAdmin(t),
        school,
        body: { parentId: await parent(t, school) },
      });
      if (res.status !== 201) throw new Error(`fixture guardian: ${res.status} ${await res.text()}`);
      return (await readJson<{ id: number }>(res)).id;
    },
    bodies: {
      updateStudentGuardian: { canPickUp: false },
      restrictStudentGuardian: { restricted: true, reason: "Court order", from: "2026-12-01", until: "2026-12-31" },
    },
  },
};
