import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 7, name: "school.read", description: "Read schools", grants: [...STAFF, "teacher", "parent"] },
  /**
   * The platform's permission (super-admins only): create, list, update and delete any school.
   * Whoever holds it reaches every school's record, so no built-in school role gets it.
   */
  write: { id: 8, name: "school.write", description: "Create, update and delete schools (platform)", grants: [] },
  update: {
    id: 24,
    name: "school.update",
    description: "Update the current school: name, time zone, levels, contact, address and logo",
    grants: ["school-admin"],
  },
  statistics: {
    id: 25,
    name: "school.statistics",
    description: "Read the current school's statistics (people by role, students, groups, routes)",
    grants: STAFF,
  },
});
