import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 18, name: "bulk-process.read", description: "List and read bulk processes", grants: STAFF },
  write: { id: 19, name: "bulk-process.write", description: "Start, update and delete bulk processes", grants: STAFF },
});
