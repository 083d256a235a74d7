/**
 * Push delivery: one message sends up to `PUSH_BATCH` due pushes of one notification.
 *
 * In one batch, its receipt and the claim (pending and due -> sending, with the message id as the
 * claim, attempts + 1; rows this message claimed before and did not finish are taken up again),
 * and the claimed pushes read with their device token, copy and language. Then the sends (a few
 * at a time), then one batch of outcomes:
 * - sent: `sent` (never sent again: a redelivered message finds nothing pending);
 * - gone (the provider says the token is unregistered or invalid): the token is removed, audited
 *   as `unregistered` (its pending pushes go with it);
 * - retry (429, 5xx, the network): back to `pending`, and the message is thrown back to the queue,
 *   which retries it with backoff (no sooner than the provider's Retry-After); after the last
 *   retry it lands in the dead-letter queue, whose handler marks what is still undelivered
 *   `failed` (the inbox copies exist either way: nothing is lost);
 * - failed (refused for another reason): `failed`, with the provider's reason.
 * More due pushes than a batch: another message for the rest.
 */
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { DeviceTokens, deviceTokens } from "../../db/schema/device-token";
import { queueReceipts } from "../../db/schema/jobs";
import {
  type Localized,
  NotificationPushes,
  NotificationRecipients,
  Notifications,
  notificationPushes,
  notificationRecipients,
  notifications,
} from "../../db/schema/notification";
import { eq, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { Deps } from "../../deps";
import { jobCtx } from "../../lib/context";
import { log } from "../../lib/log";
import { RetryLater } from "../../lib/module";
import type { PushOutcome } from "../../lib/push";
import { PUSH_QUEUE, type PushMessage } from "./queue";

/** Pushes per message: a Worker invocation's subrequests stay well within its limits. */
export const PUSH_BATCH = 100;
/** Sends in flight at once (a Worker keeps six connections open at a time). */
const CONCURRENCY = 6;

/** A text in the recipient's language (es or en; anything else reads English). */
export const inLanguage = (text: Localized, language: string) => (language.startsWith("es") ? text.es : text.en);

export async function deliverPushes(deps: Deps, message: Extract<PushMessage, { kind: "push" }>, messageId: string) {
  const { db } = deps;
  const ctx = jobCtx(deps, "notification-push", message.schoolId);
  const at = deps.clock.now().toISOString();
  const id = message.notificationId;
  const p = notificationPushes;

  const claimable = NotificationPushes.select(ctx, { id: p.id })
    .where(
      eq(p.notificationId, id),
      sql`((${p.status} = 'pending' AND ${p.dueAt} <= ${at}) OR (${p.status} = 'sending' AND ${p.claim} = ${messageId}))`,
    )
    .orderBy(sql`${p.id}`)
    .limit(PUSH_BATCH);
  const batch = new Batch(ctx);
  batch.add(
    db.insert(queueReceipts).values({ key: messageId, queue: PUSH_QUEUE, createdAt: at }).onConflictDoNothing(),
  );
  batch.add(
    db
      .update(p)
      .set({ status: "sending", claim: messageId, attempts: sql`${p.attempts} + 1`, updatedAt: at })
      .where(NotificationPushes.where(ctx, inList(p.id, claimable))),
  );
  const claimed = batch.read(
    NotificationPushes.select(ctx, {
      id: p.id,
      deviceTokenId: p.deviceTokenId,
      token: deviceTokens.token,
      language: users.language,
    })
      .join(DeviceTokens, eq(deviceTokens.id, p.deviceTokenId))
      .join(NotificationRecipients, eq(notificationRecipients.id, p.recipientId))
      .join(Users, eq(users.id, notificationRecipients.userId))
      .where(eq(p.notificationId, id), eq(p.status, "sending"), eq(p.claim, messageId)),
  );
  const found = batch.read(Notifications.select(ctx).where(eq(notifications.id, id)));
  const results = await batch.commit();
  const pushes = results.get(claimed);
  const notification = results.get(found)[0];
  if (!notification || pushes.length === 0) return;

  // The app opens `/api/v1/notification/{notificationId}` (the recipient's copy of it).
  const data: Record<string, string> = {
    notificationId: String(id),
    category: notification.category,
    ...(notification.aboutEntity ? { entity: notification.aboutEntity } : {}),
    ...(notification.aboutId !== null ? { entityId: String(notification.aboutId) } : {}),
  };
  const outcomes = await inBatches(pushes, CONCURRENCY, (push) =>
    deps.push.send({
      token: push.token,
      title: inLanguage(notification.title, push.language),
      body: inLanguage(notification.body, push.language),
      data,
      urgent: notification.urgent || notification.category === "emergency",
    }),
  );

  const ids = (status: PushOutcome["status"]) => pushes.filter((_, i) => outcomes[i]?.status === status);
  const reasons = (rows: typeof pushes) =>
    JSON.stringify(Object.fromEntries(rows.map((r) => [r.id, reasonOf(outcomes[pushes.indexOf(r)])])));
  const sent = ids("sent");
  const gone = ids("gone");
  const retry = ids("retry");
  const failed = ids("failed");
  const mine = (rows: typeof pushes) =>
    NotificationPushes.where(
      ctx,
      inList(
        p.id,
        rows.map((r) => r.id),
      ),
      eq(p.claim, messageId),
    );
  const reasonIn = (rows: typeof pushes) => sql`json_extract(${reasons(rows)}, '$."' || ${p.id} || '"')`;
  const done = new Batch(ctx);
  if (sent.length)
    done.add(
      db.update(p).set({ status: "sent", sentAt: at, claim: null, error: null, updatedAt: at }).where(mine(sent)),
    );
  if (failed.length)
    done.add(
      db
        .update(p)
        .set({ status: "failed", claim: null, error: reasonIn(failed), updatedAt: at })
        .where(mine(failed)),
    );
  if (retry.length)
    done.add(
      db
        .update(p)
        .set({ status: "pending", claim: null, error: reasonIn(retry), updatedAt: at })
        .where(mine(retry)),
    );
  if (gone.length) {
    const tokens = inList(deviceTokens.id, [...new Set(gone.map((r) => r.deviceTokenId))]);
    // The token's removal is audited (the provider's word); its pushes go with it (the cascade).
    done.add(...DeviceTokens.delete(ctx, tokens, "unregistered"));
    log.info("push tokens removed: the provider says they are gone", {
      queue: PUSH_QUEUE,
      messageId,
      notificationId: id,
      reasons: gone.map((r) => reasonOf(outcomes[pushes.indexOf(r)])),
    });
  }
  if (done.size > 0) await done.commit();
  if (pushes.length === PUSH_BATCH)
    await deps.queues.push.send({ kind: "push", notificationId: id, schoolId: message.schoolId });
  if (retry.length > 0) {
    const retries = retry.flatMap((r) => {
      const o = outcomes[pushes.indexOf(r)];
      return o?.status === "retry" ? [o] : [];
    });
    const wait = Math.max(0, ...retries.map((o) => o.retryAfterSeconds ?? 0));
    throw new RetryLater(`${retry.length} of ${pushes.length} pushes to retry: ${retries[0]?.reason ?? ""}`, wait);
  }
}

const reasonOf = (o: PushOutcome | undefined) => (o && "reason" in o ? o.reason : "");

/** `run` over `items`, `size` at a time, in order; a throw is a retry of that item, not of the others. */
async function inBatches<T>(
  items: readonly T[],
  size: number,
  run: (item: T) => Promise<PushOutcome>,
): Promise<PushOutcome[]> {
  const out: PushOutcome[] = [];
  for (let i = 0; i < items.length; i += size) {
    const settled = await Promise.allSettled(items.slice(i, i + size).map(run));
    for (const s of settled) {
      out.push(
        s.status === "fulfilled"
          ? s.value
          : { status: "retry", reason: s.reason instanceof Error ? s.reason.message : String(s.reason) },
      );
    }
  }
  return out;
}

/** The dead-letter handler: what a push message could not deliver after its last retry is `failed` (its copies stay). */
export async function recordUndelivered(deps: Deps, message: PushMessage) {
  if (message.kind !== "push") return;
  const ctx = jobCtx(deps, "notification-push", message.schoolId);
  const at = deps.clock.now().toISOString();
  const p = notificationPushes;
  // Through a batch: the school's database (docs/scaling.md "Shards"), not the platform's.
  const failed = deps.db
    .update(p)
    .set({ status: "failed", claim: null, updatedAt: at, error: sql`ifnull(${p.error}, '') || ' (retries exhausted)'` })
    .where(
      NotificationPushes.where(
        ctx,
        eq(p.notificationId, message.notificationId),
        sql`${p.status} IN ('pending', 'sending')`,
        sql`${p.attempts} > 0`,
      ),
    );
  await new Batch(ctx).add(failed).commit();
}
