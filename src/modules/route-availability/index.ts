import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "route-availability",
  paths: ["/api/v1/route-availability", "/api/v1/route-availability-student"],
  permissions,
  load: async () => {
    const [a, c, l, o] = await Promise.all([
      import("./availability"),
      import("./changes"),
      import("./list-routes"),
      import("./options"),
    ]);
    // Literal sub-paths before the `{id}` routes.
    return {
      operations: [
        a.getSchoolRouteAvailabilityOperation,
        o.listRouteOptionsOperation,
        a.getRouteAvailabilityByRouteOperation,
        a.listRouteAvailabilityHistoryOperation,
        a.listRouteAvailabilities,
        a.createRouteAvailability,
        a.getRouteAvailability,
        a.updateRouteAvailabilityOperation,
        a.deleteRouteAvailability,
        l.downloadAllRoutesFinalStatusPdfOperation,
        l.getRouteFinalStatusOperation,
        l.downloadRouteFinalStatusPdfOperation,
        l.listRouteAvailabilityStudentsByRouteOperation,
        c.listRouteAvailabilityStudents,
        c.createRouteAvailabilityStudentOperation,
        c.getRouteAvailabilityStudent,
        c.updateRouteAvailabilityStudentOperation,
        c.deleteRouteAvailabilityStudentOperation,
      ],
    };
  },
});
