/** Schools: the tenants, their levels, statistics, logo and address. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "school",
  paths: ["/api/v1/school"],
  permissions,
  load: async () => {
    const [r, x, mv] = await Promise.all([import("./resource"), import("./routes"), import("./move")]);
    return {
      // Literal paths before `/{id}`: Hono tries a path's routes in the order they are added.
      operations: [
        x.listSchoolLevels,
        x.listCurrentSchoolLevels,
        x.deleteMultipleSchools,
        r.listSchools,
        r.createSchool,
        r.getSchool,
        r.updateSchool,
        x.deleteSchool,
        x.getSchoolStatistics,
        x.createSchoolLogoUrl,
        x.updateSchoolAddress,
        mv.moveSchoolRoute,
        mv.getSchoolShard,
      ],
    };
  },
});
