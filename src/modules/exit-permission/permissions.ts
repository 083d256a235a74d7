import { definePermissions, STAFF } from "../../lib/access";

/**
 * Parents hold read and write for their own children's permissions (a delegate in its window acts
 * as the parent); `exit-permission.manage` widens both to every student of the school;
 * `exit-permission.review` confirms and rejects.
 */
export const permissions = definePermissions({
  read: {
    id: 91,
    name: "exit-permission.read",
    description: "List and read exit permissions (without exit-permission.manage: one's own children's only)",
    grants: [...STAFF, "parent"],
  },
  write: {
    id: 92,
    name: "exit-permission.write",
    description:
      "Ask for exit permissions, fixed ones included, and cancel them while pending (without exit-permission.manage: for one's own children only)",
    grants: [...STAFF, "parent"],
  },
  review: {
    id: 93,
    name: "exit-permission.review",
    description: "Confirm and reject exit permissions",
    grants: STAFF,
  },
  manage: {
    id: 94,
    name: "exit-permission.manage",
    description: "Read, ask for and download the exit permissions of every student of the school",
    grants: STAFF,
  },
});
