import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

const configuration = (t: Parameters<Fixtures[string]["create"]>[0], school: number) =>
  createVia(t, "/api/v1/school-configuration", school, {
    name: uniq("year"),
    startDate: "2026-08-24",
    endDate: "2027-06-30",
  });

export const fixtures: Fixtures = {
  "/api/v1/school-holiday-cycle": {
    // Its own school configuration, so the fixture needs no seeded row.
    create: async (t, school) =>
      createVia(t, "/api/v1/school-holiday-cycle", school, {
        startHolidays: "2026-12-19T00:00:00-06:00",
        endHolidays: "2027-01-07T00:00:00-06:00",
        schoolConfigurationId: await configuration(t, school),
      }),
    bodies: { updateSchoolHolidayCycle: { endHolidays: "2027-01-08T00:00:00-06:00" } },
  },
  // The nested list's parent: a configuration (the list of its cycles is checked by the suite).
  "/api/v1/school-configuration/{schoolConfigurationId}/school-holiday-cycle": { create: configuration },
};
