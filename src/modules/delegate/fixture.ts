import { createVia, type Fixtures, fixturePhone } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/delegate": {
    // A parent of its own, then their delegate.
    create: async (t, school) => {
      const parentId = await createVia(t, "/api/v1/parent", school, {
        phone: fixturePhone(),
        firstName: "Pia",
        relationship: "mother",
      });
      return createVia(t, "/api/v1/delegate", school, {
        parentId,
        phone: fixturePhone(),
        firstName: "Dario",
        validFrom: "2026-01-01",
        validUntil: "2026-12-31",
      });
    },
    bodies: { updateDelegate: { validUntil: "2027-01-31" } },
  },
};
