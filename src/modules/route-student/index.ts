/**
 * Route students: `/api/v1/route-student` (students on routes, at stops, on weekdays; their
 * suspensions; the Excel export). The spreadsheet import is the bulk-process module's
 * (`POST /api/v1/route-student/upload-file`).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "route-student",
  paths: ["/api/v1/route-student"],
  permissions,
  load: async () => {
    const [r, s] = await Promise.all([import("./resource"), import("./suspension")]);
    // The fixed sub-paths before `{id}`: `/export`, `/delete-multiple` and `/route/...` are not ids.
    return {
      operations: [
        r.exportRouteStudents,
        r.deleteRouteStudents,
        r.listRouteStudentsByRoute,
        r.listRouteStudents,
        r.getRouteStudent,
        r.createRouteStudent,
        r.updateRouteStudent,
        r.deleteRouteStudent,
        s.suspendRouteStudent,
        s.cancelSuspensionRouteStudent,
      ],
    };
  },
});
