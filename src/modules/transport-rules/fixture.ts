import type { Fixtures } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  // A singleton per school: no record ids in its paths, only the body its PUT takes.
  "/api/v1/rules-transportation/content": {
    create: async () => 0,
    bodies: { replaceTransportationRules: { content: "Buses leave 15 minutes after dismissal." } },
  },
};
