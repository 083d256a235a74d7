import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 11,
    name: "holiday-cycle.read",
    description: "Read school holiday cycles",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 12,
    name: "holiday-cycle.write",
    description: "Create, update and delete school holiday cycles",
    grants: STAFF,
  },
});
