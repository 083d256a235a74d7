import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 23,
    name: "audit-log.read",
    description: "Read the audit trail of the school (the super-admin: of every school)",
    grants: ["school-admin"],
  },
});
