import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 3, name: "user.read", description: "List and read users of the school", grants: STAFF },
  write: { id: 4, name: "user.write", description: "Create, update and delete users of the school", grants: STAFF },
  invite: {
    id: 40,
    name: "user.invite",
    description: "Text people an invitation to join the school in the app (rate-limited per school)",
    grants: STAFF,
  },
  contact: {
    id: 79,
    name: "user.contact",
    description: "See people's phone numbers and email addresses",
    grants: STAFF,
  },
});
