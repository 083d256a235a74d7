/**
 * What the rules read, for a set of asks, in ONE D1 batch: the school's zone and holiday cycles
 * around the dates, every schedule of the school (a few rows per level), the schedule and school
 * configurations, the students and all their guardian links, the caller's own parent profile
 * and delegations, the routes' days (seats, riders, vehicle, levels), the named stops,
 * trusted addresses, trusted people and pickup parents, the students' home routes, and their other
 * permissions those days. `resolve` then turns each ask into the rules' `Snapshot` (and the 404s of
 * ids that are not this school's, or a student who is not the caller's).
 */
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import {
  type AskedAs,
  ExitPermissions,
  exitPermissions,
  OPEN_EXIT_PERMISSION_STATUSES,
} from "../../db/schema/exit-permission";
import { Parents, parents } from "../../db/schema/parent";
import { ScheduleConfigurations, scheduleConfigurations } from "../../db/schema/schedule-configuration";
import { SchoolConfigurations, schoolConfigurations } from "../../db/schema/school-configuration";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteStops,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeStops,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { TrustedAddresses, trustedAddresses } from "../../db/schema/trusted-address";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, gte, isNull, lte, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { badRequest, notFound } from "../../lib/errors";
import type { Level } from "../../lib/levels";
import { m } from "../../lib/message";
import { calendarDate, dateIn, isoWeekday } from "../../lib/zoned-time";
import { dayFields, seatsOf } from "../route-availability/api";
import { calendarReads, isHoliday } from "../school-schedule/api";
import { ridesOn } from "../transport/api";
import type { ExitPermissionAsk } from "./api";
import { permissions } from "./permissions";
import type { Asker, Link, Snapshot } from "./rules";

/** Without a schedule configuration: no time limit before dismissal, four weeks ahead. */
export const DEFAULT_TIME_LIMIT = 0;
export const DEFAULT_WEEKS = 4;

const unique = <T>(values: readonly (T | undefined | null)[]) => [
  ...new Set(values.filter((v): v is T => v !== undefined && v !== null)),
];

/** A date the SQL may be given (an impossible date is the rules' `invalid-date`). */
const realDates = (asks: readonly ExitPermissionAsk[]) =>
  unique(asks.map((a) => a.date)).filter((d) => calendarDate(d));

