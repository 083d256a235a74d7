import { definePermissions, STAFF } from "../../lib/access";

/**
 * Trusted people and trusted addresses share these (the trusted-address module declares none of its
 * own). Parents hold read and write for their own children's records (the resources' `visibleTo`);
 * `trusted.manage` widens both to every student of the school; `trusted.review` decides.
 */
export const permissions = definePermissions({
  read: {
    id: 75,
    name: "trusted.read",
    description: "List and read trusted people and addresses (without trusted.manage: one's own children's only)",
    grants: [...STAFF, "parent"],
  },
  review: {
    id: 76,
    name: "trusted.review",
    description: "Approve or reject trusted people and addresses",
    grants: STAFF,
  },
  write: {
    id: 77,
    name: "trusted.write",
    description:
      "Register, change, delete and upload images of trusted people and addresses (without trusted.manage: one's own children's only)",
    grants: [...STAFF, "parent"],
  },
  manage: {
    id: 78,
    name: "trusted.manage",
    description: "Read and write every student's trusted people and addresses in the school",
    grants: STAFF,
  },
});
