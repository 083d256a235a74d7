import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 33,
    name: "school-schedule.read",
    description: "Read the school's schedules (entry, dismissal and after-school times per level and weekday)",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 34,
    name: "school-schedule.write",
    description: "Create, update and delete the school's schedules",
    grants: STAFF,
  },
});
