/** The route-run module's face: what other modules may use of it. */
import { RouteRunEvents, RouteRuns, routeRunEvents, routeRuns } from "../../db/schema/route-run";
import { eq, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";

/**
 * The riders who boarded a bus on `date` (a run of that day), with when and which route: a query for
 * the caller's batch (the dismissal board's `boarded`). `only` narrows it by the student's id column.
 */
export const boardingsOn = (ctx: SchoolCtx, date: string, only?: (studentId: SQL) => SQL | undefined) =>
  RouteRunEvents.select(ctx, { studentId: routeRunEvents.studentId, at: routeRunEvents.at }).where(
    eq(routeRunEvents.event, "boarded"),
    inList(routeRunEvents.runId, RouteRuns.pick(ctx, routeRuns.id, eq(routeRuns.date, date))),
    only?.(sql`${routeRunEvents.studentId}`),
  );
