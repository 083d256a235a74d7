import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  // Parents and teachers see the rules requests follow: the cut-off and how far ahead.
  read: {
    id: 13,
    name: "schedule-configuration.read",
    description: "Read schedule configurations",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 14,
    name: "schedule-configuration.write",
    description: "Create, update and delete schedule configurations",
    grants: STAFF,
  },
});
