/**
 * The events of a school's dismissal day: every verb that changes a fact the board reads writes its
 * event in its own batch, numbered `seq` (1, 2, 3 ... per school and day: the next number is read
 * by the INSERT itself, and D1 runs one batch at a time, so numbers never repeat; the unique index
 * is the backstop). The live board replays them after a `seq` and pushes new ones.
 */
import { DismissalEvents, dismissalEvents } from "../../db/schema/dismissal";
import { asc, eq, gt, type SQL, sql } from "../../db/sql";
import type { Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";

export const EVENT_TYPES = [
  "arrival",
  "called",
  "released",
  "boarded",
  "dropped",
  "bus-departed",
  "permission-confirmed",
  "permission-withdrawn",
  "reunification-started",
  "reunification-ended",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface DismissalEvent {
  seq: number;
  type: string;
  studentId: number | null;
  at: string;
  [fact: string]: unknown;
}

/** The INSERT of one event of `date`, numbered after the day's last. */
export function eventOf(
  ctx: SchoolCtx,
  date: string | SQL,
  type: EventType,
  studentId: number | null | SQL,
  data: Record<string, unknown> = {},
): Statement {
  const at = ctx.deps.clock.now().toISOString();
  const next = DismissalEvents.select(ctx, { next: sql<number>`coalesce(max(${dismissalEvents.seq}), 0) + 1` }).where(
    eq(dismissalEvents.date, date),
  );
  return DismissalEvents.insertFrom(
    ctx,
    (row) =>
      sql`SELECT ${row({
        date: typeof date === "string" ? date : sql`${date}`,
        seq: sql`${next}`,
        type,
        studentId,
        data: sql`${JSON.stringify(data)}`,
      })}`,
    at,
  );
}

/** The events of `date` after `after`, in order (at most `limit`). */
export function eventsAfter(ctx: SchoolCtx, date: string, after: number, limit = 1000) {
  return DismissalEvents.select(ctx, {
    seq: dismissalEvents.seq,
    type: dismissalEvents.type,
    studentId: dismissalEvents.studentId,
    data: dismissalEvents.data,
    at: dismissalEvents.createdAt,
  })
    .where(eq(dismissalEvents.date, date), gt(dismissalEvents.seq, after))
    .orderBy(asc(dismissalEvents.seq))
    .limit(limit);
}

/** An event row as the stream sends it: `{seq, type, studentId, at, ...facts}`. */
export function eventJson(row: {
  seq: number;
  type: string;
  studentId: number | null;
  data: Record<string, unknown> | null;
  at: string;
}): DismissalEvent {
  return { ...(row.data ?? {}), seq: row.seq, type: row.type, studentId: row.studentId, at: row.at };
}

/**
 * Whether a watcher sees event `e`: the whole school (`children` null) sees every event; a guardian
 * their children's and the school's own (a reunification), not another route's bus leaving.
 */
export function visibleTo(children: { has(id: number): boolean } | null, e: DismissalEvent): boolean {
  if (children === null) return true;
  if (e.studentId === null) return e.type !== "bus-departed";
  return children.has(e.studentId);
}