/** The reads, queued on one batch. */
function queue(ctx: SchoolCtx, batch: Batch, asks: readonly ExitPermissionAsk[]) {
  const dates = realDates(asks);
  const sorted = [...dates].sort();
  const first = sorted[0] ?? "2000-01-01";
  const last = sorted[sorted.length - 1] ?? first;
  const studentIds = unique(asks.map((a) => a.studentId));
  const stopIds = unique(asks.map((a) => a.stopId));
  const addressIds = unique(asks.map((a) => a.trustedAddressId));
  const routeIds = unique(asks.map((a) => a.routeId));
  const self = ctx.userId ?? 0;
  const day = calendarReads(ctx, batch, first, last);
  // The routes a day is read for: those named, those of the named stops and of the addresses'
  // stops, and the students' own (their home route's day, for an `away`).
  const addressStops = TrustedAddresses.pick(
    ctx,
    trustedAddresses.routeStopId,
    inList(trustedAddresses.id, addressIds),
  );
  const routeSet = sql`(${inList(routes.id, routeIds)} OR ${routes.id} IN ${RouteStops.pick(
    ctx,
    routeStops.routeId,
    sql`(${inList(routeStops.id, stopIds)} OR ${routeStops.id} IN ${addressStops})`,
  )} OR ${routes.id} IN ${RouteStudents.pick(ctx, routeStudents.routeId, inList(routeStudents.studentId, studentIds))})`;
  const routeDay = (date: string) =>
    batch.read(
      Routes.select(ctx, { ...dayFields(ctx, date), levels: routes.levels, vehicleStatus: transports.status })
        .join(Transports, eq(transports.id, routes.transportId))
        .join(
          RouteAvailabilities,
          sql`${routeAvailabilities.routeId} = ${routes.id} AND ${routeAvailabilities.date} = ${date}`,
          "left",
        )
        .where(routeSet),
    );
  return {
    day,
    dates,
    config: batch.read(
      ScheduleConfigurations.select(ctx, {
        limit: scheduleConfigurations.permissionTimeLimit,
        weeks: scheduleConfigurations.permissionWeeksInAdvance,
      }).limit(1),
    ),
    years: batch.read(
      SchoolConfigurations.select(ctx, {
        start: schoolConfigurations.startDate,
        end: schoolConfigurations.endDate,
        auto: schoolConfigurations.autoConfirmExitPermissions,
      }).where(lte(schoolConfigurations.startDate, last), gte(schoolConfigurations.endDate, first)),
    ),
    students: batch.read(
      Students.select(ctx, {
        id: students.id,
        firstName: students.firstName,
        lastName: students.lastName,
        level: students.level,
        status: students.status,
      }).where(inList(students.id, studentIds), isNull(students.deletedAt)),
    ),
    links: batch.read(
      Guardians.select(ctx, {
        studentId: guardians.studentId,
        parentId: guardians.parentId,
        userId: parents.userId,
        canPickUp: guardians.canPickUp,
        canRequestChanges: guardians.canRequestChanges,
        restricted: guardians.restricted,
        restrictionFrom: guardians.restrictionFrom,
        restrictionUntil: guardians.restrictionUntil,
      })
        .join(Parents, eq(parents.id, guardians.parentId))
        .where(inList(guardians.studentId, studentIds)),
    ),
    me: batch.read(Parents.select(ctx, { id: parents.id }).where(eq(parents.userId, self)).limit(1)),
    delegations: batch.read(
      Delegates.select(ctx, {
        parentUserId: parents.userId,
        validFrom: delegates.validFrom,
        validUntil: delegates.validUntil,
        parentStatus: users.status,
      })
        .join(Parents, eq(parents.id, delegates.parentId))
        .join(Users, eq(users.id, parents.userId))
        .where(eq(delegates.userId, self)),
    ),
    routeDays: new Map(dates.map((d) => [d, routeDay(d)] as const)),
    stops: batch.read(
      RouteStops.select(ctx, { id: routeStops.id, routeId: routeStops.routeId }).where(
        sql`(${inList(routeStops.id, stopIds)} OR ${routeStops.id} IN ${addressStops})`,
      ),
    ),
    addresses: batch.read(
      TrustedAddresses.select(ctx, {
        id: trustedAddresses.id,
        studentId: trustedAddresses.studentId,
        status: trustedAddresses.status,
        routeStopId: trustedAddresses.routeStopId,
      }).where(inList(trustedAddresses.id, addressIds)),
    ),
    people: batch.read(
      TrustedPeople.select(ctx, {
        id: trustedPeople.id,
        studentId: trustedPeople.studentId,
        status: trustedPeople.status,
      }).where(inList(trustedPeople.id, unique(asks.map((a) => a.trustedPersonId)))),
    ),
    pickupParents: batch.read(
      Parents.select(ctx, { id: parents.id }).where(inList(parents.id, unique(asks.map((a) => a.pickupParentId)))),
    ),
    rides: batch.read(
      RouteStudents.select(ctx, {
        studentId: routeStudents.studentId,
        routeId: routeStudents.routeId,
        stopId: routeStudents.stopId,
        direction: routeStudents.direction,
        weekdays: routeStudents.weekdays,
        suspendedFrom: routeStudents.suspendedFrom,
        suspendedUntil: routeStudents.suspendedUntil,
      }).where(inList(routeStudents.studentId, studentIds)),
    ),
    others: batch.read(
      ExitPermissions.select(ctx, {
        id: exitPermissions.id,
        studentId: exitPermissions.studentId,
        date: exitPermissions.date,
        kind: exitPermissions.kind,
        status: exitPermissions.status,
      }).where(
        inList(exitPermissions.studentId, studentIds),
        inList(exitPermissions.date, dates),
        inList(exitPermissions.status, OPEN_EXIT_PERMISSION_STATUSES),
      ),
    ),
  };
}

