import { createVia, type Fixtures, fixturePhone } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/school-administrator": {
    // A new person, invited by phone: the school then has two administrators, so one may go.
    create: (t, school) =>
      createVia(t, "/api/v1/school-administrator", school, { phone: fixturePhone(), firstName: "Ada" }),
    bodies: { updateSchoolAdministrator: { lastName: "Renamed by the conformance suite" } },
  },
};
