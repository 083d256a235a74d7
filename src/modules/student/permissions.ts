import { definePermissions, STAFF } from "../../lib/access";

/**
 * Students: the school's staff read and write them. Teachers and parents hold neither: they read
 * the students they may see through the resource's visibility (their groups; their children).
 * A restriction on a guardian (a court order: "may not pick up") is set by school admins only.
 */
export const permissions = definePermissions({
  read: {
    id: 65,
    name: "student.read",
    description: "List, read and export all of the school's students",
    grants: STAFF,
  },
  write: {
    id: 66,
    name: "student.write",
    description: "Create, update and remove students and link their guardians",
    grants: STAFF,
  },
  restrict: {
    id: 67,
    name: "guardian.restrict",
    description: "Set or clear a restriction on a guardian (may not pick the student up)",
    grants: ["school-admin"],
  },
});
