import { definePermissions, STAFF } from "../../lib/access";

/**
 * Teachers' records carry phones and emails: the school's staff read them; teachers themselves do
 * not get `teacher.read` (a teacher's own groups and colleagues come with the groups module).
 */
export const permissions = definePermissions({
  read: { id: 50, name: "teacher.read", description: "List, read and export the school's teachers", grants: STAFF },
  write: {
    id: 51,
    name: "teacher.write",
    description: "Make users teachers, edit and remove teachers",
    grants: STAFF,
  },
});
