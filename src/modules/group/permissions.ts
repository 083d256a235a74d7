import { definePermissions, STAFF } from "../../lib/access";

/**
 * Groups (classes). `group.read` lets a teacher read the groups they teach (and their members);
 * `group.read-all` widens it to every group of the school (the school's staff). Parents hold
 * neither: they see their children's groups through `GET /api/v1/group/mine` (any member).
 */
export const permissions = definePermissions({
  read: {
    id: 70,
    name: "group.read",
    description: "List and read groups and their members (without group.read-all: the groups one teaches)",
    grants: [...STAFF, "teacher"],
  },
  write: {
    id: 71,
    name: "group.write",
    description: "Create, update and delete groups, their teachers, students and image",
    grants: STAFF,
  },
  readAll: {
    id: 72,
    name: "group.read-all",
    description: "See every group of the school, not only the groups one teaches",
    grants: STAFF,
  },
});
