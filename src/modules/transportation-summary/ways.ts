/**
 * How a student goes home on a school-local date, as SQL over `student` (one row per student):
 *
 * - the usual way: their home route that weekday (`route_student_day`, one per student, direction
 *   and weekday), when the route runs that weekday and the rider is not suspended that day; else
 *   `family` (no route: collected by the family);
 * - the confirmed exit permission of that date (at most one: a partial unique index) replaces it:
 *   its kind is the way (`route_change`, `auto_pickup`, `no_after_school`, `absence`).
 *
 * A holiday is decided by the caller (the cycles are instants; the school's zone decides the day).
 */
import type { Fields, Query, RowOf } from "../../db/query";
import { Users, users } from "../../db/schema/core";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteStops,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeStudentDays,
  routeStudents,
} from "../../db/schema/transport";
import { TrustedAddresses, trustedAddresses } from "../../db/schema/trusted-address";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import type { SchoolCtx } from "../../lib/context";
import { isoWeekday } from "../../lib/zoned-time";
import { copyOf, copyTable, identity } from "../user/api";

export const WAYS = ["route", "family", "route_change", "auto_pickup", "no_after_school", "absence"] as const;
export type Way = (typeof WAYS)[number];

const usualRoute = Routes.alias("usual_route");
const usualStop = RouteStops.alias("usual_stop");
const toRoute = Routes.alias("to_route");
const toStop = RouteStops.alias("to_stop");
const days = joinTable(routeStudentDays);
const pickupCopy = copyTable("pickup_copy");
const pickupName = identity(users, pickupCopy.table);

/** The rider is suspended on `date` (open ends open). */
const suspendedOn = (date: string) =>
  sql<boolean>`(${routeStudents.suspendedFrom} IS NOT NULL AND ${routeStudents.suspendedFrom} <= ${date} AND (${routeStudents.suspendedUntil} IS NULL OR ${routeStudents.suspendedUntil} >= ${date}))`;

/** The student's way home on `date` (see the file's comment). */
export const wayOf = (date: string) =>
  sql<Way>`CASE WHEN ${exitPermissions.id} IS NOT NULL THEN ${exitPermissions.kind} WHEN ${usualRoute.table.id} IS NOT NULL AND NOT ${suspendedOn(date)} THEN 'route' ELSE 'family' END`;

/**
 * The totals per way as one aggregate row (no GROUP BY: no sort step), each sum the cheapest test
 * of its way (the CASE of `wayOf` six times over 3,000 rows costs more); `family` is the rest.
 */
export function countFields(date: string) {
  const kind = (k: string) => sql<number>`coalesce(sum(${exitPermissions.kind} = ${k}), 0)`;
  return {
    total: sql<number>`count(*)`,
    route: sql<number>`coalesce(sum(${exitPermissions.id} IS NULL AND ${usualRoute.table.id} IS NOT NULL AND NOT ${suspendedOn(date)}), 0)`,
    route_change: kind("route_change"),
    auto_pickup: kind("auto_pickup"),
    no_after_school: kind("no_after_school"),
    absence: kind("absence"),
  };
}

/**
 * The active students of the school with, left-joined, their home route that weekday (and its
 * stop) and their confirmed permission of `date`. The permission's join names `status =
 * 'confirmed'` as a literal so the partial unique index (student, date) serves it.
 */
export function studentDays<F extends Fields>(ctx: SchoolCtx, date: string, fields: F): Query<RowOf<F>> {
  const weekday = isoWeekday(date);
  const bit = 1 << (weekday - 1);
  return Students.select(ctx, fields)
    .join(
      ExitPermissions,
      sql`${exitPermissions.studentId} = ${students.id} AND ${exitPermissions.date} = ${date} AND ${exitPermissions.status} = 'confirmed'`,
      "left",
    )
    .join(
      days,
      sql`${routeStudentDays.studentId} = ${students.id} AND ${routeStudentDays.direction} = 'home' AND ${routeStudentDays.weekday} = ${weekday}`,
      "left",
    )
    .join(RouteStudents, eq(routeStudents.id, routeStudentDays.routeStudentId), "left")
    .join(
      usualRoute,
      sql`${usualRoute.table.id} = ${routeStudents.routeId} AND (${usualRoute.table.weekdays} & ${bit}) <> 0`,
      "left",
    )
    .where(eq(students.status, "active"), sql`${students.deletedAt} IS NULL`);
}

/** What a page of the summary shows of each student, beyond the way: the routes, stops and people it names. */
export function dayDetail(ctx: SchoolCtx, date: string) {
  return {
    studentId: students.id,
    firstName: students.firstName,
    lastName: students.lastName,
    level: students.level,
    way: wayOf(date),
    usualRouteId: usualRoute.table.id,
    usualRouteName: usualRoute.table.name,
    usualStopId: usualStop.table.id,
    usualStopName: usualStop.table.name,
    usualStopTime: usualStop.table.time,
    suspended: sql<number>`${usualRoute.table.id} IS NOT NULL AND ${suspendedOn(date)}`,
    /** The school cancelled the home route that day (`route_availability.cancelled`). */
    cancelled: sql<number>`${RouteAvailabilities.exists(ctx, eq(routeAvailabilities.routeId, usualRoute.table.id), eq(routeAvailabilities.date, date), eq(routeAvailabilities.cancelled, true))}`,
    ...permissionDetail(),
  };
}

