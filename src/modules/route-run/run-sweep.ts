/**
 * Bus positions are kept for the day only: every 5 minutes the positions recorded more than
 * `KEEP_HOURS` ago are deleted (every school's: the job has no school; the index on the run and
 * time serves each run's reads, this sweep reads by creation time). The run keeps its last one.
 */
import { routeRunPositions } from "../../db/schema/route-run";
import { lt } from "../../db/sql";
import type { Deps } from "../../deps";

export const KEEP_HOURS = 24;

export async function sweepRunPositions(deps: Deps): Promise<string> {
  const before = new Date(deps.clock.now().getTime() - KEEP_HOURS * 3_600_000).toISOString();
  const gone = await deps.db
    .delete(routeRunPositions)
    .where(lt(routeRunPositions.createdAt, before))
    .returning({ id: routeRunPositions.id });
  return `${gone.length} bus positions older than ${KEEP_HOURS} hours deleted`;
}
