import { asSuperAdmin, createVia, type Fixtures, readJson } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/schedule-configuration": {
    // One per school: a school's existing configuration is deleted first, so a new one is created.
    create: async (t, school) => {
      const token = await asSuperAdmin(t);
      const res = await t.request("/api/v1/schedule-configuration", { token, school });
      if (res.status !== 200) throw new Error(`fixture GET schedule-configuration: ${res.status} ${await res.text()}`);
      const existing = (await readJson<{ data: { id: number }[] }>(res)).data[0];
      if (existing) {
        const del = await t.request(`/api/v1/schedule-configuration/${existing.id}`, {
          method: "DELETE",
          token,
          school,
        });
        if (del.status !== 204) throw new Error(`fixture DELETE schedule-configuration: ${del.status}`);
      }
      return createVia(t, "/api/v1/schedule-configuration", school, {
        permissionTimeLimit: 24,
        permissionWeeksInAdvance: 2,
      });
    },
    bodies: { updateScheduleConfiguration: { permissionTimeLimit: 48 } },
  },
};
