/** Students: the school's children, their guardians (parents with capabilities) and the Excel export. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "student",
  paths: ["/api/v1/student", "/api/v1/student-guardian"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    const g = await import("./guardian-routes");
    // Literal sub-paths (`/export`, `/delete-multiple`) before `{id}`.
    return {
      operations: [
        r.exportStudents,
        r.deleteStudents,
        r.deleteMultipleStudents,
        r.listStudents,
        r.createStudent,
        r.getStudentDetail,
        r.getStudent,
        r.updateStudent,
        r.deleteStudent,
        r.restoreStudentOperation,
        g.addGuardian,
        g.updateGuardian,
        g.removeGuardian,
        g.restrictGuardian,
      ],
    };
  },
});
