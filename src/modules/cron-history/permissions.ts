import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 22,
    name: "cron-history.read",
    description: "Read the history of scheduled runs",
    grants: ["school-admin"],
  },
  write: {
    id: 105,
    name: "cron-history.write",
    description: "Record, correct and delete scheduled runs that are not running (super-admin only)",
    grants: [],
  },
});
