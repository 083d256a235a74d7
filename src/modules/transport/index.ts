/**
 * School transport: vehicles (`/api/v1/transport`) and the routes they serve, with their stops
 * (`/api/v1/route`), and the routes of a parent's children (`GET /api/v1/route/mine`).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "transport",
  paths: ["/api/v1/transport", "/api/v1/route"],
  permissions,
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "sweep-route-positions",
      run: async (deps) => (await import("./run-sweep")).sweepRunPositions(deps),
    },
  ],
  load: async () => {
    const [v, r, w, f, run, live] = await Promise.all([
      import("./vehicle"),
      import("./route"),
      import("./route-write"),
      import("./family"),
      import("./run"),
      import("./live"),
    ]);
    return {
      operations: [
        v.listTransports,
        v.createTransportOperation,
        v.getTransport,
        v.updateTransportOperation,
        v.deleteTransport,
        r.listRoutes,
        w.createRouteOperation,
        // Before `/route/{id}`: `mine` is not an id.
        f.getFamilyRoutes,
        live.getFamilyLiveRoutes,
        r.getRoute,
        w.updateRouteOperation,
        w.deleteRouteOperation,
        run.startRouteRun,
        run.getRouteRun,
        run.finishRouteRun,
        run.recordRouteRunBoarding,
        run.recordRouteRunPosition,
      ],
    };
  },
});
