import { createVia, type Fixtures } from "../../../test/fixture-kit";
import { fixtureStudent } from "../trusted-person/fixture";

export const fixtures: Fixtures = {
  "/api/v1/trusted-address": {
    create: async (t, school) =>
      createVia(t, "/api/v1/trusted-address", school, {
        studentId: await fixtureStudent(t, school),
        street: "Avenida Insurgentes Sur",
        number: "1602",
        city: "Ciudad de Mexico",
        country: "MX",
      }),
    bodies: {
      updateTrustedAddress: { number: "1604" },
      decideTrustedAddress: { status: "approved", routeStopId: null },
    },
  },
};
