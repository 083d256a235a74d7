import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 85,
    name: "route-student.read",
    description: "List and read the students on routes (a driver: on the routes of their vehicles)",
    grants: [...STAFF, "driver"],
  },
  write: {
    id: 86,
    name: "route-student.write",
    description: "Put students on routes, suspend them, import and remove them",
    grants: STAFF,
  },
});
