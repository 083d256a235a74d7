/** What the school's other systems hear of exit permissions (webhooks, docs/domain.md "Webhooks"). */
import type { SchoolCtx } from "../../lib/context";
import { emitWebhookEvent } from "../webhook/api";

/** A permission that is now confirmed (asked and confirmed at once, confirmed by the office, accepted by the family). */
export async function announceConfirmed(ctx: SchoolCtx, record: { status: string }) {
  if (record.status === "confirmed")
    await emitWebhookEvent(ctx, "exit-permission.confirmed", { exitPermission: record });
}
