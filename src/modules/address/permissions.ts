import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 26, name: "address.read", description: "List and read the school's addresses", grants: STAFF },
  write: {
    id: 27,
    name: "address.write",
    description: "Create, update and delete the school's addresses",
    grants: ["school-admin"],
  },
});
