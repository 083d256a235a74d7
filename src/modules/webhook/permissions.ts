import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  manage: {
    id: 170,
    name: "webhook.manage",
    description: "Register, change and delete the school's webhook endpoints, read and retry their deliveries",
    grants: ["school-admin"],
  },
});
