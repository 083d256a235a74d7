/**
 * School events and their reminders, and the calendar feeds (iCalendar) of a school and of its
 * families (docs/domain.md#events).
 *
 * An event is for an audience: the whole school (`for_school`), or some levels and groups (one
 * `event_audience` row each). Its start and end are kept as the school-local date-times staff gave
 * (`start_local`, `end_local`, in `time_zone`) and as the instants they were then (`starts_at`,
 * `ends_at`): the list is ordered by the local start, reminders and the feeds use the instants.
 *
 * States: `scheduled` -> `cancelled` (deleted with a reason: the audience is told, the row stays so a
 * notification's link and a subscribed calendar still show it, as cancelled). A reminder is
 * `scheduled` until the sweep claims it: `sent` once, or `skipped` (its event was cancelled or had
 * started by then).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { LEVELS } from "../../lib/levels";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { families } from "./family";
import { groups } from "./group";

export const EVENT_STATUSES = ["scheduled", "cancelled"] as const;
export const REMINDER_STATUSES = ["scheduled", "sent", "skipped"] as const;

export const events = searchable(
  sqliteTable(
    "event",
    {
      ...record,
      schoolId: schoolId(),
      title: text("title").notNull(),
      titleSearch: searchCopy("title"),
      description: text("description"),
      place: text("place"),
      /** School-local `YYYY-MM-DDTHH:mm`, as staff gave them. */
      startLocal: text("start_local").notNull(),
      endLocal: text("end_local").notNull(),
      /** The zone the local times were given in (the school's, then). */
      timeZone: text("time_zone").notNull(),
      /** ISO instants of the local times in that zone. */
      startsAt: text("starts_at").notNull(),
      endsAt: text("ends_at").notNull(),
      /** For every member of the school; otherwise its `event_audience` rows say who. */
      forSchool: integer("for_school", { mode: "boolean" }).notNull().default(false),
      /** The public page's key (`GET /api/v1/event/public?slug=`): unguessable, unique. */
      slug: text("slug").notNull(),
      /** Object key of the event's image under `{schoolId}/events/{id}/`. */
      image: text("image"),
      status: text("status", { enum: EVENT_STATUSES }).notNull().default("scheduled"),
      /** iCalendar SEQUENCE: one more on every change, so subscribed calendars take the new version. */
      sequence: integer("sequence").notNull().default(0),
      createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
      /** When the audience was last reminded now (`POST .../remind`). */
      remindedAt: text("reminded_at"),
      cancelledAt: text("cancelled_at"),
      cancelledBy: integer("cancelled_by").references(() => users.id, { onDelete: "set null" }),
      cancelReason: text("cancel_reason"),
    },
    (t) => [
      uniqueIndex("event_slug_uq").on(t.slug),
      // The list's order (the local start, then id) and its date filters: one range of the school.
      index("event_start_idx").on(t.schoolId, t.startLocal, t.id),
      index("event_status_idx").on(t.schoolId, t.status, t.startLocal),
      index("event_created_idx").on(t.schoolId, t.createdAt),
      // The school feed: the whole-school events by instant.
      index("event_school_feed_idx").on(t.schoolId, t.forSchool, t.startsAt),
    ],
  ),
  { title: "titleSearch" },
);

/** One level or one group an event is for (exactly one of the two). */
export const eventAudiences = sqliteTable(
  "event_audience",
  {
    ...record,
    schoolId: schoolId(),
    eventId: integer("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    level: text("level", { enum: LEVELS }),
    groupId: integer("group_id").references(() => groups.id, { onDelete: "cascade" }),
  },
  (t) => [
    index("event_audience_event_idx").on(t.eventId),
    index("event_audience_group_idx").on(t.groupId),
    uniqueIndex("event_audience_uq").on(t.eventId, sql`ifnull(${t.level}, '')`, sql`ifnull(${t.groupId}, 0)`),
  ],
);

/** A reminder of an event, `minutes_before` its start (`send_at`), sent once by the sweep. */
export const eventReminders = sqliteTable(
  "event_reminder",
  {
    ...record,
    schoolId: schoolId(),
    eventId: integer("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    minutesBefore: integer("minutes_before").notNull(),
    /** ISO instant: the event's start less `minutes_before` (moved with the start). */
    sendAt: text("send_at").notNull(),
    status: text("status", { enum: REMINDER_STATUSES }).notNull().default("scheduled"),
    sentAt: text("sent_at"),
    /** How many people the reminder was addressed to. */
    recipientCount: integer("recipient_count"),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("event_reminder_uq").on(t.eventId, t.minutesBefore),
    index("event_reminder_school_idx").on(t.schoolId, t.createdAt),
    // The sweep's due reminders across schools: the scheduled rows only.
    index("event_reminder_due_idx").on(t.sendAt).where(sql`status = 'scheduled'`),
  ],
);

/**
 * A calendar feed a phone subscribes to (`GET /api/v1/event-calendar/feed?token=`): the school's
 * (no family) or one family's. The token in its URL is derived from `nonce` and the service's
 * secret (never stored): rotating changes the nonce, revoking deletes the row.
 */
export const calendarFeeds = sqliteTable(
  "calendar_feed",
  {
    ...record,
    schoolId: schoolId(),
    familyId: integer("family_id").references(() => families.id, { onDelete: "cascade" }),
    nonce: text("nonce").notNull(),
    /** The language of the texts the service writes in the feed (holidays, cancellations). */
    language: text("language", { enum: ["es", "en"] }).notNull(),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    // One school feed and one feed per family.
    uniqueIndex("calendar_feed_uq").on(t.schoolId, sql`ifnull(${t.familyId}, 0)`),
    index("calendar_feed_created_idx").on(t.schoolId, t.createdAt),
    index("calendar_feed_family_idx").on(t.familyId),
  ],
);

export const Events = dataTable(events, { entity: "event" });
export const EventAudiences = dataTable(eventAudiences, { entity: "event-audience" });
export const EventReminders = dataTable(eventReminders, { entity: "event-reminder" });
export const CalendarFeeds = dataTable(calendarFeeds, { entity: "calendar-feed", secret: ["nonce"] });
