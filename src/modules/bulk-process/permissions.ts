import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  read: { id: 18, name: "bulk-process.read", description: "List and read bulk processes", grants: STAFF },
  write: { id: 19, name: "bulk-process.write", description: "Start, update and delete bulk processes", grants: STAFF },
  /** The whole school in one file: its administrators' (and the platform's), not every staff member's. */
  export: {
    id: 150,
    name: "school.export",
    description: "Export every record of the school and download the file",
    grants: ["school-admin"],
  },
});