/** The batch's answer, as plain rows. */
async function readAll(ctx: SchoolCtx, asks: readonly ExitPermissionAsk[], extra?: (b: Batch) => void) {
  const batch = new Batch(ctx);
  const q = queue(ctx, batch, asks);
  extra?.(batch);
  const r = await batch.commit();
  const [school] = r.get(q.day.school);
  if (!school) throw notFound(m`School ${ctx.schoolId ?? 0} not found`);
  return {
    school,
    cycles: r.get(q.day.cycles),
    schedules: r.get(q.day.schedules),
    config: r.get(q.config)[0],
    years: r.get(q.years),
    students: r.get(q.students),
    links: r.get(q.links),
    me: r.get(q.me)[0]?.id ?? null,
    delegations: r.get(q.delegations),
    routeDays: new Map([...q.routeDays].map(([d, slot]) => [d, r.get(slot)] as const)),
    stops: r.get(q.stops),
    addresses: r.get(q.addresses),
    people: r.get(q.people),
    pickupParents: r.get(q.pickupParents),
    rides: r.get(q.rides),
    others: r.get(q.others),
    results: r,
  };
}

export type Read = Awaited<ReturnType<typeof readAll>>;

/** An ask as this module makes it: an invited collector's family may have accepted already. */
export type Ask = ExitPermissionAsk & {
  /** The child's guardian accepted a collector of another family (the respond verb, or stored). */
  familyAccepted?: boolean;
  /**
   * An edit cleared the family's consent to a collector who is no guardian: the request waits for the
   * family again (`awaiting_family`), unless the one editing is the child's guardian (their edit is
   * the consent).
   */
  awaitingFamily?: boolean;
  /** The fixed permission a generated one comes from. */
  fixedId?: number;
  /**
   * Decide as this recorded asker rather than the caller (a fixed permission's days are its asker's,
   * never the school's): their guardian profile (null: the school) and their user.
   */
  as?: { parentId: number | null; userId: number | null };
};

/** One ask resolved: what the rules need, and what a write needs beyond it. */
export interface Resolved {
  ask: Ask;
  snapshot: Snapshot;
  student: { id: number; name: string };
  /** The guardian profile the asker asks as (null: staff). */
  parentId: number | null;
  /** The user who asks (the caller, or the recorded asker of `Ask.as`). */
  askedBy: number | null;
  /** How the asker stands to the student. */
  askedAs: AskedAs;
  /** The child's guardian edited a request of a collector who is no guardian: the edit is the family's consent. */
  consentGiven: boolean;
  /** The status a permission asked now starts in. */
  status: "awaiting_family" | "pending" | "confirmed";
  /** The target route of a route change (its id, stop and day), when it has one. */
  target: { routeId: number; stopId: number | null; transportId: number; rides: boolean } | null;
  /** The student's home routes that day (an `away` each when they go home another way). */
  homeRoutes: number[];
  /** The student's other open permissions that day. */
  others: { id: number; kind: string; status: string }[];
}

const toLink = (l: Read["links"][number]): Link => ({
  parentId: l.parentId,
  canPickUp: Boolean(l.canPickUp),
  canRequestChanges: Boolean(l.canRequestChanges),
  restricted: Boolean(l.restricted),
  restrictionFrom: l.restrictionFrom,
  restrictionUntil: l.restrictionUntil,
});

/** Whether the caller acts for the school (staff, or a job). */
export const isStaff = (ctx: SchoolCtx) => ctx.actor.type !== "user" || ctx.can(permissions.manage);

