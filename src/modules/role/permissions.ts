import { definePermissions, STAFF } from "../../lib/access";

/** Roles and role memberships (ids 5 and 6 came from the user module; the names and ids are unchanged). */
export const permissions = definePermissions({
  read: { id: 5, name: "role.read", description: "List and read roles", grants: STAFF },
  write: {
    id: 6,
    name: "role.write",
    description: "Create, update and delete roles and role assignments",
    grants: ["school-admin"],
  },
});
