import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 3, name: "user.read", description: "List and read users of the school", grants: STAFF },
  write: { id: 4, name: "user.write", description: "Create, update and delete users of the school", grants: STAFF },
});
