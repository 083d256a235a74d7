import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  // Every school operation acts on a school by id. The suite's first-school admin holds every
  // permission, school.write included (a platform operator's), so it reaches this new school: the
  // routes are platform-scoped, and a school admin's 404 for another school is in test/schools.test.ts.
  "/api/v1/school": {
    create: (t, school) =>
      createVia(t, "/api/v1/school", school, {
        name: uniq("School"),
        timeZone: "America/Monterrey",
        levels: ["elementary"],
      }),
    bodies: {
      updateSchool: { name: "Renamed by the conformance suite", levels: ["middle", "high"] },
      updateSchoolAddress: { addressId: null },
      createSchoolLogoUrl: { contentType: "image/png" },
    },
  },
};
