import { definePermissions, STAFF } from "../../lib/access";

/**
 * Staff (and the `gate` role) read the school's board and release children; a guardian or their
 * delegate in its window reads the board of their own children and says "I'm here" as a member
 * (no permission: the children decide). `dismissal.manage` (school admins) sets the school's
 * position and radius, overrides the plan with a reason, and starts and ends a reunification.
 */
export const permissions = definePermissions({
  read: {
    id: 160,
    name: "dismissal.read",
    description: "Read the school's dismissal board, call list, releases and live stream",
    grants: [...STAFF, "gate"],
  },
  release: {
    id: 161,
    name: "dismissal.release",
    description: "Call children and release them at a gate to a collector the day's plan names",
    grants: [...STAFF, "gate"],
  },
  manage: {
    id: 162,
    name: "dismissal.manage",
    description:
      "Set the school's dismissal position and radius, release against the plan with a reason, and start and end a reunification",
    grants: ["school-admin"],
  },
});
