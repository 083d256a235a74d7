/**
 * School transport: vehicles, the routes they serve with their ordered stops, the students on each
 * route, and each day's seats and final list.
 *
 * Weekdays are ISO (1 Monday .. 7 Sunday) kept as a bit mask, bit `d - 1` for weekday `d`
 * (`weekdays & (1 << (d - 1))` asks "does it run on d"); the API speaks arrays of weekday numbers.
 * Dates are school-local calendar dates, `YYYY-MM-DD`; stop times are school-local `HH:mm`.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Level } from "../../lib/levels";
import { SchoolRows } from "../school-rows";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { students } from "./student";
import { trustedAddresses } from "./trusted-address";

export const TRANSPORT_STATUSES = ["active", "out_of_service"] as const;
export const ROUTE_DIRECTIONS = ["to_school", "home"] as const;
export type RouteDirection = (typeof ROUTE_DIRECTIONS)[number];

/** A vehicle: its seats and its driver (a name and phone; optionally a user holding the `driver` role). */
export const transports = searchable(
  sqliteTable(
    "transport",
    {
      ...record,
      schoolId: schoolId(),
      /** Its name or number ("Bus 3"), unique in the school. */
      name: text("name").notNull(),
      plate: text("plate"),
      seats: integer("seats").notNull(),
      driverName: text("driver_name"),
      driverPhone: text("driver_phone"),
      /** The driver's user in this school, when the driver signs in (role `driver`). */
      driverUserId: integer("driver_user_id").references(() => users.id, { onDelete: "set null" }),
      status: text("status", { enum: TRANSPORT_STATUSES }).notNull().default("active"),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      index("transport_school_idx").on(t.schoolId, t.createdAt),
      uniqueIndex("transport_name_uq").on(t.schoolId, t.nameSearch),
      index("transport_driver_idx").on(t.schoolId, t.driverUserId),
      check("transport_seats_ck", sql`${t.seats} >= 0`),
    ],
  ),
  { name: "nameSearch" },
);

/** A route: a vehicle going one way on given weekdays, for given levels, through ordered stops. */
export const routes = searchable(
  sqliteTable(
    "route",
    {
      ...record,
      schoolId: schoolId(),
      name: text("name").notNull(),
      transportId: integer("transport_id")
        .notNull()
        .references(() => transports.id),
      direction: text("direction", { enum: ROUTE_DIRECTIONS }).notNull(),
      /** ISO weekdays as a bit mask (bit d-1 for weekday d). */
      weekdays: integer("weekdays").notNull(),
      /** The levels it serves, in canonical order (JSON array). */
      levels: text("levels", { mode: "json" }).$type<Level[]>().notNull().default([]),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      index("route_school_idx").on(t.schoolId, t.createdAt),
      uniqueIndex("route_name_uq").on(t.schoolId, t.nameSearch),
      index("route_transport_idx").on(t.schoolId, t.transportId),
    ],
  ),
  { name: "nameSearch" },
);

