import { createVia, type Fixtures } from "../../../test/fixture-kit";

let next = 0;
/** A number no one else has in the conformance suite (the demo numbers are +1555000xxxx and +15556xxxxxx). */
export const fixturePhone = () => `+1555${5_100_000 + ++next}`;

export const fixtures: Fixtures = {
  "/api/v1/parent": {
    create: (t, school) =>
      createVia(t, "/api/v1/parent", school, { phone: fixturePhone(), firstName: "Pia", relationship: "mother" }),
    bodies: { updateParent: { relationship: "guardian" } },
  },
};
