import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: {
    id: 36,
    name: "legal-document.read",
    description: "List and read published legal documents (with legal-document.write: drafts too)",
    grants: [...STAFF, "teacher", "parent"],
  },
  write: {
    id: 37,
    name: "legal-document.write",
    description: "Create, update, publish and delete legal documents (platform)",
    grants: [],
  },
});
