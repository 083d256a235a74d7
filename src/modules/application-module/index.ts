import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "application-module",
  paths: ["/api/v1/application-module", "/api/v1/school/:id/initialize-modules"],
  permissions,
  load: async () => {
    const [r, s] = await Promise.all([import("./resource"), import("./routes")]);
    return {
      // The school's literal paths before the catalogue's `/{id}`: the router tries them in this order.
      operations: [
        s.listSchoolApplicationModules,
        s.listEnabledSchoolApplicationModules,
        s.getSchoolApplicationModuleStatus,
        s.toggleSchoolApplicationModule,
        s.bulkToggleSchoolApplicationModules,
        s.initializeSchoolModules,
        r.listApplicationModules,
        r.getApplicationModule,
        r.createApplicationModule,
        r.updateApplicationModule,
        r.deleteApplicationModule,
      ],
    };
  },
});
