/**
 * The final list of a route on a date: who rides, at which stop, who is away and why, who joins by
 * a change, and (on routes home) who may receive each child at the stop: the guardians who may
 * pick them up and are not restricted that day, and the approved trusted people. Read in one
 * batch for one route or every running route of the school; a holiday or a weekday the route does
 * not run answers `runs: false` and no students (not an error: a driver's app asks every day).
 */
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  RouteStops,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeStops,
  routeStudents,
  routes,
} from "../../db/schema/transport";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, or, type SQLWrapper, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { compareText } from "../../lib/text";
import { isoWeekday } from "../../lib/zoned-time";
import { calendarOf, calendarReads, dayOff, type RouteOff, routeOff } from "../school-schedule/api";
import { copyOf, copyTable, identity } from "../user/api";
import { drivenBy, type RouteDay, routeDays, runsOnWeekday, seatsOf } from "./day";
import { changesSince, markPrinted } from "./versions";

export type Status = "riding" | "away" | "joining";

export interface Receiver {
  name: string;
  relationship: string;
  kind: "guardian" | "trusted";
}

export interface ListStudent {
  studentId: number;
  firstName: string;
  lastName: string;
  stopId: number | null;
  stopName: string | null;
  stopPosition: number | null;
  stopTime: string | null;
  status: Status;
  reason: string | null;
  receivers?: Receiver[];
}

export interface FinalList {
  routeId: number;
  routeName: string;
  direction: "to_school" | "home";
  vehicle: string;
  driverName: string | null;
  date: string;
  weekday: number;
  runs: boolean;
  /** The school cancelled the route that day (its riders go home another way). */
  cancelled: boolean;
  holiday: boolean;
  /** Why it does not run, or null. */
  reason: RouteOff | null;
  version: number;
  printedVersion: number | null;
  seats: number;
  riders: number;
  available: number;
  students: ListStudent[];
}

/** Which routes: one (by id), or every route running on the date. */
type Which = { routeId: number } | { running: true };

