import { definePermissions } from "../../lib/access";

export const permissions = definePermissions({
  reset: {
    id: 104,
    name: "reset-data",
    description:
      "Remove every school's data and the push provider's topics, where the setting allows it (super-admin only)",
    grants: [],
  },
});
