import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/permission": {
    create: (t, school) => createVia(t, "/api/v1/permission", school, { name: `custom.${uniq("p")}` }),
    bodies: { updatePermission: { description: "Updated by the conformance suite" } },
  },
};