/** Reads the final lists in one batch (a download first marks them printed, in the same batch). */
export async function readFinalLists(
  ctx: SchoolCtx,
  which: Which,
  date: string,
  options: { print?: boolean; since?: number } = {},
) {
  const weekday = runsOnWeekday(routes.weekdays, date);
  const routeCond = "routeId" in which ? eq(routes.id, which.routeId) : weekday;
  const routeSet = Routes.pick(ctx, routes.id, routeCond, drivenBy(ctx, routes.id));
  const inRoutes = (column: SQLWrapper) => sql`${column} IN ${routeSet}`;
  const batch = new Batch(ctx);
  // The download's mark: only on a running weekday (a holiday is decided after the read and marks nothing visible).
  if (options.print) batch.add(...markPrinted(ctx, routeSet, date));
  const day = calendarReads(ctx, batch, date);
  const days = batch.read(routeDays(ctx, date, routeCond));
  const riders = batch.read(
    RouteStudents.select(ctx, {
      routeId: routeStudents.routeId,
      studentId: routeStudents.studentId,
      firstName: students.firstName,
      lastName: students.lastName,
      stopId: routeStudents.stopId,
      // The suspension's reason when it covers the date (few columns: 3,000 rows are decoded).
      suspended: sql<
        string | null
      >`CASE WHEN ${routeStudents.suspendedFrom} <= ${date} AND (${routeStudents.suspendedUntil} IS NULL OR ${routeStudents.suspendedUntil} >= ${date}) THEN coalesce(${routeStudents.suspensionReason}, 'Suspended') END`,
    })
      .join(Students, eq(students.id, routeStudents.studentId))
      .where(inRoutes(routeStudents.routeId), runsOnWeekday(routeStudents.weekdays, date)),
  );
  const stopRows = batch.read(
    RouteStops.select(ctx, {
      id: routeStops.id,
      name: routeStops.name,
      position: routeStops.position,
      time: routeStops.time,
    }).where(inRoutes(routeStops.routeId)),
  );
  const dayIds = RouteAvailabilities.pick(
    ctx,
    routeAvailabilities.id,
    eq(routeAvailabilities.date, date),
    inRoutes(routeAvailabilities.routeId),
  );
  const changed = batch.read(
    RouteAvailabilityStudents.select(ctx, {
      routeId: routeAvailabilities.routeId,
      studentId: routeAvailabilityStudents.studentId,
      kind: routeAvailabilityStudents.kind,
      reason: routeAvailabilityStudents.reason,
      firstName: students.firstName,
      lastName: students.lastName,
      stopId: routeAvailabilityStudents.stopId,
    })
      .join(RouteAvailabilities, eq(routeAvailabilities.id, routeAvailabilityStudents.routeAvailabilityId))
      .join(Students, eq(students.id, routeAvailabilityStudents.studentId))
      .where(
        sql`${routeAvailabilityStudents.routeAvailabilityId} IN ${dayIds}`,
        eq(routeAvailabilityStudents.confirmed, true),
      ),
  );
  const onList = (column: SQLWrapper) =>
    or(
      sql`${column} IN ${RouteStudents.pick(ctx, routeStudents.studentId, inRoutes(routeStudents.routeId))}`,
      sql`${column} IN ${RouteAvailabilityStudents.pick(ctx, routeAvailabilityStudents.studentId, sql`${routeAvailabilityStudents.routeAvailabilityId} IN ${dayIds}`)}`,
    );
  const copy = copyTable("guardian_copy");
  const who = identity(users, copy.table);
  const guardianRows = batch.read(
    Guardians.select(ctx, {
      studentId: guardians.studentId,
      relationship: guardians.relationship,
      firstName: who.firstName,
      lastName: who.lastName,
    })
      .join(Parents, eq(parents.id, guardians.parentId))
      .join(Users, eq(users.id, parents.userId))
      .join(copy, copyOf(copy, users.id, ctx.schoolId), "left")
      .where(
        onList(guardians.studentId),
        eq(guardians.canPickUp, true),
        // A restriction counts on the days it covers (open ends open).
        sql`NOT (${guardians.restricted} = 1 AND (${guardians.restrictionFrom} IS NULL OR ${guardians.restrictionFrom} <= ${date}) AND (${guardians.restrictionUntil} IS NULL OR ${guardians.restrictionUntil} >= ${date}))`,
      ),
  );
  const trusted = batch.read(
    TrustedPeople.select(ctx, {
      studentId: trustedPeople.studentId,
      name: trustedPeople.name,
      relationship: trustedPeople.relationship,
    }).where(onList(trustedPeople.studentId), eq(trustedPeople.status, "approved")),
  );
  const since =
    "routeId" in which && options.since !== undefined
      ? batch.read(changesSince(ctx, which.routeId, date, options.since))
      : undefined;
  const results = await batch.commit();
  const { school, calendar } = calendarOf(results, day);
  if (!school) throw new Error("the current school was not read");
  const receivers = new Map<number, Receiver[]>();
  const add = (id: number, r: Receiver) => receivers.set(id, [...(receivers.get(id) ?? []), r]);
  for (const g of results.get(guardianRows)) {
    add(g.studentId, { name: `${g.firstName} ${g.lastName}`.trim(), relationship: g.relationship, kind: "guardian" });
  }
  for (const p of results.get(trusted))
    add(p.studentId, { name: p.name, relationship: p.relationship, kind: "trusted" });
  const stops = new Map(results.get(stopRows).map((s) => [s.id, s]));
  const byRoute = new Map<number, RiderRow[]>();
  for (const r of results.get(riders)) {
    const list = byRoute.get(r.routeId);
    if (list) list.push(r);
    else byRoute.set(r.routeId, [r]);
  }
  const lists = results
    .get(days)
    .sort((a, b) => compareText(a.routeName, b.routeName))
    .map((d) =>
      listOf(d, date, routeOff(date, calendar, d), {
        riders: byRoute.get(d.routeId) ?? [],
        changes: results.get(changed).filter((c) => c.routeId === d.routeId),
        stops,
        receivers,
      }),
    );
  return {
    school,
    /** The school's day off (any level), if any: the all-routes PDF says why it is empty. */
    off: dayOff(date, calendar),
    lists: "routeId" in which ? lists : lists.filter((l) => l.runs),
    changes: since ? results.get(since) : undefined,
  };
}

type RiderRow = {
  routeId: number;
  studentId: number;
  firstName: string;
  lastName: string;
  stopId: number | null;
  suspended?: string | null;
};

type Stop = { id: number; name: string; position: number; time: string };

