import { desc } from "drizzle-orm";
import type { Fixtures } from "../../../test/fixture-kit";
import { cronHistory } from "../../db/schema/jobs";
import { runScheduled } from "../../jobs/scheduled";

export const fixtures: Fixtures = {
  // Scheduled runs are platform records made by the dispatcher, not by an API call.
  "/api/v1/cron-history": {
    create: async (t) => {
      await runScheduled(t.deps, "*/5 * * * *");
      const [row] = await t.db.select({ id: cronHistory.id }).from(cronHistory).orderBy(desc(cronHistory.id)).limit(1);
      return row?.id ?? 0;
    },
  },
};
