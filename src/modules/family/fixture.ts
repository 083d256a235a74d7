import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

/** A family made in `school` by a super-admin (no members). */
const make = async (t: Parameters<Fixtures[string]["create"]>[0], school: number) => {
  const familyNumber = uniq("F");
  const id = await createVia(t, "/api/v1/family", school, { familyNumber, name: "Conformance family" });
  return { id, familyNumber };
};

export const fixtures: Fixtures = {
  "/api/v1/family": {
    create: async (t, school) => (await make(t, school)).id,
    bodies: {
      updateFamily: { name: "Renamed by the conformance suite" },
      validateFamilies: { ids: [1] },
    },
    params: { familyNumber: async (t, school) => (await make(t, school)).familyNumber },
  },
};
