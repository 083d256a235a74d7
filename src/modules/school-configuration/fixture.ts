import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/school-configuration": {
    create: (t, school) =>
      createVia(t, "/api/v1/school-configuration", school, {
        name: uniq("year"),
        startDate: "2026-08-24",
        endDate: "2027-06-30",
      }),
    bodies: { updateSchoolConfiguration: { name: "Renamed by the conformance suite", maxParentsPerFamily: 3 } },
  },
};
