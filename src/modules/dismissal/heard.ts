/**
 * What the live board hears of changes made elsewhere (src/lib/school-events.ts): an exit permission
 * confirmed or withdrawn, a bus boarding or drop, a bus leaving on its run, each appended to the day's event log of the child
 * it is about (in the verb's own batch: logged with the change or not at all), and the school's
 * hub is told once it committed, so the stream announces it. A release is logged by the release's
 * own batch.
 */
import type { Batch } from "../../db/batch";
import type { SchoolCtx } from "../../lib/context";
import type { SchoolEvent } from "../../lib/school-events";
import { type EventType, eventOf } from "./events";
import { publish } from "./hub";

/** The board's event for a school event (none: not the board's, or logged where it happened). */
const BOARD_EVENTS: Partial<Record<SchoolEvent["type"], EventType>> = {
  "exit-permission.confirmed": "permission-confirmed",
  "exit-permission.withdrawn": "permission-withdrawn",
  "route.boarded": "boarded",
  "route.dropped": "dropped",
};

/** The facts the stream carries beside the type (no names: a guardian's stream is filtered by child only). */
function factsOf(event: SchoolEvent): Record<string, unknown> {
  const d = event.data;
  const permission = d.exitPermission;
  if (typeof permission === "object" && permission !== null) {
    return { permissionId: field(permission, "id"), kind: field(permission, "kind") };
  }
  return { routeId: d.routeId ?? null, stopId: d.stopId ?? null, boardedAt: d.at ?? null };
}

/** One field of a record the event carries (null when it has none). */
const field = (o: object, key: string): unknown => (key in o ? Reflect.get(o, key) : null);

export async function logSchoolEvents(ctx: SchoolCtx, events: readonly SchoolEvent[], batch: Batch) {
  const statements = events.flatMap((e) => {
    // A bus left on its run: the school's event of that day (no child; staff streams carry it).
    if (e.type === "route.departed" && typeof e.data.date === "string") {
      return [
        eventOf(ctx, e.data.date, "bus-departed", null, {
          routeId: e.data.routeId ?? null,
          departedAt: e.data.departedAt ?? null,
        }),
      ];
    }
    const type = BOARD_EVENTS[e.type];
    return type && e.student ? [eventOf(ctx, e.student.date, type, e.student.id, factsOf(e))] : [];
  });
  if (statements.length === 0) return undefined;
  batch.add(...statements);
  return () => publish(ctx);
}
