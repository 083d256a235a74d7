import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 98,
    name: "transportation-summary.read",
    description: "Read the day's summary: how every student goes home, and the pending authorizations",
    grants: [...STAFF, "gate"],
  },
});
