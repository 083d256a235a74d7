import { createVia, type Fixtures, fixturePhone } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/parent": {
    create: (t, school) =>
      createVia(t, "/api/v1/parent", school, { phone: fixturePhone(), firstName: "Pia", relationship: "mother" }),
    bodies: { updateParent: { relationship: "guardian" } },
  },
};
