import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 22,
    name: "cron-history.read",
    description: "Read the history of scheduled runs",
    grants: ["school-admin"],
  },
});
