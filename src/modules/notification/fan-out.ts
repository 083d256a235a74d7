/**
 * The fan-out: a notification's copies, one per recipient, written a chunk at a time by the push
 * queue's consumer, and the pushes to their devices queued.
 *
 * One message handles the recipients after user `after` (ascending ids, `CHUNK` of them): in one
 * batch, its receipt, the copies (`INSERT ... SELECT` from the audience, `ON CONFLICT DO NOTHING`
 * on the unique (notification, user)), the pushes to the chunk's devices (`ON CONFLICT DO
 * NOTHING` on the unique (copy, device)), each due now or when the recipient's quiet hours end,
 * and the notification marked dispatched (and fanned out, after its last chunk). Then it queues
 * the next chunk and the pushes. A redelivered message writes nothing twice and queues the same
 * next messages, which are as harmless; a lost one is queued again by the sweep.
 *
 * A school with the `notifications` module off gets nothing delivered but emergencies (the
 * notification is recorded, and marked fanned out with no copies).
 *
 * Preferences (no row: everything on): a category's inbox off writes the copy out of the inbox
 * (it stays the delivery record), its push off writes no push; an emergency ignores both, and
 * quiet hours too, as an urgent notification ignores quiet hours.
 */
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import { deviceTokens } from "../../db/schema/device-token";
import { queueReceipts } from "../../db/schema/jobs";
import {
  type NotificationCategory,
  NotificationPreferences,
  NotificationPushes,
  NotificationRecipients,
  Notifications,
  notificationPreferences,
  notificationPushes,
  notificationRecipients,
  notifications,
} from "../../db/schema/notification";
import { databaseOf, PLATFORM, platformDb, shardOf } from "../../db/shards";
import { and, asc, eq, gt, isNotNull, isNull, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { Deps } from "../../deps";
import { APP_MODULES } from "../../lib/app-modules";
import { jobCtx } from "../../lib/context";
import { log } from "../../lib/log";
import { nextInstant, timeIn } from "../../lib/zoned-time";
import { disabledModuleIds } from "../application-module/api";
import { PUSH_QUEUE, type PushMessage } from "./queue";

/** Recipients per message: a chunk's statements stay far below D1's limits and a Worker's time. */
export const CHUNK = 500;

type Flag = keyof typeof notificationPreferences.$inferSelect;

/** A category's preference columns (their keys); none for an emergency, which no preference silences. */
export function channelsOf(category: NotificationCategory): { push: Flag; inbox: Flag } | null {
  switch (category) {
    case "afternoon":
      return { push: "afternoonPush", inbox: "afternoonInbox" };
    case "tasks":
      return { push: "tasksPush", inbox: "tasksInbox" };
    case "events":
      return { push: "eventsPush", inbox: "eventsInbox" };
    case "lost-and-found":
      return { push: "lostAndFoundPush", inbox: "lostAndFoundInbox" };
    case "general":
      return { push: "generalPush", inbox: "generalInbox" };
    case "transport":
      return { push: "transportPush", inbox: "transportInbox" };
    case "emergency":
      return null;
  }
}

export async function fanOut(deps: Deps, message: Extract<PushMessage, { kind: "fan-out" }>, messageId: string) {
  const { db } = deps;
  const ctx = jobCtx(deps, "notification-fan-out", message.schoolId);
  const now = deps.clock.now();
  const at = now.toISOString();

  // What the batch is built from: the notification, the school's zone, the quiet hours' ends.
  const read = new Batch(ctx);
  const found = read.read(Notifications.select(ctx).where(eq(notifications.key, message.key)).limit(1));
  const zone = read.read(
    Schools.select(ctx, { timeZone: schools.timeZone, off: disabledModuleIds(db, message.schoolId) }).where(
      eq(schools.id, message.schoolId),
    ),
  );
  const ends = read.read(
    NotificationPreferences.select(ctx, { end: notificationPreferences.quietEnd })
      .where(isNotNull(notificationPreferences.quietEnd))
      .groupBy(notificationPreferences.quietEnd),
  );
  const first = await read.commit();
  const notification = first.get(found)[0];
  const timeZone = first.get(zone)[0]?.timeZone;
  if (!notification || !timeZone) {
    // Its batch never committed (the caller's change failed), or the school is gone: nothing to do.
    log.info("fan-out message ignored: no such notification", { queue: PUSH_QUEUE, messageId, key: message.key });
    return;
  }
  const id = notification.id;
  const { audience, category, urgent } = notification;
  // The school switched notifications off: nothing is delivered but an emergency.
  const off = (first.get(zone)[0]?.off ?? "").split(",").map(Number).includes(APP_MODULES.notifications.id);
  if (off && category !== "emergency") {
    // Through a batch: the school's database (docs/scaling.md "Shards"), not the platform's.
    await new Batch(ctx)
      .add(
        db
          .update(notifications)
          .set({ dispatchedAt: sql`ifnull(${notifications.dispatchedAt}, ${at})`, fannedOutAt: at, updatedAt: at })
          .where(Notifications.where(ctx, eq(notifications.id, id))),
      )
      .commit();
    log.info("notification not delivered: the school has notifications off", { queue: PUSH_QUEUE, messageId, id });
    return;
  }
  const { recipientsOf } = await import("./audience");
  const channels = channelsOf(category);
  const pref = NotificationPreferences.alias("np");
  const pt = pref.table;
  const prefJoin = pref.joinOn(ctx, sql`${pt.userId} = r.user_id`, "LEFT JOIN");
  const inbox = channels ? sql`ifnull(${pt[channels.inbox]}, 1)` : sql`1`;

  // A school on a shard: its recipients' devices are the platform's (docs/scaling.md "Shards", group
  // D): the chunk's users read in the school's database, then their devices in the platform's.
  const devices = (await shardOf(deps, message.schoolId)) === PLATFORM ? undefined : await chunkDevices();
  async function chunkDevices() {
    const copies = sql`SELECT ${notificationRecipients.userId} AS user_id FROM ${notificationRecipients} WHERE ${NotificationRecipients.where(ctx, eq(notificationRecipients.notificationId, id), gt(notificationRecipients.userId, message.after))}`;
    const users = await (await databaseOf(ctx)).all<{ user_id: number }>(
      sql`SELECT user_id FROM (SELECT r.user_id FROM (${recipientsOf(ctx, audience)}) r WHERE r.user_id > ${message.after} UNION ${copies}) ORDER BY user_id LIMIT ${CHUNK}`,
    );
    if (users.length === 0) return [];
    return platformDb(deps)
      .select({ id: deviceTokens.id, userId: deviceTokens.userId })
      .from(deviceTokens)
      .where(
        inList(
          deviceTokens.userId,
          users.map((u) => u.user_id),
        ),
      );
  }

  const batch = new Batch(ctx);
  batch.add(
    db.insert(queueReceipts).values({ key: messageId, queue: PUSH_QUEUE, createdAt: at }).onConflictDoNothing(),
  );
  batch.add(
    db
      .update(notifications)
      .set({ dispatchedAt: sql`ifnull(${notifications.dispatchedAt}, ${at})`, updatedAt: at })
      .where(Notifications.where(ctx, eq(notifications.id, id))),
  );
  batch.add(
    NotificationRecipients.insertFrom(
      ctx,
      (row) => sql`SELECT ${row({ notificationId: id, userId: sql`r.user_id`, inInbox: sql`${inbox}` })}
          FROM (${recipientsOf(ctx, audience)}) r ${prefJoin}
          WHERE r.user_id > ${message.after} ORDER BY r.user_id LIMIT ${CHUNK}`,
      at,
    ).onConflictDoNothing(),
  );
  // The chunk: this notification's copies after `after`, as many as a chunk (the ones just written,
  // or written by an earlier delivery of this message).
  const chunk = NotificationRecipients.select(ctx, { userId: notificationRecipients.userId })
    .where(eq(notificationRecipients.notificationId, id), gt(notificationRecipients.userId, message.after))
    .orderBy(asc(notificationRecipients.userId))
    .limit(CHUNK);
  const bounds = batch.read(
    NotificationRecipients.select(ctx, {
      n: sql<number>`count(*)`,
      last: sql<number | null>`max(${notificationRecipients.userId})`,
    }).where(inChunk(id, chunk)),
  );
  batch.add(pushRows(ctx, { id, category, urgent, at, now, timeZone, ends: first.get(ends), chunk, devices }));
  batch.add(
    db
      .update(notifications)
      .set({ fannedOutAt: at })
      .where(
        and(
          Notifications.where(ctx, eq(notifications.id, id)),
          isNull(notifications.fannedOutAt),
          sql`(SELECT count(*) FROM (${chunk})) < ${CHUNK}`,
        ),
      ),
  );
  const due = batch.read(
    NotificationPushes.select(ctx, { n: sql<number>`count(*)` }).where(
      eq(notificationPushes.notificationId, id),
      eq(notificationPushes.status, "pending"),
      sql`${notificationPushes.dueAt} <= ${at}`,
    ),
  );
  const results = await batch.commit();
  const [{ n = 0, last = null } = {}] = results.get(bounds);
  const next: PushMessage[] = [];
  if (n === CHUNK && last !== null)
    next.push({ kind: "fan-out", key: message.key, schoolId: message.schoolId, after: last });
  if ((results.get(due)[0]?.n ?? 0) > 0) next.push({ kind: "push", notificationId: id, schoolId: message.schoolId });
  if (next.length > 0) await deps.queues.push.sendBatch(next.map((body) => ({ body })));
}

/** The copies of notification `id` whose users are in `chunk`. */
function inChunk(id: number, chunk: SQL | { getSQL(): SQL }): SQL {
  return sql`${notificationRecipients.notificationId} = ${id} AND ${notificationRecipients.userId} IN (SELECT "userId" FROM (${chunk}))`;
}

/**
 * The pushes of the chunk's copies (in the inbox or not, never deleted) to each of their users'
 * devices, when the category's push is on: due now, or (neither urgent nor an emergency) when the
 * recipient's quiet hours end, if they are in them. The end instants are computed here for each
 * end time the school's preferences name (`ends`), exactly, in the school's zone.
 */
function pushRows(
  ctx: ReturnType<typeof jobCtx>,
  n: {
    id: number;
    category: NotificationCategory;
    urgent: boolean;
    at: string;
    now: Date;
    timeZone: string;
    ends: { end: string | null }[];
    chunk: SQL | { getSQL(): SQL };
    /** The chunk's devices, read from the platform's database (a school on a shard); else joined. */
    devices?: { id: number; userId: number }[] | undefined;
  },
) {
  const channels = channelsOf(n.category);
  const pref = NotificationPreferences.alias("np");
  const pt = pref.table;
  const copy = NotificationRecipients.alias("nr");
  const ct = copy.table;
  const allowed = channels ? sql`ifnull(${pt[channels.push]}, 1) = 1` : sql`1 = 1`;
  let dueAt: SQL = sql`${n.at}`;
  if (channels && !n.urgent) {
    const local = timeIn(n.timeZone, n.now);
    const endsAt = Object.fromEntries(
      n.ends.flatMap(({ end }) => (end ? [[end, nextInstant(n.timeZone, n.now, end).toISOString()]] : [])),
    );
    const start = pt.quietStart;
    const end = pt.quietEnd;
    const quiet = sql`${start} IS NOT NULL AND ${end} IS NOT NULL AND CASE WHEN ${start} < ${end} THEN ${local} >= ${start} AND ${local} < ${end} ELSE ${local} >= ${start} OR ${local} < ${end} END`;
    dueAt = sql`CASE WHEN ${quiet} THEN ifnull(json_extract(${JSON.stringify(endsAt)}, '$."' || ${end} || '"'), ${n.at}) ELSE ${n.at} END`;
  }
  // The devices: the platform's table, in the same database; or the list read from it (one JSON value).
  const device = n.devices
    ? {
        from: sql`(SELECT value ->> '$.id' AS id, value ->> '$.userId' AS user_id FROM json_each(${JSON.stringify(n.devices)})) d`,
        id: sql`d.id`,
        userId: sql`d.user_id`,
      }
    : { from: sql`${deviceTokens}`, id: sql`${deviceTokens.id}`, userId: sql`${deviceTokens.userId}` };
  return NotificationPushes.insertFrom(
    ctx,
    (row) =>
      sql`SELECT ${row({ notificationId: sql`${n.id}`, recipientId: sql`${ct.id}`, deviceTokenId: device.id, status: sql`'pending'`, dueAt: sql`${dueAt}`, attempts: sql`0` })}
        FROM ${copy.from}
        INNER JOIN ${device.from} ON ${device.userId} = ${ct.userId}
        ${pref.joinOn(ctx, sql`${pt.userId} = ${ct.userId}`, "LEFT JOIN")}
        WHERE ${copy.where(ctx, sql`${ct.notificationId} = ${n.id} AND ${ct.deletedAt} IS NULL`)}
          AND ${ct.userId} IN (SELECT "userId" FROM (${n.chunk})) AND ${allowed}`,
    n.at,
  ).onConflictDoNothing();
}
