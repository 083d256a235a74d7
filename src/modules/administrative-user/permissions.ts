import { definePermissions, STAFF } from "../../lib/access";

/** Staff read their colleagues; only a school admin makes, edits or removes administrative staff. */
export const permissions = definePermissions({
  read: {
    id: 52,
    name: "administrative-user.read",
    description: "List, read and export the school's administrative staff",
    grants: STAFF,
  },
  write: {
    id: 53,
    name: "administrative-user.write",
    description: "Make users administrative staff, edit and remove them",
    grants: ["school-admin"],
  },
});
