import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 9, name: "school-configuration.read", description: "Read school configurations", grants: STAFF },
  write: {
    id: 10,
    name: "school-configuration.write",
    description: "Create, update and delete school configurations",
    grants: STAFF,
  },
});
