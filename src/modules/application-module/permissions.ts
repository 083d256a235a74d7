import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 30,
    name: "application-module.read",
    description: "Read the application module catalogue and which modules the school has enabled",
    grants: [...STAFF, "teacher", "parent"],
  },
  manage: {
    id: 31,
    name: "application-module.manage",
    description: "Create, update and delete application modules of the catalogue (platform)",
    grants: [],
  },
  toggle: {
    id: 32,
    name: "application-module.toggle",
    description: "Enable and disable application modules for the school, and initialise its module states",
    grants: [],
  },
});
