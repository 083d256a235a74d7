import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 15,
    name: "document.read",
    description: "List and read documents, and get download URLs",
    grants: [...STAFF, "teacher"],
  },
  write: {
    id: 16,
    name: "document.write",
    description: "Create, update and delete documents, and get upload URLs",
    grants: STAFF,
  },
});
