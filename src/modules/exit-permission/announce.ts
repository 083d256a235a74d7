/** What the school's other systems hear of exit permissions (webhooks, docs/domain.md "Webhooks"). */
import type { SchoolCtx } from "../../lib/context";
import { schoolEvent } from "../../lib/school-events";

/** A permission that is now confirmed (asked and confirmed at once, confirmed by the office, accepted by the family). */
export async function announceConfirmed(
  ctx: SchoolCtx,
  record: { id: number; status: string; studentId: number; date: string },
) {
  if (record.status === "confirmed")
    await schoolEvent(ctx, {
      type: "exit-permission.confirmed",
      data: { exitPermission: record },
      student: { id: record.studentId, date: record.date },
    });
}
