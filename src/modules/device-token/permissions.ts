import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  readAll: {
    id: 17,
    name: "device-token.read",
    description: "List the device tokens of every user of the school (values masked)",
    grants: STAFF,
  },
});
