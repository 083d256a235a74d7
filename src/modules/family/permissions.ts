import { definePermissions, STAFF } from "../../lib/access";

/**
 * `family.read` lets a caller use the family reads at all (a teacher without it: 403); what they
 * see is narrowed by `family.read-all`: its holders see every family of the school, everyone else
 * (parents, and their delegates, who hold the parent role's permissions) only their own family.
 */
export const permissions = definePermissions({
  read: {
    id: 60,
    name: "family.read",
    description: "Read families: one's own family, or every family of the school with family.read-all",
    grants: [...STAFF, "parent"],
  },
  write: {
    id: 61,
    name: "family.write",
    description: "Create, update and delete the school's families",
    grants: STAFF,
  },
  readAll: {
    id: 62,
    name: "family.read-all",
    description: "See every family of the school (with family.read)",
    grants: STAFF,
  },
});