/** One route's list from the batch's rows (its riders and changes). */
function listOf(
  day: RouteDay,
  date: string,
  why: RouteOff | null,
  rows: {
    riders: readonly RiderRow[];
    changes: readonly (RiderRow & { kind: "join" | "away"; reason: string | null })[];
    stops: Map<number, Stop>;
    receivers: Map<number, Receiver[]>;
  },
): FinalList {
  const runs = why === null;
  const away = new Map(rows.changes.filter((c) => c.kind === "away").map((c) => [c.studentId, c.reason]));
  const home = day.direction === "home";
  const entry = (r: RiderRow, status: Status, reason: string | null): ListStudent => {
    const stop = r.stopId === null ? undefined : rows.stops.get(r.stopId);
    return {
      studentId: r.studentId,
      firstName: r.firstName,
      lastName: r.lastName,
      stopId: r.stopId,
      stopName: stop?.name ?? null,
      stopPosition: stop?.position ?? null,
      stopTime: stop?.time ?? null,
      status,
      reason,
      ...(home ? { receivers: rows.receivers.get(r.studentId) ?? [] } : {}),
    };
  };
  const list: ListStudent[] = [];
  if (runs) {
    for (const r of rows.riders) {
      if (r.suspended) list.push(entry(r, "away", r.suspended));
      else if (away.has(r.studentId)) list.push(entry(r, "away", away.get(r.studentId) ?? null));
      else list.push(entry(r, "riding", null));
    }
    for (const c of rows.changes) if (c.kind === "join") list.push(entry(c, "joining", c.reason));
  }
  list.sort(
    (a, b) =>
      (a.stopPosition ?? 1e9) - (b.stopPosition ?? 1e9) ||
      compareText(a.lastName, b.lastName) ||
      compareText(a.firstName, b.firstName),
  );
  return {
    routeId: day.routeId,
    routeName: day.routeName,
    direction: day.direction,
    vehicle: day.vehicle,
    driverName: day.driverName,
    date,
    weekday: isoWeekday(date),
    runs,
    cancelled: Boolean(day.cancelled),
    holiday: why === "holiday",
    reason: why,
    version: day.version,
    printedVersion: day.printedVersion,
    riders: day.riders,
    ...seatsOf(day),
    students: list,
  };
}

/**
 * Where one student stands on the final list of `routeId` on `date`, in SQL, as `readFinalLists`
 * decides it for a day the route runs (a regular rider of that weekday: away when suspended that
 * day or by a confirmed change, else riding; otherwise joining by a confirmed change; else not on
 * it): `status` null when not on the list, `reason` the away's or the join's. For a verb that must
 * decide in the same batch as its write (a bus run's boarding: the run under way says the day runs).
 */
export function listStanding(ctx: SchoolCtx, routeId: number, date: string, studentId: SQLWrapper) {
  const regular = [
    eq(routeStudents.routeId, routeId),
    sql`${routeStudents.studentId} = ${studentId}`,
    runsOnWeekday(routeStudents.weekdays, date),
  ];
  const suspended = RouteStudents.pick(
    ctx,
    sql`CASE WHEN ${routeStudents.suspendedFrom} <= ${date} AND (${routeStudents.suspendedUntil} IS NULL OR ${routeStudents.suspendedUntil} >= ${date}) THEN coalesce(${routeStudents.suspensionReason}, 'Suspended') END`,
    ...regular,
  );
  const day = RouteAvailabilities.pick(
    ctx,
    routeAvailabilities.id,
    eq(routeAvailabilities.routeId, routeId),
    eq(routeAvailabilities.date, date),
  );
  const change = (kind: "join" | "away") => [
    sql`${routeAvailabilityStudents.routeAvailabilityId} IN ${day}`,
    sql`${routeAvailabilityStudents.studentId} = ${studentId}`,
    eq(routeAvailabilityStudents.kind, kind),
    eq(routeAvailabilityStudents.confirmed, true),
  ];
  const isRegular = RouteStudents.exists(ctx, ...regular);
  const away = RouteAvailabilityStudents.exists(ctx, ...change("away"));
  const status = sql<Status | null>`CASE WHEN ${isRegular} THEN CASE WHEN ${suspended} IS NOT NULL OR ${away} THEN 'away' ELSE 'riding' END WHEN ${RouteAvailabilityStudents.exists(ctx, ...change("join"))} THEN 'joining' END`;
  const reason = sql<
    string | null
  >`CASE WHEN ${isRegular} THEN coalesce(${suspended}, ${RouteAvailabilityStudents.pick(ctx, routeAvailabilityStudents.reason, ...change("away"))}) ELSE ${RouteAvailabilityStudents.pick(ctx, routeAvailabilityStudents.reason, ...change("join"))} END`;
  return { status, reason, rides: sql<boolean>`coalesce(${status} IN ('riding', 'joining'), 0)` };
}
