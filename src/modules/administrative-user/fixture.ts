import { createVia, type Fixtures, fixturePhone } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/administrative-user": {
    create: (t, school) =>
      createVia(t, "/api/v1/administrative-user", school, {
        phone: fixturePhone(),
        firstName: "Sam",
        position: "Registrar",
      }),
    bodies: { updateAdministrativeUser: { position: "Renamed by the conformance suite" } },
  },
};
