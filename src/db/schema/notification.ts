/**
 * Notifications: what was sent (one row per send), each recipient's copy (their inbox row), the
 * pushes to their devices, and each user's preferences (docs/domain.md#notifications).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Level } from "../../lib/levels";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { deviceTokens } from "./device-token";

/** The categories a notification is filed under; `emergency` is one no preference silences. */
export const NOTIFICATION_CATEGORIES = [
  "afternoon",
  "tasks",
  "events",
  "lost-and-found",
  "general",
  "emergency",
  "transport",
] as const;
export type NotificationCategory = (typeof NOTIFICATION_CATEGORIES)[number];

/** A text in each language the service speaks (en, es). */
export type Localized = { en: string; es: string };

/**
 * Who a notification is for, resolved to users when it fans out (`src/modules/notification/audience.ts`):
 * one or more of these, together (each user once however many name them).
 * - `users`: these members; `roles`: holders of these roles in the school; `school`: every member;
 * - `groups`: the guardians of these groups' students; `levels`: of students of these levels;
 *   `guardiansOf`: of these students (a guardian of three of them gets one notification).
 */
export type Audience = {
  users?: number[];
  roles?: number[];
  groups?: number[];
  levels?: Level[];
  guardiansOf?: number[];
  school?: true;
  /** Users left out however they are reached (the guardian who booked is not told of it). */
  except?: number[];
};

/**
 * One send: its texts (both languages; a staff text is the same in both), its category, the
 * record it is about, who it is for (the audience, resolved when it fans out) and how far its
 * fan-out went. `key` names it in queue messages before the caller's batch gives it an id.
 */
export const notifications = sqliteTable(
  "notification",
  {
    ...record,
    schoolId: schoolId(),
    key: text("key").notNull(),
    category: text("category", { enum: NOTIFICATION_CATEGORIES }).notNull(),
    urgent: integer("urgent", { mode: "boolean" }).notNull().default(false),
    title: text("title", { mode: "json" }).$type<Localized>().notNull(),
    body: text("body", { mode: "json" }).$type<Localized>().notNull(),
    aboutEntity: text("about_entity"),
    aboutId: integer("about_id"),
    audience: text("audience", { mode: "json" }).$type<Audience>().notNull(),
    /** The staff member who sent it; null when the service sent it (a job, a feature's rule). */
    senderId: integer("sender_id").references(() => users.id, { onDelete: "set null" }),
    /** How many people it was addressed to when it was sent. */
    recipientCount: integer("recipient_count").notNull().default(0),
    /** When its fan-out started (a consumer took it up); null: not yet (the sweep enqueues it). */
    dispatchedAt: text("dispatched_at"),
    /** When the last recipient's copy was written. */
    fannedOutAt: text("fanned_out_at"),
  },
  (t) => [
    uniqueIndex("notification_key_uq").on(t.key),
    index("notification_school_idx").on(t.schoolId, t.createdAt),
    // The sweep's fan-outs not finished (never dispatched, or a chunk's message lost): a handful of rows.
    index("notification_unfinished_idx").on(t.updatedAt).where(sql`fanned_out_at IS NULL`),
  ],
);

/**
 * A recipient's copy: one per (notification, user), so a redelivered fan-out writes none twice.
 * `in_inbox` is false when the user's preferences keep the category out of their inbox (the row
 * stays: it is the delivery record), or once they deleted it (`deleted_at`), so a redelivery
 * never brings it back.
 */
