/** Students: the school's children, their guardians (parents with capabilities) and the Excel export. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "student",
  paths: ["/api/v1/student", "/api/v1/student-guardian"],
  permissions,
  load: async () => {
    const [r, g, d, x] = await Promise.all([
      import("./resource"),
      import("./guardian-routes"),
      import("./detail"),
      import("./removal"),
    ]);
    // Literal sub-paths (`/export`, `/delete-multiple`) before `{id}`.
    return {
      operations: [
        r.exportStudents,
        x.deleteStudents,
        x.deleteMultipleStudents,
        r.listStudents,
        r.createStudent,
        d.getStudentDetail,
        r.getStudent,
        r.updateStudent,
        x.deleteStudent,
        x.restoreStudentOperation,
        g.addGuardian,
        g.getGuardian,
        g.updateGuardian,
        g.removeGuardian,
        g.restrictGuardian,
      ],
    };
  },
});
