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
import { PLATFORM, platformDb, shardOf } from "../../db/shards";
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
  // The device's token: joined on the platform's database (a school there); a school on a shard
  // reads its pushes there and their devices' tokens from the platform's (docs/scaling.md
  // "Shards", group D). A push whose device is gone since (no foreign key: migration 0062) has none.
  const onShard = (await shardOf(deps, message.schoolId)) !== PLATFORM;
  const fields = { id: p.id, deviceTokenId: p.deviceTokenId, language: users.language };
  const theirs = onShard
    ? NotificationPushes.select(ctx, { ...fields, token: sql<string | null>`NULL` })
    : NotificationPushes.select(ctx, { ...fields, token: sql<string | null>`${deviceTokens.token}` }).join(
        DeviceTokens,
        eq(deviceTokens.id, p.deviceTokenId),
        "left",
      );
  const claimed = batch.read(
    theirs
      .join(NotificationRecipients, eq(notificationRecipients.id, p.recipientId))
      .join(Users, eq(users.id, notificationRecipients.userId))
      .where(eq(p.notificationId, id), eq(p.status, "sending"), eq(p.claim, messageId)),
  );
  const found = batch.read(Notifications.select(ctx).where(eq(notifications.id, id)));
  const results = await batch.commit();
  const notification = results.get(found)[0];
  const all = await withTokens(deps, results.get(claimed), onShard);
  if (!notification || all.length === 0) return;
  // Devices gone since their pushes were written: those pushes are dropped, never sent.
  const orphans = all.filter((r) => r.token === null);
  const pushes = all.flatMap((r) => (r.token === null ? [] : [{ ...r, token: r.token }]));

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
  const mine = (rows: readonly { id: number }[]) =>
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
  if (orphans.length)
    done.add(
      db
        .update(p)
        .set({ status: "dropped", claim: null, error: "device unregistered", updatedAt: at })
        .where(mine(orphans)),
    );
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
    // The token's removal is audited (the provider's word); this push is dropped, and the device's
    // other pending pushes when they come due (the device is a platform row: no cascade reaches
    // a shard). On a shard, the platform's batch of its own.
    done.add(
      db
        .update(p)
        .set({ status: "dropped", claim: null, error: reasonIn(gone), updatedAt: at })
        .where(mine(gone)),
    );
    const removal = DeviceTokens.delete(ctx, tokens, "unregistered");
    if (onShard) await new Batch(ctx, DeviceTokens).add(...removal).commit();
    else done.add(...removal);
    log.info("push tokens removed: the provider says they are gone", {
      queue: PUSH_QUEUE,
      messageId,
      notificationId: id,
      reasons: gone.map((r) => reasonOf(outcomes[pushes.indexOf(r)])),
    });
  }
  if (done.size > 0) await done.commit();
  if (all.length === PUSH_BATCH)
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

/** The claimed pushes with their devices' tokens: read from the platform's database for a school on a shard. */
async function withTokens<R extends { deviceTokenId: number; token: string | null }>(
  deps: Deps,
  rows: R[],
  onShard: boolean,
): Promise<R[]> {
  if (!onShard || rows.length === 0) return rows;
  const found = await platformDb(deps)
    .select({ id: deviceTokens.id, token: deviceTokens.token })
    .from(deviceTokens)
    .where(
      inList(
        deviceTokens.id,
        rows.map((r) => r.deviceTokenId),
      ),
    );
  const token = new Map(found.map((d) => [d.id, d.token]));
  return rows.map((r) => ({ ...r, token: token.get(r.deviceTokenId) ?? null }));
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