export const notificationRecipients = sqliteTable(
  "notification_recipient",
  {
    ...record,
    schoolId: schoolId(),
    notificationId: integer("notification_id")
      .notNull()
      .references(() => notifications.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    inInbox: integer("in_inbox", { mode: "boolean" }).notNull().default(true),
    readAt: text("read_at"),
    deletedAt: text("deleted_at"),
  },
  (t) => [
    uniqueIndex("notification_recipient_uq").on(t.notificationId, t.userId),
    // The inbox, newest first: the user's rows in the school, by id.
    index("notification_recipient_inbox_idx").on(t.schoolId, t.userId, t.id).where(sql`in_inbox = 1`),
    index("notification_recipient_user_idx").on(t.userId),
  ],
);

/**
 * A push of a recipient's copy to one of their devices: `pending` until due (quiet hours) and
 * claimed, `sending` while a consumer holds it (`claim` is its message id), then `sent`,
 * `dropped` (not to be sent: its recipient deleted the copy while it waited) or `failed` (retries
 * exhausted: the dead-letter queue has the message). One per (recipient, device): a redelivered
 * message never pushes twice.
 */
export const notificationPushes = sqliteTable(
  "notification_push",
  {
    ...record,
    schoolId: schoolId(),
    notificationId: integer("notification_id")
      .notNull()
      .references(() => notifications.id, { onDelete: "cascade" }),
    recipientId: integer("recipient_id")
      .notNull()
      .references(() => notificationRecipients.id, { onDelete: "cascade" }),
    /**
     * The device (`device_token`, a platform row: never copied to a shard, so no foreign key; a
     * push whose device is gone by its delivery is `dropped`: docs/scaling.md "Shards", group D).
     */
    deviceTokenId: integer("device_token_id").notNull(),
    status: text("status", { enum: ["pending", "sending", "sent", "dropped", "failed"] })
      .notNull()
      .default("pending"),
    /** Not before (ISO 8601): the end of the recipient's quiet hours, or when it was written. */
    dueAt: text("due_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    claim: text("claim"),
    error: text("error"),
    sentAt: text("sent_at"),
  },
  (t) => [
    uniqueIndex("notification_push_uq").on(t.recipientId, t.deviceTokenId),
    index("notification_push_notification_idx").on(t.notificationId, t.status, t.dueAt),
    index("notification_push_device_idx").on(t.deviceTokenId),
    // The sweep's due pushes across schools: the pending rows only.
    index("notification_push_due_idx").on(t.dueAt).where(sql`status IN ('pending', 'sending')`),
  ],
);

/**
 * A user's notification preferences in a school: per category, push and inbox on or off, and
 * quiet hours (HH:mm in the school's zone; both or neither) during which pushes wait. No row:
 * everything on, no quiet hours. Emergencies ignore all of it.
 */
export const notificationPreferences = sqliteTable(
  "notification_preference",
  {
    ...record,
    schoolId: schoolId(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    afternoonPush: integer("afternoon_push", { mode: "boolean" }).notNull().default(true),
    afternoonInbox: integer("afternoon_inbox", { mode: "boolean" }).notNull().default(true),
    tasksPush: integer("tasks_push", { mode: "boolean" }).notNull().default(true),
    tasksInbox: integer("tasks_inbox", { mode: "boolean" }).notNull().default(true),
    eventsPush: integer("events_push", { mode: "boolean" }).notNull().default(true),
    eventsInbox: integer("events_inbox", { mode: "boolean" }).notNull().default(true),
    lostAndFoundPush: integer("lost_and_found_push", { mode: "boolean" }).notNull().default(true),
    lostAndFoundInbox: integer("lost_and_found_inbox", { mode: "boolean" }).notNull().default(true),
    generalPush: integer("general_push", { mode: "boolean" }).notNull().default(true),
    generalInbox: integer("general_inbox", { mode: "boolean" }).notNull().default(true),
    transportPush: integer("transport_push", { mode: "boolean" }).notNull().default(true),
    transportInbox: integer("transport_inbox", { mode: "boolean" }).notNull().default(true),
    quietStart: text("quiet_start"),
    quietEnd: text("quiet_end"),
  },
  (t) => [
    uniqueIndex("notification_preference_uq").on(t.schoolId, t.userId),
    index("notification_preference_user_idx").on(t.userId),
  ],
);

export const Notifications = dataTable(notifications, { entity: "notification" });
/** A recipient's copy is what the API calls a notification (`/api/v1/notification/{id}`). */
export const NotificationRecipients = dataTable(notificationRecipients, { entity: "notification" });
export const NotificationPushes = dataTable(notificationPushes, { entity: "notification-push" });
export const NotificationPreferences = dataTable(notificationPreferences, { entity: "notification-preference" });

/**
 * The push provider's topics each device is subscribed to, as we told the provider (one topic per
 * school, `school-<id>`, and per role in it, `school-<id>-role-<roleId>`): what the sync of a role
 * and the clean-up of schools change, and what a user's provider state shows beside the provider's
 * own answer.
 */
export const pushSubscriptions = sqliteTable(
  "push_subscription",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deviceTokenId: integer("device_token_id")
      .notNull()
      .references(() => deviceTokens.id, { onDelete: "cascade" }),
    topic: text("topic").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("push_subscription_uq").on(t.deviceTokenId, t.topic),
    index("push_subscription_topic_idx").on(t.topic),
  ],
);