/** A stop of a route, in order, at a school-local time; at an address or a trusted address. */
export const routeStops = sqliteTable(
  "route_stop",
  {
    ...record,
    schoolId: schoolId(),
    routeId: integer("route_id")
      .notNull()
      .references(() => routes.id, { onDelete: "cascade" }),
    /** 1-based order on the route. */
    position: integer("position").notNull(),
    name: text("name").notNull(),
    /** School-local `HH:mm`. */
    time: text("time").notNull(),
    address: text("address"),
    trustedAddressId: integer("trusted_address_id").references(() => trustedAddresses.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("route_stop_position_uq").on(t.routeId, t.position),
    index("route_stop_school_idx").on(t.schoolId, t.routeId),
  ],
);

/** A student riding a route, boarding or leaving at a stop, on given weekdays; maybe suspended for a while. */
export const routeStudents = sqliteTable(
  "route_student",
  {
    ...record,
    schoolId: schoolId(),
    routeId: integer("route_id")
      .notNull()
      .references(() => routes.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    stopId: integer("stop_id")
      .notNull()
      .references(() => routeStops.id),
    /** ISO weekdays as a bit mask, within the route's. */
    weekdays: integer("weekdays").notNull(),
    /** The route's direction, copied so that one route per student, direction and weekday is a unique index. */
    direction: text("direction", { enum: ROUTE_DIRECTIONS }).notNull(),
    /** A suspension: `YYYY-MM-DD` inclusive both ends, with its reason; null when none. */
    suspendedFrom: text("suspended_from"),
    suspendedUntil: text("suspended_until"),
    suspensionReason: text("suspension_reason"),
  },
  (t) => [
    uniqueIndex("route_student_uq").on(t.routeId, t.studentId),
    index("route_student_school_idx").on(t.schoolId, t.createdAt),
    index("route_student_route_idx").on(t.schoolId, t.routeId, t.createdAt),
    index("route_student_student_idx").on(t.schoolId, t.studentId),
    index("route_student_stop_idx").on(t.stopId),
  ],
);

/**
 * One row per weekday a route student rides: the unique index is the rule "one route per student,
 * direction and weekday", so two admins assigning the same student at once cannot both win.
 */
export const routeStudentDays = sqliteTable(
  "route_student_day",
  {
    schoolId: schoolId(),
    routeStudentId: integer("route_student_id")
      .notNull()
      .references(() => routeStudents.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    direction: text("direction", { enum: ROUTE_DIRECTIONS }).notNull(),
    weekday: integer("weekday").notNull(),
  },
  (t) => [
    uniqueIndex("route_student_day_uq").on(t.studentId, t.direction, t.weekday),
    index("route_student_day_rs_idx").on(t.routeStudentId),
  ],
);

/**
 * A route's seats on a date. `seats` null: the vehicle's seats minus that day's riders; a number:
 * the school's override. `taken` counts the seats taken by changes (riders joining for the day).
 * The final list is versioned: `version` is the list's current version; `printed_version` the last
 * one downloaded. A change after a download makes version n+1 (`route_list_change` says what).
 */
export const routeAvailabilities = sqliteTable(
  "route_availability",
  {
    ...record,
    schoolId: schoolId(),
    routeId: integer("route_id")
      .notNull()
      .references(() => routes.id, { onDelete: "cascade" }),
    date: text("date").notNull(),
    seats: integer("seats"),
    taken: integer("taken").notNull().default(0),
    version: integer("version").notNull().default(1),
    printedVersion: integer("printed_version"),
    printedAt: text("printed_at"),
    /** The school cancelled the route that day: it does not run; no one joins it, its riders go home another way. */
    cancelled: integer("cancelled", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    uniqueIndex("route_availability_uq").on(t.routeId, t.date),
    index("route_availability_school_idx").on(t.schoolId, t.date, t.routeId),
    index("route_availability_created_idx").on(t.schoolId, t.createdAt),
    check("route_availability_seats_ck", sql`${t.seats} IS NULL OR ${t.seats} >= 0`),
    check("route_availability_taken_ck", sql`${t.taken} >= 0`),
  ],
);

export const ROUTE_CHANGE_KINDS = ["join", "away"] as const;

/**
 * A change to a route's list on a date: a student joining (takes a seat) or away (frees one), why,
 * and at which stop a joining student boards or leaves.
 */
export const routeAvailabilityStudents = sqliteTable(
  "route_availability_student",
  {
    ...record,
    schoolId: schoolId(),
    routeAvailabilityId: integer("route_availability_id")
      .notNull()
      .references(() => routeAvailabilities.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    stopId: integer("stop_id").references(() => routeStops.id, { onDelete: "set null" }),
    kind: text("kind", { enum: ROUTE_CHANGE_KINDS }).notNull(),
    reason: text("reason"),
    /** Whether the change is confirmed (only confirmed changes move seats and the list). */
    confirmed: integer("confirmed", { mode: "boolean" }).notNull().default(true),
    /** The list version the change first appears in. */
    version: integer("version").notNull().default(1),
    /**
     * The exit permission that made this change (a route change: away from the usual route, join on
     * the new one), so withdrawing the permission withdraws its changes. No foreign key: the
     * afternoon's tables build on these.
     */
    exitPermissionId: integer("exit_permission_id"),
  },
  (t) => [
    uniqueIndex("route_availability_student_uq").on(t.routeAvailabilityId, t.studentId),
    index("route_availability_student_permission_idx").on(t.exitPermissionId),
    index("route_availability_student_school_idx").on(t.schoolId, t.createdAt),
    index("route_availability_student_student_idx").on(t.schoolId, t.studentId),
  ],
);

/** What changed in a route's list on a date, by version: "2 changes since you printed". */
export const routeListChanges = sqliteTable(
  "route_list_change",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    schoolId: schoolId(),
    routeAvailabilityId: integer("route_availability_id")
      .notNull()
      .references(() => routeAvailabilities.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    studentId: integer("student_id").references(() => students.id, { onDelete: "set null" }),
    /** added, removed, stop, away, back, seats. */
    change: text("change").notNull(),
    detail: text("detail"),
    at: text("at").notNull(),
  },
  (t) => [index("route_list_change_idx").on(t.routeAvailabilityId, t.version)],
);

export const Transports = dataTable(transports, { entity: "transport" });
export const Routes = dataTable(routes, { entity: "route" });
export const RouteStops = dataTable(routeStops, { entity: "route-stop" });
export const RouteStudents = dataTable(routeStudents, { entity: "route-student" });
export const RouteAvailabilities = dataTable(routeAvailabilities, { entity: "route-availability" });
export const RouteAvailabilityStudents = dataTable(routeAvailabilityStudents, { entity: "route-availability-student" });
/** The list's change log (no record timestamps, not audited: the change it follows is). */
export const RouteListChanges = new SchoolRows(routeListChanges);
