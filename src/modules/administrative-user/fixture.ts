import { createVia, type Fixtures } from "../../../test/fixture-kit";

let next = 0;
/** A number no one has in this test file (the demo numbers are +1555000xxxx). */
const phone = () => `+1555${6_000_000 + ++next}`;

export const fixtures: Fixtures = {
  "/api/v1/administrative-user": {
    create: (t, school) =>
      createVia(t, "/api/v1/administrative-user", school, { phone: phone(), firstName: "Sam", position: "Registrar" }),
    bodies: { updateAdministrativeUser: { position: "Renamed by the conformance suite" } },
  },
};
