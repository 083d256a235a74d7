/**
 * Dismissal: the 3 pm moment (docs/domain.md#dismissal). A guardian says "I'm here" (an arrival per
 * child and day), staff call the child and release them at a gate to a collector the day's
 * effective plan names (a release per child and day: the unique index is the race's referee), and
 * every change is an event of the school's day with its sequence number (`seq`), which the live
 * board resumes from. A school's dismissal setting holds its position and radius; a reunification
 * is an emergency day in which every release needs an identity check.
 */
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { students } from "./student";

/** A school's dismissal setting: where it is and how near an arrival must be. One per school. */
export const dismissalSettings = sqliteTable(
  "dismissal_setting",
  {
    ...record,
    schoolId: schoolId(),
    latitude: real("latitude").notNull(),
    longitude: real("longitude").notNull(),
    /** How far from the school's position an "I'm here" may be, in metres. */
    radiusMeters: integer("radius_meters").notNull(),
  },
  (t) => [uniqueIndex("dismissal_setting_school_uq").on(t.schoolId)],
);

export const ARRIVAL_STATUSES = ["waiting", "called"] as const;

/** "I'm here" for one child on one school-local day: its place in the line is its order (id). */
export const dismissalArrivals = sqliteTable(
  "dismissal_arrival",
  {
    ...record,
    schoolId: schoolId(),
    /** School-local `YYYY-MM-DD`. */
    date: text("date").notNull(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    /** Who said it (a guardian, or their delegate). */
    userId: integer("user_id").references(() => users.id, { onDelete: "set null" }),
    latitude: real("latitude"),
    longitude: real("longitude"),
    accuracy: real("accuracy"),
    /** Metres from the school's position, when a position was given and the school has one. */
    distanceMeters: integer("distance_meters"),
    status: text("status", { enum: ARRIVAL_STATUSES }).notNull().default("waiting"),
    calledAt: text("called_at"),
    calledBy: integer("called_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("dismissal_arrival_student_uq").on(t.schoolId, t.date, t.studentId),
    index("dismissal_arrival_day_idx").on(t.schoolId, t.date, t.id),
  ],
);

export const COLLECTOR_KINDS = ["guardian", "trusted"] as const;
export type CollectorKind = (typeof COLLECTOR_KINDS)[number];
export const RELEASE_METHODS = ["list", "pass", "override"] as const;

/** A child released at a gate: at most one per child and day (the unique index). */
export const dismissalReleases = sqliteTable(
  "dismissal_release",
  {
    ...record,
    schoolId: schoolId(),
    date: text("date").notNull(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    collectorKind: text("collector_kind", { enum: COLLECTOR_KINDS }).notNull(),
    /** The parent profile (guardian) or the trusted person. */
    collectorId: integer("collector_id").notNull(),
    /** Their name as it was at the release. */
    collectorName: text("collector_name").notNull(),
    /** How the collector was verified: the day's plan, a pickup pass, an admin's override. */
    method: text("method", { enum: RELEASE_METHODS }).notNull(),
    /** The pickup pass's `jti` (its slug), when released on a pass. */
    passId: text("pass_id"),
    /** The confirmed exit permission the release stood on, if any. */
    permissionId: integer("permission_id"),
    gate: text("gate"),
    releasedBy: integer("released_by").references(() => users.id, { onDelete: "set null" }),
    /** The server's instant. */
    releasedAt: text("released_at").notNull(),
    /** The gate device's instant, as it said. */
    deviceReleasedAt: text("device_released_at"),
    /** An override's reason. */
    reason: text("reason"),
    /** A reunification's identity check, as staff recorded it. */
    identityCheck: text("identity_check"),
    /** A gate device's own id of an offline release: a retried batch writes it once. */
    clientId: text("client_id"),
    /** Recorded though the plan no longer allowed it (an offline release): for the office. */
    flagged: integer("flagged", { mode: "boolean" }).notNull().default(false),
    flagReason: text("flag_reason"),
  },
  (t) => [
    uniqueIndex("dismissal_release_student_uq").on(t.schoolId, t.date, t.studentId),
    index("dismissal_release_day_idx").on(t.schoolId, t.date, t.releasedAt),
    // The list's order (the latest first) and its child filter.
    index("dismissal_release_order_idx").on(t.schoolId, t.releasedAt, t.id),
    index("dismissal_release_child_idx").on(t.schoolId, t.studentId, t.releasedAt),
    uniqueIndex("dismissal_release_client_uq").on(t.schoolId, t.clientId).where(sql`client_id IS NOT NULL`),
  ],
);

/** One change of a school's dismissal day, numbered: the live board's log. */
export const dismissalEvents = sqliteTable(
  "dismissal_event",
  {
    ...record,
    schoolId: schoolId(),
    date: text("date").notNull(),
    /** 1, 2, 3 ... within the school's day. */
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    studentId: integer("student_id"),
    /** The event's further facts (JSON object). */
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [uniqueIndex("dismissal_event_seq_uq").on(t.schoolId, t.date, t.seq)],
);

/** A one-use ticket for the live board's WebSocket (browsers cannot send Authorization there). */
export const dismissalTickets = sqliteTable(
  "dismissal_ticket",
  {
    ...record,
    schoolId: schoolId(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 of the ticket, hex: the ticket itself is never stored. */
    hash: text("hash").notNull(),
    /** Whether the holder reads the whole school (`dismissal.read`) or only their children. */
    school: integer("school", { mode: "boolean" }).notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [uniqueIndex("dismissal_ticket_hash_uq").on(t.hash)],
);

/** A school's reunification (emergency): open while `ended_at` is null. */
export const dismissalReunifications = sqliteTable(
  "dismissal_reunification",
  {
    ...record,
    schoolId: schoolId(),
    date: text("date").notNull(),
    reason: text("reason").notNull(),
    startedBy: integer("started_by").references(() => users.id, { onDelete: "set null" }),
    endedAt: text("ended_at"),
    endedBy: integer("ended_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    index("dismissal_reunification_school_idx").on(t.schoolId, t.date),
    // At most one open per school.
    uniqueIndex("dismissal_reunification_open_uq").on(t.schoolId).where(sql`ended_at IS NULL`),
  ],
);

/**
 * The version of the facts the dismissal board's plan reads, one row per school: triggers
 * (migrations/0061) move it at every change of those tables, whatever writes them; the board kept
 * per isolate is read again once it moved (src/modules/dismissal/plan.ts `readDay`). Never written
 * by the app.
 */
export const dismissalBoardVersions = sqliteTable(
  "dismissal_board_version",
  {
    ...record,
    schoolId: schoolId(),
    version: integer("version").notNull(),
  },
  (t) => [uniqueIndex("dismissal_board_version_school_uq").on(t.schoolId)],
);

export const DismissalSettings = dataTable(dismissalSettings, { entity: "dismissal-setting" });
export const DismissalArrivals = dataTable(dismissalArrivals, { entity: "dismissal-arrival" });
export const DismissalReleases = dataTable(dismissalReleases, { entity: "dismissal-release" });
export const DismissalEvents = dataTable(dismissalEvents, { entity: "dismissal-event" });
export const DismissalTickets = dataTable(dismissalTickets, { entity: "dismissal-ticket", secret: ["hash"] });
export const DismissalReunifications = dataTable(dismissalReunifications, { entity: "dismissal-reunification" });
export const DismissalBoardVersions = dataTable(dismissalBoardVersions, { entity: "dismissal-board-version" });
