import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/address": {
    create: (t, school) =>
      createVia(t, "/api/v1/address", school, {
        street: uniq("Street"),
        number: "12",
        city: "Monterrey",
        country: "MX",
      }),
    bodies: { updateAddress: { neighborhood: "Centro" } },
  },
};
