import { definePermissions, STAFF } from "../../lib/access";

/**
 * Families and teachers read published sessions and their slots; families book and cancel for their
 * own children; `appointment.manage` sets sessions up, publishes them and books or cancels for anyone.
 */
export const permissions = definePermissions({
  read: {
    id: 143,
    name: "appointment.read",
    description: "List and read published sessions, their days and slots, and one's own appointments",
    grants: [...STAFF, "teacher", "parent"],
  },
  book: {
    id: 144,
    name: "appointment.book",
    description: "Book and cancel appointments for one's own children",
    grants: [...STAFF, "parent"],
  },
  manage: {
    id: 145,
    name: "appointment.manage",
    description: "Set up and publish sessions, days and slots; book and cancel appointments for anyone",
    grants: STAFF,
  },
});
