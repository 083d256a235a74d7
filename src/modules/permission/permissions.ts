import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 1, name: "permission.read", description: "List and read permissions", grants: ["school-admin"] },
  manage: {
    id: 2,
    name: "permission.manage",
    description: "Create, update and delete permissions (platform)",
    grants: [],
  },
});