/** Who asks, relative to `studentId`; undefined: the student is not the caller's (404). */
function askerOf(ctx: SchoolCtx, read: Read, ask: Ask, today: string): Asker | undefined {
  if (ask.as !== undefined) {
    // A recorded asker: the school, or the guardian profile they asked as (a link that is gone says so).
    const { parentId } = ask.as;
    if (parentId === null) return { as: "staff" };
    const link = read.links.find((l) => l.studentId === ask.studentId && l.parentId === parentId);
    return link ? { as: "guardian", link: toLink(link) } : { as: "not-guardian", parentId };
  }
  if (isStaff(ctx)) return { as: "staff" };
  const links = read.links.filter((l) => l.studentId === ask.studentId);
  const ownLinks = links.filter((l) => l.userId === ctx.userId);
  const valid = read.delegations.filter(
    (d) => d.parentStatus !== "inactive" && d.validFrom <= today && today <= d.validUntil,
  );
  const delegated = links.filter((l) => valid.some((d) => d.parentUserId === l.userId));
  const usable = [...ownLinks, ...delegated].map(toLink);
  // The link that may ask first: not restricted that day, allowed to request changes.
  const best = usable.find((l) => l.canRequestChanges && !(l.restricted && isRestricted(l, ask.date))) ?? usable[0];
  if (best) return { as: "guardian", link: best };
  const outside = read.delegations.find((d) => links.some((l) => l.userId === d.parentUserId));
  if (outside) return { as: "delegate-outside", validFrom: outside.validFrom, validUntil: outside.validUntil };
  if (ask.invitationId !== undefined) return { as: "invitation" };
  // A parent collecting another family's child: an auto pickup by themself.
  if (
    ask.kind === "auto_pickup" &&
    read.me !== null &&
    ask.trustedPersonId === undefined &&
    (ask.pickupParentId === undefined || ask.pickupParentId === read.me)
  ) {
    return { as: "collector", parentId: read.me };
  }
  return undefined;
}

const isRestricted = (l: Link, date: string) =>
  l.restricted &&
  (l.restrictionFrom === null || date >= l.restrictionFrom) &&
  (l.restrictionUntil === null || date <= l.restrictionUntil);

/** Turns an ask into the rules' snapshot; throws the 404 of an id that is not this school's or not the caller's. */
export function resolve(ctx: SchoolCtx, read: Read, ask: Ask): Resolved {
  const now = ctx.deps.clock.now();
  const timeZone = read.school.timeZone;
  const today = dateIn(timeZone, now);
  const student = read.students.find((s) => s.id === ask.studentId);
  if (!student) throw notFound(m`Student ${ask.studentId} not found`);
  const asker = askerOf(ctx, read, ask, today);
  if (!asker) throw notFound(m`Student ${ask.studentId} not found`);
  const real = calendarDate(ask.date) !== undefined;
  const level: Level | null = student.level;
  const weekday = real ? isoWeekday(ask.date) : 0;
  const sched = read.schedules.find((s) => s.level === level && s.weekday === weekday);
  const snapshot: Snapshot = {
    now,
    timeZone,
    today,
    holiday: real && isHoliday(ask.date, timeZone, read.cycles),
    level,
    student: { id: student.id, active: student.status === "active" },
    schedule: sched ? { entry: sched.entry, dismissal: sched.dismissal } : null,
    permissionTimeLimit: read.config?.limit ?? DEFAULT_TIME_LIMIT,
    permissionWeeksInAdvance: read.config?.weeks ?? DEFAULT_WEEKS,
    asker,
  };
  const homeRoutes = read.rides
    .filter((r) => r.studentId === student.id && r.direction === "home" && ridesOn(r, ask.date))
    .map((r) => r.routeId);
  let target: Resolved["target"] = null;
  if (ask.kind === "route_change") target = routeTarget(read, ask, snapshot, homeRoutes);
  let waits = false;
  let consentGiven = false;
  if (ask.kind === "auto_pickup") {
    if (ask.trustedPersonId !== undefined) {
      const p = read.people.find((x) => x.id === ask.trustedPersonId);
      if (!p) throw notFound(m`Trusted person ${ask.trustedPersonId} not found`);
      snapshot.trustedPerson = { id: p.id, approved: p.status === "approved", ofStudent: p.studentId === student.id };
    } else {
      const parentId = ask.pickupParentId ?? read.me;
      if (parentId === null || parentId === undefined)
        throw badRequest(m`An auto pickup names who collects: pickupParentId or trustedPersonId`);
      if (ask.pickupParentId !== undefined && !read.pickupParents.some((p) => p.id === parentId))
        throw notFound(m`Parent ${parentId} not found`);
      const link = read.links.find((l) => l.studentId === student.id && l.parentId === parentId);
      // A collector who is no guardian needs the family's consent: given (stored, the answer, an
      // invitation), or given by this very edit when the child's guardian makes it; else, after an
      // edit cleared it, the request waits for the family again.
      const consent = ask.invitationId !== undefined || ask.familyAccepted === true;
      const familyEdits = ask.awaitingFamily === true && asker.as === "guardian";
      waits = ask.awaitingFamily === true && !familyEdits && link === undefined;
      consentGiven = familyEdits && link === undefined;
      snapshot.pickup = {
        parentId,
        link: link && toLink(link),
        invited: consent || familyEdits || waits,
        self: parentId === read.me,
      };
    }
  }
  const year = read.years.find((y) => y.start <= ask.date && ask.date <= y.end);
  const collecting = asker.as === "collector" && !ask.familyAccepted;
  const status = collecting || waits ? "awaiting_family" : year?.auto ? "confirmed" : "pending";
  const parentId =
    asker.as === "guardian"
      ? asker.link.parentId
      : asker.as === "collector" || asker.as === "not-guardian"
        ? asker.parentId
        : asker.as === "invitation"
          ? read.me
          : null;
  const askedAs: AskedAs =
    ask.invitationId !== undefined
      ? "invitation"
      : asker.as === "staff"
        ? "school"
        : asker.as === "collector"
          ? "collector"
          : asker.as === "invitation"
            ? "invitation"
            : "guardian";
  return {
    ask,
    snapshot,
    student: { id: student.id, name: `${student.firstName} ${student.lastName}` },
    parentId,
    askedBy: ask.as ? ask.as.userId : ctx.userId,
    askedAs,
    consentGiven,
    status,
    target,
    homeRoutes,
    // A collector learns nothing of another family's plans: only the child's own family and staff do.
    others:
      asker.as === "collector"
        ? []
        : read.others
            .filter((o) => o.studentId === student.id && o.date === ask.date)
            .map((o) => ({ id: o.id, kind: o.kind, status: o.status })),
  };
}

