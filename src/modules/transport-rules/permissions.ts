import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 20,
    name: "transport-rules.read",
    description: "Read the transportation rules content",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 21,
    name: "transport-rules.write",
    description: "Replace the transportation rules content",
    grants: STAFF,
  },
});
