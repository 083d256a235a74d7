/** What scheduled jobs and queue consumers record. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { createdAt, record, users } from "./core";

/** One row per scheduled run (cron history). */
export const cronHistory = sqliteTable(
  "cron_history",
  {
    ...record,
    cron: text("cron").notNull(),
    job: text("job").notNull(),
    status: text("status", { enum: ["running", "completed", "failed"] }).notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    detail: text("detail"),
  },
  (t) => [index("cron_history_job_idx").on(t.job, t.startedAt), index("cron_history_started_idx").on(t.startedAt)],
);

/**
 * Queue messages already handled: a consumer inserts the message key (ON CONFLICT DO NOTHING)
 * before its side effects, so a redelivered message does nothing twice.
 */
export const queueReceipts = sqliteTable(
  "queue_receipt",
  {
    key: text("key").primaryKey(),
    queue: text("queue").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("queue_receipt_created_idx").on(t.createdAt)],
);

/**
 * Fixed-window counters for rate limits (src/lib/rate-limit.ts): one row per key (`verify-phone:+1555...`,
 * `verify-phone-ip:203.0.113.7`), counted and reset by a single upsert, so concurrent requests
 * cannot all pass a check that each read before the others wrote.
 */
export const rateLimits = sqliteTable(
  "rate_limit",
  {
    key: text("key").primaryKey(),
    count: integer("count").notNull(),
    /** When the current window ends (ISO 8601). */
    resetAt: text("reset_at").notNull(),
  },
  (t) => [index("rate_limit_reset_idx").on(t.resetAt)],
);

/**
 * Idempotency keys (src/lib/idempotency.ts): the first answer to a user's POST or PATCH sent with
 * an `Idempotency-Key`, replayed for 24 hours to a repeat of that request. The unique (user, key)
 * makes two concurrent requests with one key run once: the second finds the first's row.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_key",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** SHA-256 of the method, path and query, school and body: the same key with another request is refused. */
    fingerprint: text("fingerprint").notNull(),
    /** `pending` while the first request runs, `done` once its answer is stored. */
    status: text("status", { enum: ["pending", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    /** The answer's content type and location, JSON. */
    responseHeaders: text("response_headers"),
    responseBody: text("response_body"),
    createdAt: createdAt(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [uniqueIndex("idempotency_key_uq").on(t.userId, t.key), index("idempotency_key_expires_idx").on(t.expiresAt)],
);

export const CronHistory = dataTable(cronHistory, { entity: "cron-history" });
