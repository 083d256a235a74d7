/**
 * What the school's other systems hear of exit permissions (webhooks, docs/domain.md "Webhooks"):
 * every permission that becomes confirmed (asked and confirmed at once, confirmed by the office,
 * accepted by the family, a fixed permission's day confirmed with its pattern or made confirmed by
 * the daily job) is `exit-permission.confirmed`; every confirmed one that stops holding (withdrawn
 * by staff or by a re-decision, cancelled with its fixed permission, superseded by a later one of
 * the day) is `exit-permission.withdrawn`. Told after the batch committed, the withdrawn before the
 * confirmed that replaced them.
 */
import type { Batch, Slot } from "../../db/batch";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { eq, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { type SchoolEvent, schoolEvent } from "../../lib/school-events";

/** What a withdrawn permission's event carries. */
export const WITHDRAWN_FIELDS = {
  id: exitPermissions.id,
  studentId: exitPermissions.studentId,
  date: exitPermissions.date,
  kind: exitPermissions.kind,
  routeId: exitPermissions.routeId,
  stopId: exitPermissions.stopId,
  status: exitPermissions.status,
  supersededBy: exitPermissions.supersededBy,
};

export type WithdrawnRow = {
  id: number;
  studentId: number;
  date: string;
  kind: string;
  routeId: number | null;
  stopId: number | null;
  status: string;
  supersededBy?: number | null;
};

type ConfirmedRecord = { id: number; status: string; studentId: number; date: string };

/**
 * The permissions the confirmed ones `by` superseded (ids, or the id a batch just inserted): read
 * in the batch after them. Only a batch that confirmed them superseded anything in their name.
 */
export function readSuperseded(
  ctx: SchoolCtx,
  batch: Batch,
  by: readonly number[] | SQL<number>,
): Slot<WithdrawnRow[]> {
  return batch.read(
    ExitPermissions.select(ctx, WITHDRAWN_FIELDS).where(
      eq(exitPermissions.status, "superseded"),
      Array.isArray(by) ? inList(exitPermissions.supersededBy, by) : sql`${exitPermissions.supersededBy} = ${by}`,
    ),
  );
}

const withdrawnEvent = ({ id, studentId, date, kind, routeId, stopId, status }: WithdrawnRow): SchoolEvent => ({
  type: "exit-permission.withdrawn",
  data: { exitPermission: { id, studentId, date, kind, routeId, stopId, status } },
  student: { id: studentId, date },
});

const confirmedEvent = (record: ConfirmedRecord): SchoolEvent => ({
  type: "exit-permission.confirmed",
  data: { exitPermission: record },
  student: { id: record.studentId, date: record.date },
});

/** Tells the withdrawn (confirmed ones that no longer hold), then those now confirmed (others are skipped). */
export async function announce(
  ctx: SchoolCtx,
  change: { withdrawn?: readonly WithdrawnRow[]; confirmed?: readonly ConfirmedRecord[] },
) {
  await schoolEvent(
    ctx,
    ...(change.withdrawn ?? []).map(withdrawnEvent),
    ...(change.confirmed ?? []).filter((r) => r.status === "confirmed").map(confirmedEvent),
  );
}

/** A permission that is now confirmed (asked and confirmed at once, confirmed by the office, accepted by the family). */
export async function announceConfirmed(ctx: SchoolCtx, record: ConfirmedRecord) {
  await announce(ctx, { confirmed: [record] });
}
