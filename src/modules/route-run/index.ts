/**
 * A route's run on a day: the driver starts and finishes it, records boardings, drops and positions
 * (`/api/v1/route/{id}/run`), and a guardian follows their children's buses (`GET
 * /api/v1/route/mine/live`). Above the routes and their final lists (route-availability), whose
 * riders it checks; its permission (`route.run`) is the transport module's.
 */
import { defineModule } from "../../lib/module";

export default defineModule({
  name: "route-run",
  paths: ["/api/v1/route/:id/run", "/api/v1/route/mine/live"],
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "sweep-route-positions",
      run: async (deps) => (await import("./run-sweep")).sweepRunPositions(deps),
    },
  ],
  load: async () => {
    const [run, live] = await Promise.all([import("./run"), import("./live")]);
    return {
      operations: [
        live.getFamilyLiveRoutes,
        run.startRouteRun,
        run.getRouteRun,
        run.finishRouteRun,
        run.recordRouteRunBoarding,
        run.recordRouteRunPosition,
      ],
    };
  },
});
