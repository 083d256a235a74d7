import { definePermissions, STAFF } from "../../lib/access";

/**
 * Anyone who invites (a guardian, a teacher, staff) sees the invitations they created and those
 * they received; `invitation.manage` sees every invitation of the school.
 */
export const permissions = definePermissions({
  read: {
    id: 95,
    name: "invitation.read",
    description: "List and read the invitations one created or received, and their answers",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 96,
    name: "invitation.write",
    description: "Invite, change and withdraw one's own invitations, and answer the ones received",
    grants: [...STAFF, "teacher", "parent"],
  },
  manage: {
    id: 97,
    name: "invitation.manage",
    description: "Read and download every invitation of the school and its answers",
    grants: STAFF,
  },
});