/** The usual home route and stop of a `dayDetail` row, or null when the student rides none that day. */
export function usualRouteOf(r: {
  usualRouteId: number | null;
  usualRouteName: string | null;
  usualStopId: number | null;
  usualStopName: string | null;
  usualStopTime: string | null;
}) {
  if (r.usualRouteId === null) return null;
  return {
    id: r.usualRouteId,
    name: r.usualRouteName ?? "",
    stopId: r.usualStopId,
    stopName: r.usualStopName,
    stopTime: r.usualStopTime,
  };
}

/** A permission's fields and its targets' names (over `exit_permission` joined by `withTargets`). */
export function permissionDetail() {
  return {
    permissionId: exitPermissions.id,
    kind: exitPermissions.kind,
    reason: exitPermissions.reason,
    fixedId: exitPermissions.fixedId,
    toRouteId: toRoute.table.id,
    toRouteName: toRoute.table.name,
    toStopId: toStop.table.id,
    toStopName: toStop.table.name,
    toStopTime: toStop.table.time,
    trustedAddressId: trustedAddresses.id,
    trustedAddressStreet: trustedAddresses.street,
    trustedAddressNumber: trustedAddresses.number,
    trustedAddressCity: trustedAddresses.city,
    pickupParentId: parents.id,
    pickupFirstName: pickupName.firstName,
    pickupLastName: pickupName.lastName,
    pickupRelationship: parents.relationship,
    trustedPersonId: trustedPeople.id,
    trustedPersonName: trustedPeople.name,
    trustedPersonRelationship: trustedPeople.relationship,
  };
}

/** The usual stop, left-joined by primary key. */
export function withUsualStop<R>(q: Query<R>): Query<R> {
  return q.join(usualStop, eq(usualStop.table.id, routeStudents.stopId), "left");
}

/** The permission's targets, left-joined by primary key. */
export function withTargets<R>(ctx: SchoolCtx, q: Query<R>): Query<R> {
  return q
    .join(toRoute, eq(toRoute.table.id, exitPermissions.routeId), "left")
    .join(toStop, eq(toStop.table.id, exitPermissions.stopId), "left")
    .join(TrustedAddresses, eq(trustedAddresses.id, exitPermissions.trustedAddressId), "left")
    .join(Parents, eq(parents.id, exitPermissions.pickupParentId), "left")
    .join(Users, eq(users.id, parents.userId), "left")
    .join(pickupCopy, copyOf(pickupCopy, users.id, ctx.schoolId), "left")
    .join(TrustedPeople, eq(trustedPeople.id, exitPermissions.trustedPersonId), "left");
}

/** The routes a `routeId` filter keeps: the usual route or the route changed to. */
export const onRoute = (routeId: number): SQL =>
  sql`(${routeStudents.routeId} = ${routeId} OR (${exitPermissions.kind} = 'route_change' AND ${exitPermissions.routeId} = ${routeId}))`;

export type Targets = {
  permissionId: number | null;
  kind: string | null;
  reason: string | null;
  fixedId: number | null;
  toRouteId: number | null;
  toRouteName: string | null;
  toStopId: number | null;
  toStopName: string | null;
  toStopTime: string | null;
  trustedAddressId: number | null;
  trustedAddressStreet: string | null;
  trustedAddressNumber: string | null;
  trustedAddressCity: string | null;
  pickupParentId: number | null;
  pickupFirstName: string | null;
  pickupLastName: string | null;
  pickupRelationship: string | null;
  trustedPersonId: number | null;
  trustedPersonName: string | null;
  trustedPersonRelationship: string | null;
};

/** A trusted address as one line ("Calle Olmo 12, Monterrey"). */
export const addressLine = (t: Pick<Targets, "trustedAddressStreet" | "trustedAddressNumber" | "trustedAddressCity">) =>
  `${[t.trustedAddressStreet, t.trustedAddressNumber].filter(Boolean).join(" ")}, ${t.trustedAddressCity ?? ""}`.replace(
    /, $/,
    "",
  );

/** Who collects the child on an auto pickup: a guardian or an approved trusted person. */
export function collectorOf(t: Targets) {
  if (t.pickupParentId !== null) {
    return {
      kind: "guardian" as const,
      id: t.pickupParentId,
      name: `${t.pickupFirstName ?? ""} ${t.pickupLastName ?? ""}`.trim(),
      relationship: t.pickupRelationship,
    };
  }
  if (t.trustedPersonId !== null) {
    return {
      kind: "trusted" as const,
      id: t.trustedPersonId,
      name: t.trustedPersonName ?? "",
      relationship: t.trustedPersonRelationship,
    };
  }
  return null;
}

/** Where a route change takes the child: a route and stop, or a trusted address. */
export function destinationOf(t: Targets) {
  return {
    route:
      t.toRouteId === null
        ? null
        : {
            id: t.toRouteId,
            name: t.toRouteName ?? "",
            stopId: t.toStopId,
            stopName: t.toStopName,
            stopTime: t.toStopTime,
          },
    trustedAddress: t.trustedAddressId === null ? null : { id: t.trustedAddressId, address: addressLine(t) },
  };
}
