/**
 * Bus runs (docs/domain.md, "Bus runs"): a route's run on one school day, started by its driver,
 * with the riders' boardings and drops and the vehicle's positions (kept for the day only).
 */
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { students } from "./student";
import { routeStops, routes } from "./transport";

/** One run of a route on a date: at most one per route and day. */
export const routeRuns = sqliteTable(
  "route_run",
  {
    ...record,
    schoolId: schoolId(),
    routeId: integer("route_id")
      .notNull()
      .references(() => routes.id, { onDelete: "cascade" }),
    /** The school-local day. */
    date: text("date").notNull(),
    status: text("status", { enum: ["running", "finished"] })
      .notNull()
      .default("running"),
    startedAt: text("started_at").notNull(),
    startedBy: integer("started_by").references(() => users.id, { onDelete: "set null" }),
    finishedAt: text("finished_at"),
    lastLat: real("last_lat"),
    lastLon: real("last_lon"),
    lastSpeed: real("last_speed"),
    lastPositionAt: text("last_position_at"),
    /** When the "five minutes away" pushes were last looked for (at most once a minute). */
    approachCheckedAt: text("approach_checked_at"),
  },
  (t) => [
    uniqueIndex("route_run_day_uq").on(t.schoolId, t.routeId, t.date),
    index("route_run_date_idx").on(t.schoolId, t.date),
  ],
);

export const RUN_EVENTS = ["boarded", "dropped", "no-show"] as const;
export type RunEvent = (typeof RUN_EVENTS)[number];

/** A rider's boarding, drop or no-show on a run: at most one of each per rider and run. */
export const routeRunEvents = sqliteTable(
  "route_run_event",
  {
    ...record,
    schoolId: schoolId(),
    runId: integer("run_id")
      .notNull()
      .references(() => routeRuns.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    event: text("event", { enum: RUN_EVENTS }).notNull(),
    stopId: integer("stop_id").references(() => routeStops.id, { onDelete: "set null" }),
    /** When it happened (the driver's phone). */
    at: text("at").notNull(),
    /** Why the driver recorded a rider who is not on the day's final list; null for a rider on it. */
    insistReason: text("insist_reason"),
    recordedBy: integer("recorded_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("route_run_event_uq").on(t.runId, t.studentId, t.event),
    index("route_run_event_run_idx").on(t.schoolId, t.runId, t.at),
    index("route_run_event_student_idx").on(t.studentId),
  ],
);

/** A position of the vehicle during a run (at most one each 5 s; deleted after the day). */
export const routeRunPositions = sqliteTable(
  "route_run_position",
  {
    ...record,
    schoolId: schoolId(),
    runId: integer("run_id")
      .notNull()
      .references(() => routeRuns.id, { onDelete: "cascade" }),
    lat: real("lat").notNull(),
    lon: real("lon").notNull(),
    speed: real("speed"),
    at: text("at").notNull(),
  },
  (t) => [
    index("route_run_position_run_idx").on(t.schoolId, t.runId, t.at),
    index("route_run_position_created_idx").on(t.createdAt),
  ],
);

/** A push sent about a rider on a run ("five minutes away"): once per rider, run and kind. */
export const routeRunNotices = sqliteTable(
  "route_run_notice",
  {
    ...record,
    schoolId: schoolId(),
    runId: integer("run_id")
      .notNull()
      .references(() => routeRuns.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["approaching"] }).notNull(),
  },
  (t) => [uniqueIndex("route_run_notice_uq").on(t.runId, t.studentId, t.kind)],
);

export const RouteRuns = dataTable(routeRuns, { entity: "route-run" });
export const RouteRunEvents = dataTable(routeRunEvents, { entity: "route-run-event" });
export const RouteRunPositions = dataTable(routeRunPositions, { entity: "route-run-position" });
export const RouteRunNotices = dataTable(routeRunNotices, { entity: "route-run-notice" });
