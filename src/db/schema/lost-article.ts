/**
 * Lost and found: articles the school found, and their reminders (docs/domain.md#lost-and-found).
 *
 * States: `found` -> `claimed` (a parent claims it) -> `delivered` (staff hand it over, recording who
 * received it); a claim can be cancelled (`claimed` -> `found`); staff may also deliver a found
 * article no one claimed (a child recognised it at the desk); a found article no one claimed is
 * `donated` once its donation date has come.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { students } from "./student";

export const LOST_ARTICLE_CATEGORIES = [
  "clothing",
  "backpack",
  "lunchbox",
  "water-bottle",
  "books",
  "school-supplies",
  "electronics",
  "sports",
  "toys",
  "accessories",
  "other",
] as const;
export type LostArticleCategory = (typeof LOST_ARTICLE_CATEGORIES)[number];

export const LOST_ARTICLE_STATUSES = ["found", "claimed", "delivered", "donated"] as const;
export type LostArticleStatus = (typeof LOST_ARTICLE_STATUSES)[number];

export const LOST_REMINDER_STATUSES = ["scheduled", "sent", "skipped"] as const;

export const lostArticles = searchable(
  sqliteTable(
    "lost_article",
    {
      ...record,
      schoolId: schoolId(),
      name: text("name").notNull(),
      nameSearch: searchCopy("name"),
      description: text("description"),
      category: text("category", { enum: LOST_ARTICLE_CATEGORIES }).notNull(),
      status: text("status", { enum: LOST_ARTICLE_STATUSES }).notNull().default("found"),
      /** School-local `YYYY-MM-DD`. */
      foundOn: text("found_on").notNull(),
      foundPlace: text("found_place"),
      /** School-local `YYYY-MM-DD`: from this day an unclaimed article may be donated. */
      donateAfter: text("donate_after").notNull(),
      /** Object key of the photo under `{schoolId}/lost-articles/{id}/`. */
      photo: text("photo"),
      createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
      claimedBy: integer("claimed_by").references(() => users.id, { onDelete: "set null" }),
      claimedAt: text("claimed_at"),
      /** The child the claimant says it belongs to (one of theirs), if they said. */
      claimedForStudentId: integer("claimed_for_student_id").references(() => students.id, { onDelete: "set null" }),
      deliveredAt: text("delivered_at"),
      deliveredBy: integer("delivered_by").references(() => users.id, { onDelete: "set null" }),
      /** Who took it away, as staff wrote it ("Ana García (mother)"). */
      receivedBy: text("received_by"),
      donatedAt: text("donated_at"),
      donatedBy: integer("donated_by").references(() => users.id, { onDelete: "set null" }),
      /** When the claimant was last reminded to pick it up. */
      remindedAt: text("reminded_at"),
    },
    (t) => [
      // The list's order (newest found first) and its filters, each within the school.
      index("lost_article_found_idx").on(t.schoolId, t.foundOn, t.id),
      index("lost_article_status_idx").on(t.schoolId, t.status, t.foundOn, t.id),
      index("lost_article_category_idx").on(t.schoolId, t.category, t.foundOn, t.id),
      index("lost_article_created_idx").on(t.schoolId, t.createdAt),
      // "Claimed by me": the claimant's articles, newest claim first.
      index("lost_article_claimant_idx").on(t.claimedBy, t.claimedAt),
      index("lost_article_student_idx").on(t.claimedForStudentId),
    ],
  ),
  { name: "nameSearch" },
);

/** A reminder `days_before` an article's donation date, at `time` school-local (`send_at`). */
export const lostArticleReminders = sqliteTable(
  "lost_article_reminder",
  {
    ...record,
    schoolId: schoolId(),
    lostArticleId: integer("lost_article_id")
      .notNull()
      .references(() => lostArticles.id, { onDelete: "cascade" }),
    daysBefore: integer("days_before").notNull(),
    /** School-local `HH:mm`. */
    time: text("time").notNull(),
    /** ISO instant (moved when the donation date moves). */
    sendAt: text("send_at").notNull(),
    status: text("status", { enum: LOST_REMINDER_STATUSES }).notNull().default("scheduled"),
    sentAt: text("sent_at"),
    recipientCount: integer("recipient_count"),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("lost_article_reminder_uq").on(t.lostArticleId, t.daysBefore),
    index("lost_article_reminder_school_idx").on(t.schoolId, t.createdAt),
    index("lost_article_reminder_due_idx").on(t.sendAt).where(sql`status = 'scheduled'`),
  ],
);

export const LostArticles = dataTable(lostArticles, { entity: "lost-article" });
export const LostArticleReminders = dataTable(lostArticleReminders, { entity: "lost-article-reminder" });
