/**
 * The inbox (`/api/v1/notification`): the caller's notifications in the current school, newest
 * first. A notification is named by its id (the one its sending answered); each user sees their
 * own copy of it: its read state is theirs. Nobody reads, changes or deletes another's copy (a
 * 404, as for a record that does not exist). A copy the user's preferences kept out of the inbox
 * (the category's inbox is off) or that they deleted is not there.
 *
 * - PUT `{ read }` marks the copy read or unread (docs/domain.md#notifications: what a user may
 *   change of their copy); PATCH `/{id}/read` marks it read and answers it;
 * - DELETE removes the copy from the inbox (it stays as the delivery record, so a redelivered
 *   fan-out never brings it back); DELETE of the collection removes every copy of the caller's.
 *
 * Every change is audited as a change of the notification (entity `notification`, its id), by the
 * user who made it.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import {
  NOTIFICATION_CATEGORIES,
  NotificationPushes,
  NotificationRecipients,
  Notifications,
  notificationPushes,
  notificationRecipients,
  notifications,
} from "../../db/schema/notification";
import { and, desc, eq, isNull, type SQL, sql } from "../../db/sql";
import type { Change } from "../../db/table";
import { guard, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { languageOf } from "../../lib/language";
import { m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { IdParams, RecordBase } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { inLanguage } from "./deliver";

const PATH = "/api/v1/notification";
const copy = notificationRecipients;

export const Category = z.enum(NOTIFICATION_CATEGORIES).openapi({
  example: "general",
  description:
    "What it is about: afternoon (how children go home), tasks (tasks and appointments), events, lost-and-found, " +
    "general (anything else staff send), emergency (no preference silences it), transport (the bus run: boarded, " +
    "dropped, five minutes away)",
});

export const InboxNotification = RecordBase.extend({
  category: Category,
  urgent: z.boolean().openapi({ description: "The sender marked it urgent: pushed at once, even during quiet hours" }),
  title: z.string().openapi({ description: "In the caller's language (Accept-Language, else their own)" }),
  body: z.string().openapi({ description: "The message, in the same language as the title" }),
  about: z
    .object({
      entity: z
        .string()
        .openapi({ example: "event", description: "The kind of record: event, lost-article, task, ..." }),
      id: z.number().int().openapi({ description: "The record's id" }),
    })
    .nullable()
    .openapi({ description: "The record it is about (the app's deep link), if any" }),
  senderId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The staff member who sent it; null: the school's service" }),
  read: z.boolean().openapi({ description: "Whether the caller has read it" }),
  readAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When the caller first read it (UTC); null while unread" }),
}).openapi("Notification", {
  description:
    "A notification in the caller's inbox: `createdAt` when it was sent, `updatedAt` when their copy last changed",
});
type InboxNotification = z.output<typeof InboxNotification>;

/** The caller's copies in their inbox. */
const mine = (ctx: SchoolCtx) => and(eq(copy.userId, ctx.userId ?? 0), eq(copy.inInbox, true));

/** The caller's copies, with their notification and the caller's language. */
const inbox = (ctx: SchoolCtx) =>
  NotificationRecipients.select(ctx, {
    id: notifications.id,
    createdAt: notifications.createdAt,
    updatedAt: copy.updatedAt,
    category: notifications.category,
    urgent: notifications.urgent,
    title: notifications.title,
    body: notifications.body,
    aboutEntity: notifications.aboutEntity,
    aboutId: notifications.aboutId,
    senderId: notifications.senderId,
    readAt: copy.readAt,
    language: users.language,
  })
    .join(Notifications, eq(notifications.id, copy.notificationId))
    .join(Users, eq(users.id, copy.userId))
    .where(mine(ctx));

type Row = Omit<Awaited<ReturnType<ReturnType<typeof inbox>["all"]>>[number], "language"> & { language: string | null };

function toRecord(ctx: SchoolCtx, row: Row): InboxNotification {
  const language = languageOf(ctx, row.language);
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    category: row.category,
    urgent: row.urgent,
    title: inLanguage(row.title, language),
    body: inLanguage(row.body, language),
    about: row.aboutEntity !== null && row.aboutId !== null ? { entity: row.aboutEntity, id: row.aboutId } : null,
    senderId: row.senderId,
    read: row.readAt !== null,
    readAt: row.readAt,
  };
}

