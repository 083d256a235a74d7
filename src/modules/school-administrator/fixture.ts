import { createVia, type Fixtures } from "../../../test/fixture-kit";

let next = 0;
/** A number no one has in this test file (the demo numbers are +1555000xxxx). */
const phone = () => `+1555${2_000_000 + ++next}`;

export const fixtures: Fixtures = {
  "/api/v1/school-administrator": {
    // A new person, invited by phone: the school then has two administrators, so one may go.
    create: (t, school) => createVia(t, "/api/v1/school-administrator", school, { phone: phone(), firstName: "Ada" }),
    bodies: { updateSchoolAdministrator: { lastName: "Renamed by the conformance suite" } },
  },
};
