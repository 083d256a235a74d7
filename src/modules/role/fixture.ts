import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";

let next = 0;
/** A number no other fixture uses (the demo numbers are +1555000xxxx). */
const phone = () => `+1555${3_500_000 + ++next}`;

/** A new person of `school` (invited as a school administrator) and their user id. */
async function person(t: TestApp, school: number) {
  const id = await createVia(t, "/api/v1/school-administrator", school, { phone: phone(), firstName: "Rolf" });
  const res = await t.request(`/api/v1/school-administrator/${id}`, { token: await t.token(1, {}, true), school });
  return ((await res.json()) as { userId: number }).userId;
}

export const fixtures: Fixtures = {
  "/api/v1/role": {
    create: (t, school) => createVia(t, "/api/v1/role", school, { name: uniq("Role"), permissions: ["user.read"] }),
    bodies: { updateRole: { name: "Renamed by the conformance suite" } },
  },
  "/api/v1/role-user": {
    // A person with a teacher membership (they are also an administrator, so it may go).
    create: async (t, school) =>
      createVia(t, "/api/v1/role-user", school, { userId: await person(t, school), roleId: 4 }),
    bodies: {
      updateRoleUser: { roleId: 3 },
      createRoleUser: async (t: TestApp, school: number) => ({ userId: await person(t, school), roleId: 4 }),
      assignMultipleRolesToUser: async (t: TestApp, school: number) => ({
        userId: await person(t, school),
        roleIds: [4],
      }),
    },
  },
  "/api/v1/user/{id}/roles": {
    create: (t, school) => person(t, school),
    bodies: { assignUserRoles: { roleIds: [4] } },
  },
};
