import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 7, name: "school.read", description: "Read schools", grants: [...STAFF, "teacher", "parent"] },
  write: { id: 8, name: "school.write", description: "Create, update and delete schools (platform)", grants: [] },
});