const common = { tag: "Communication", access: "member", module: "notifications" } as const;

const listRoute = defineRoute({
  ...common,
  method: "get",
  path: PATH,
  operationId: "listNotifications",
  summary: "List your notifications, newest first",
  request: {
    query: PageQuery.extend({
      unread: z.enum(["true", "false"]).optional().openapi({ description: "Only unread (true) or read (false) ones" }),
      category: Category.optional().openapi({ description: "Only this category" }),
    }).strict(),
  },
  responses: { 200: json(pageOf(InboxNotification, "NotificationPage"), "Your notifications, newest first") },
});

/** A page of the caller's inbox and its count: one round trip (notification_recipient_inbox_idx). */
export async function listNotifications(ctx: SchoolCtx, { query }: InputOf<typeof listRoute>) {
  const filters = [
    query.unread === undefined
      ? undefined
      : query.unread === "true"
        ? isNull(copy.readAt)
        : sql`${copy.readAt} IS NOT NULL`,
    query.category === undefined ? undefined : eq(notifications.category, query.category),
  ];
  const all = inbox(ctx).where(...filters);
  const batch = new Batch(ctx);
  const rows = batch.read(
    all
      .orderBy(desc(copy.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(all.count());
  const results = await batch.commit();
  return new Listing(
    results.get(rows).map((r) => toRecord(ctx, r)),
    results.get(total)[0]?.n ?? 0,
    query,
  );
}

const getRoute = defineRoute({
  ...common,
  method: "get",
  path: `${PATH}/{id}`,
  operationId: "getNotification",
  summary: "Get one of your notifications",
  request: { params: IdParams },
  responses: { 200: json(InboxNotification, "The notification") },
});

async function findMine(ctx: SchoolCtx, id: number): Promise<InboxNotification> {
  const row = await inbox(ctx).where(eq(copy.notificationId, id)).first();
  if (!row) throw notFound(m`Notification ${id} not found`);
  return toRecord(ctx, row);
}

/**
 * The caller's notification; a super-admin (platform support) also reads any of the school's,
 * as sent (unread, unless they have a copy of their own). Nobody else reads another's.
 */
export async function getNotification(ctx: SchoolCtx, { params }: InputOf<typeof getRoute>) {
  if (!ctx.isSuperAdmin) return findMine(ctx, params.id);
  const batch = new Batch(ctx);
  const own = batch.read(inbox(ctx).where(eq(copy.notificationId, params.id)).limit(1));
  const sent = batch.read(Notifications.select(ctx).where(eq(notifications.id, params.id)).limit(1));
  const results = await batch.commit();
  const row = results.get(own)[0];
  if (row) return toRecord(ctx, row);
  const n = results.get(sent)[0];
  if (!n) throw notFound(m`Notification ${params.id} not found`);
  return toRecord(ctx, { ...n, readAt: null, language: null });
}

/**
 * A change of the caller's copy of notification `id` (or of every copy of theirs), audited as a
 * change of each notification: one audit row per copy changed, read from it before the change.
 */
function changeCopy(
  ctx: SchoolCtx,
  id: number | "all",
  set: { readAt?: SQL | null; inInbox?: false; deletedAt?: string },
  action: string,
) {
  const at = ctx.deps.clock.now().toISOString();
  const which = (t: typeof copy) =>
    and(eq(t.userId, ctx.userId ?? 0), eq(t.inInbox, true), id === "all" ? undefined : eq(t.notificationId, id));
  const where = NotificationRecipients.where(ctx, which(copy));
  // The copy of the notification the audit statement reads (correlated on its row).
  const c = NotificationRecipients.alias("c");
  const ofCopy = (value: SQL) =>
    sql`(SELECT ${value} FROM ${c.from} WHERE ${c.where(ctx, sql`${which(c.table)} AND ${c.table.notificationId} = ${notifications.id}`)})`;
  const changes: Record<string, Change> = {};
  if (set.readAt !== undefined) {
    const next = set.readAt === null ? null : ofCopy(sql`ifnull(${c.table.readAt}, ${at})`);
    changes.readAt = { old: ofCopy(sql`${c.table.readAt}`), new: next };
  }
  if (set.inInbox === false) changes.deleted = { old: false, new: true };
  // A deleted copy's pushes still waiting (quiet hours) are not sent: dropped before the copy changes.
  const dropped =
    set.inInbox === false
      ? [
          ctx.deps.db
            .update(notificationPushes)
            .set({ status: "dropped", error: "deleted by its recipient", updatedAt: at })
            .where(
              NotificationPushes.where(
                ctx,
                eq(notificationPushes.status, "pending"),
                inList(notificationPushes.recipientId, NotificationRecipients.pick(ctx, copy.id, which(copy))),
              ),
            ),
        ]
      : [];
  return Notifications.action(
    ctx,
    inList(notifications.id, NotificationRecipients.pick(ctx, copy.notificationId, which(copy))),
    { action, changes },
    ...dropped,
    ctx.deps.db
      .update(copy)
      .set({ ...set, updatedAt: at })
      .where(where),
  );
}

const Read = z.strictObject({ read: z.boolean().openapi({ description: "true: read; false: unread again" }) });

const updateRoute = defineRoute({
  ...common,
  method: "put",
  path: `${PATH}/{id}`,
  operationId: "updateNotification",
  summary: "Mark one of your notifications read or unread",
  audit: "notification",
  request: { params: IdParams, body: jsonBody(Read, "NotificationUpdate") },
  responses: { 204: noContent },
});

const readAtNow = (ctx: SchoolCtx) => sql`ifnull(${copy.readAt}, ${ctx.deps.clock.now().toISOString()})`;

export async function updateNotification(ctx: SchoolCtx, { params, body }: InputOf<typeof updateRoute>) {
  const set = { readAt: body.read ? readAtNow(ctx) : null };
  // A PUT answers 204 whether or not the state changed: marking a read notification read is a no-op.
  await commitGuarded(ctx, params.id, changeCopy(ctx, params.id, set, "update"));
}

const readRoute = defineRoute({
  ...common,
  method: "patch",
  path: `${PATH}/{id}/read`,
  operationId: "markNotificationRead",
  summary: "Mark one of your notifications read",
  audit: "notification",
  request: { params: IdParams },
  responses: { 200: json(InboxNotification, "The notification, read") },
});

export async function markNotificationRead(ctx: SchoolCtx, { params }: InputOf<typeof readRoute>) {
  await commitGuarded(ctx, params.id, changeCopy(ctx, params.id, { readAt: readAtNow(ctx) }, "read"));
  return findMine(ctx, params.id);
}

const deleteRoute = defineRoute({
  ...common,
  method: "delete",
  path: `${PATH}/{id}`,
  operationId: "deleteNotification",
  summary: "Delete one of your notifications (from your inbox)",
  audit: "notification",
  request: { params: IdParams },
  responses: { 204: noContent },
});

const removal = (ctx: SchoolCtx) => ({ inInbox: false as const, deletedAt: ctx.deps.clock.now().toISOString() });

export async function deleteNotification(ctx: SchoolCtx, { params }: InputOf<typeof deleteRoute>) {
  await commitGuarded(ctx, params.id, changeCopy(ctx, params.id, removal(ctx), "delete"));
}

const deleteAllRoute = defineRoute({
  ...common,
  method: "delete",
  path: PATH,
  operationId: "deleteAllNotifications",
  summary: "Delete all your notifications (from your inbox)",
  audit: "notification",
  responses: { 204: noContent },
});

export async function deleteAllNotifications(ctx: SchoolCtx) {
  await new Batch(ctx).add(...changeCopy(ctx, "all", removal(ctx), "delete")).commit();
}

/** Commits a change of one copy; a copy that is not the caller's (or not there) is a 404. */
async function commitGuarded(ctx: SchoolCtx, id: number, statements: ReturnType<typeof changeCopy>) {
  const { GuardFailed } = await import("../../db/write");
  try {
    await new Batch(ctx).add(...statements, guard(ctx.deps.db)).commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`Notification ${id} not found`);
    throw err;
  }
}

export const listNotificationsOperation = operation(listRoute, listNotifications);
export const getNotificationOperation = operation(getRoute, getNotification);
export const updateNotificationOperation = operation(updateRoute, updateNotification);
export const markNotificationReadOperation = operation(readRoute, markNotificationRead);
export const deleteNotificationOperation = operation(deleteRoute, deleteNotification);
export const deleteAllNotificationsOperation = operation(deleteAllRoute, deleteAllNotifications);
