/** Teachers: the teacher role's people in the current school, with their profile (subjects, employee number). */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "teacher",
  paths: ["/api/v1/teacher"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    // The export before `{id}`: `/export` is not an id.
    return {
      operations: [r.exportTeachers, r.listTeachers, r.getTeacher, r.createTeacher, r.updateTeacher, r.deleteTeacher],
    };
  },
});
