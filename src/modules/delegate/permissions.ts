import { definePermissions, STAFF } from "../../lib/access";

/**
 * Parents hold both: they list and manage their own delegates (the resource's `visibleTo` keeps
 * them to those); staff, who also hold `parent.read` / `parent.write`, see and manage every one.
 */
export const permissions = definePermissions({
  read: { id: 58, name: "delegate.read", description: "List and read delegates", grants: [...STAFF, "parent"] },
  write: {
    id: 59,
    name: "delegate.write",
    description: "Create, update and delete delegates",
    grants: [...STAFF, "parent"],
  },
});
