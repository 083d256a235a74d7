import { createVia, type Fixtures, type Made, readJson, uniq } from "../../../test/fixture-kit";

/** A new module of the catalogue (a created one: no route is gated by it). */
const newModule = (t: Parameters<Made<unknown>>[0], school: number) =>
  createVia(t, "/api/v1/application-module", school, { key: uniq("fixture"), name: "Fixture module" });

/** The key of a new module: a call may switch it off without disturbing any other test. */
const newKey: Made<string> = async (t, school) => {
  const id = await newModule(t, school);
  const res = await t.request(`/api/v1/application-module/${id}`, { token: await t.token(1, {}, true), school });
  return (await readJson<{ key: string }>(res)).key;
};

export const fixtures: Fixtures = {
  "/api/v1/application-module": {
    create: newModule,
    bodies: {
      updateApplicationModule: { description: "Updated by the conformance suite" },
      toggleSchoolApplicationModule: { enabled: false },
      bulkToggleSchoolApplicationModules: (async (t, school) => ({
        modules: [{ key: await newKey(t, school), enabled: false }],
      })) satisfies Made<unknown>,
    },
    params: { key: newKey },
  },
  // The school is the record: a new catalogue module leaves it something to initialise.
  "/api/v1/school/{id}/initialize-modules": {
    create: async (t, school) => {
      await newModule(t, school);
      return school;
    },
  },
};
