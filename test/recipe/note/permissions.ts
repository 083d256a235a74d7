import { definePermissions, STAFF } from "../../../src/lib/access";

export const permissions = definePermissions({
  read: { id: 990, name: "note.read", description: "List and read notes", grants: [...STAFF, "teacher"] },
  write: { id: 991, name: "note.write", description: "Create, update and delete notes", grants: STAFF },
});
