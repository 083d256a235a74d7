import { definePermissions, STAFF } from "../../lib/access";

/**
 * Staff manage events; teachers and parents read the events of their audience (a parent: those for
 * the whole school, their children's levels or groups; a teacher: those of the groups they teach and
 * their levels) and keep their family's calendar feed.
 */
export const permissions = definePermissions({
  read: {
    id: 120,
    name: "event.read",
    description: "List and read the events one is in the audience of, and keep one's family's calendar feed",
    grants: [...STAFF, "teacher", "parent"],
  },
  manage: {
    id: 121,
    name: "event.manage",
    description:
      "Create, change, remind, cancel and delete every event of the school, its reminders, image and calendar feeds",
    grants: STAFF,
  },
});
