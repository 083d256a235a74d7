/** The development outbox. */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./core";

/** Messages the `log` SMS provider "sent": the development outbox. */
export const devOutbox = sqliteTable(
  "dev_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    to: text("to").notNull(),
    body: text("body").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("dev_outbox_to_idx").on(t.to, t.id)],
);

/**
 * What the `log` push provider "sent": the development push outbox (`GET /api/v1/dev/push-outbox`).
 * A message to a device has its `token`; a topic change (subscribe, unsubscribe, delete) its `topic`.
 */
export const devPushOutbox = sqliteTable(
  "dev_push_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    token: text("token"),
    topic: text("topic"),
    /** The FCM v1 message (`{ message: { token, notification, data, android, apns } }`), or the topic operation. */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("dev_push_outbox_token_idx").on(t.token, t.id), index("dev_push_outbox_topic_idx").on(t.topic, t.id)],
);
