/**
 * Dismissal, live: the board of the day (each child's plan and status), "I'm here" and the call
 * list, releases at the gate to a collector the day's effective plan names, and the events of the
 * day with their sequence numbers (docs/domain.md#dismissal).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "dismissal",
  paths: ["/api/v1/dismissal"],
  permissions,
  // Changes made elsewhere (a permission confirmed or withdrawn, a boarding) go on the day's event log.
  events: async (ctx, events, batch) => (await import("./heard")).logSchoolEvents(ctx, events, batch),
  load: async () => {
    const [board, setting, arrival, release, live, reunification, offline, listed] = await Promise.all([
      import("./board"),
      import("./setting"),
      import("./arrival"),
      import("./release"),
      import("./live"),
      import("./reunification"),
      import("./batch"),
      import("./releases"),
    ]);
    const { published } = await import("./hub");
    return {
      // The verbs that write the day's events tell the school's live hub once they answered (hub.ts).
      operations: [
        board.getBoardOperation,
        setting.getSettingOperation,
        setting.updateSettingOperation,
        published(arrival.createArrivalOperation),
        arrival.listArrivalsOperation,
        published(arrival.callArrival),
        published(release.createReleaseOperation),
        published(offline.createReleaseBatchOperation),
        listed.listReleases,
        listed.exportReleases,
        live.createTicketOperation,
        live.getLiveOperation,
        published(reunification.startReunificationOperation),
        published(reunification.endReunificationOperation),
        reunification.getReportOperation,
      ],
    };
  },
});