/** The target of a route change: the route (named, or the stop's, or the trusted address's stop's) and its day. */
function routeTarget(read: Read, ask: ExitPermissionAsk, snapshot: Snapshot, homeRoutes: number[]): Resolved["target"] {
  let stopId = ask.stopId ?? null;
  if (ask.trustedAddressId !== undefined) {
    const a = read.addresses.find((x) => x.id === ask.trustedAddressId);
    if (!a) throw notFound(m`Trusted address ${ask.trustedAddressId} not found`);
    snapshot.trustedAddress = { id: a.id, approved: a.status === "approved", ofStudent: a.studentId === ask.studentId };
    stopId = stopId ?? a.routeStopId;
  }
  const stop = stopId === null ? undefined : read.stops.find((s) => s.id === stopId);
  if (stopId !== null && !stop) throw notFound(m`Route stop ${stopId} not found`);
  // Another stop of their own route when only a stop is named.
  const routeId = ask.routeId ?? stop?.routeId ?? (ask.trustedAddressId === undefined ? homeRoutes[0] : undefined);
  if (routeId === undefined) return null;
  const day = (read.routeDays.get(ask.date) ?? []).find((d) => d.routeId === routeId);
  if (!day) {
    // The route exists in no day read: not this school's (or the date is not a real one).
    if (calendarDate(ask.date)) throw notFound(m`Route ${routeId} not found`);
    return null;
  }
  const rides = homeRoutes.includes(routeId);
  const { seats, available } = seatsOf(day);
  snapshot.route = {
    id: day.routeId,
    name: day.routeName,
    direction: day.direction,
    weekdays: day.weekdays,
    levels: day.levels,
    vehicleActive: day.vehicleStatus === "active",
    cancelled: Boolean(day.cancelled),
    seats,
    available,
    rides,
  };
  if (stop) snapshot.stop = { id: stop.id, onRoute: stop.routeId === routeId };
  return { routeId, stopId: stop?.id ?? null, transportId: day.transportId, rides };
}

/** Reads the snapshot of `asks` (one round trip; `extra` adds the caller's own reads to the batch). */
export async function readSnapshot(ctx: SchoolCtx, asks: readonly ExitPermissionAsk[], extra?: (b: Batch) => void) {
  return readAll(ctx, asks, extra);
}
