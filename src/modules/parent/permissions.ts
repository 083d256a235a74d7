import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 55, name: "parent.read", description: "List, read and export the school's parents", grants: STAFF },
  write: { id: 56, name: "parent.write", description: "Create, update and remove the school's parents", grants: STAFF },
  contact: {
    id: 57,
    name: "parent.contact",
    description: "See parents' and delegates' phones and emails",
    grants: STAFF,
  },
});
