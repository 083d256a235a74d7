/**
 * The day's summary: how every active student of the school goes home on a date, with the totals
 * per way, and the authorizations still waiting for a decision. The summary is a page of students
 * (by last name) and the totals of every student the filters keep, read in one D1 round trip with
 * the school's zone, its holiday cycles and the day's schedules (two when no date is given: the
 * school's today needs its zone first).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Users } from "../../db/schema/core";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { GroupStudents, groupStudents } from "../../db/schema/group";
import { SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { Students, students } from "../../db/schema/student";
import { and, asc, eq, type SQL, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { notFound } from "../../lib/errors";
import { LEVELS } from "../../lib/levels";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { Listing, type PageInput, PageQuery, pageOf } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { isoWeekday, zonedInstant } from "../../lib/zoned-time";
import { calendarOf, calendarReads, dayOff } from "../school-schedule/api";
import { schoolToday } from "../transport/api";
import { copyOf, copyTable, identity } from "../user/api";
import { permissions } from "./permissions";
import { readTotals, totalsOf } from "./totals";
import {
  collectorOf,
  countFields,
  dayDetail,
  destinationOf,
  onRoute,
  permissionDetail,
  studentDays,
  type Targets,
  usualRouteOf,
  WAYS,
  type Way,
  wayOf,
  withTargets,
  withUsualStop,
} from "./ways";

const Day = schoolDate("A school-local date; default the school's today", "2027-03-01");

const RouteStop = z
  .object({
    id: z.number().int().openapi({ description: "The route's id" }),
    name: z.string().openapi({ description: "The route's name" }),
    stopId: z.number().int().nullable(),
    stopName: z.string().nullable(),
    stopTime: z.string().nullable().openapi({ description: "School-local HH:mm" }),
  })
  .openapi("SummaryRoute", { description: "A route home and the stop where the student leaves it" });

const Collector = z
  .object({
    kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian (parent) or an approved trusted person" }),
    id: z.number().int().openapi({ description: "The parent profile, or the trusted person" }),
    name: z.string().openapi({ description: "The collector's name" }),
    relationship: z.string().nullable(),
  })
  .openapi("PickupCollector", { description: "Who collects a child on an auto pickup" });

const PermissionRef = z
  .object({
    id: z.number().int(),
    kind: z
      .enum(["route_change", "no_after_school", "auto_pickup", "absence"])
      .openapi({ description: "The permission's kind" }),
    reason: z.string().nullable().openapi({ description: "Why, as the family or the school wrote it" }),
    fixedId: z.number().int().nullable().openapi({ description: "The fixed (weekly) permission it was made from" }),
    route: orNull(RouteStop).openapi({ description: "A route change's route and stop" }),
    trustedAddress: z
      .object({
        id: z.number().int().openapi({ description: "The trusted address's id" }),
        address: z.string().openapi({ description: "The address, as one line" }),
      })
      .nullable()
      .openapi({ description: "A route change to a trusted address" }),
    collector: orNull(Collector).openapi({ description: "Who collects the child on an auto pickup" }),
  })
  .openapi("SummaryPermission", { description: "The confirmed permission that changes a student's usual way home" });

const SummaryStudent = z
  .object({
    studentId: z.number().int(),
    firstName: z.string(),
    lastName: z.string(),
    level: z.enum(LEVELS).nullable(),
    way: z.enum(WAYS).openapi({
      description:
        "route: their usual home route; family: no route that day (collected by the family); else the confirmed permission's kind",
    }),
    route: orNull(RouteStop).openapi({ description: "The route they ride home that day, or null" }),
    usualRoute: orNull(
      RouteStop.extend({
        suspended: z.boolean().openapi({ description: "Whether their ride is suspended that day" }),
        cancelled: z.boolean().openapi({
          description:
            "The school cancelled the route that day (route availability `cancelled`): it does not run, the office arranges their way home",
        }),
      }),
    ).openapi({ description: "Their home route on that weekday, whether or not they ride it that day" }),
    permission: orNull(PermissionRef).openapi({
      description: "The confirmed permission that changes the usual way",
    }),
    dismissal: z.string().nullable().openapi({ description: "The level's dismissal that day, school-local HH:mm" }),
  })
  .openapi("SummaryStudent");

const Count = z.number().int();
const Counts = z
  .object({
    route: Count.openapi({ description: "Students going home on their usual route" }),
    family: Count.openapi({ description: "Students with no route that day, collected by their family" }),
    route_change: Count.openapi({ description: "Students on another route or to a trusted address" }),
    auto_pickup: Count.openapi({ description: "Students collected by a guardian or a trusted person" }),
    no_after_school: Count.openapi({ description: "Students who skip the after-school program" }),
    absence: Count.openapi({ description: "Students absent that day" }),
  })
  .openapi("SummaryCounts");

const Summary = pageOf(SummaryStudent, "TransportationSummaryPage").extend({
  date: z.iso.date().openapi({ description: "The school-local date summarised" }),
  weekday: z.number().int(),
  schoolDay: z.boolean().openapi({ description: "false on a holiday or a weekday without school: nobody goes home" }),
  holiday: z.boolean().openapi({ description: "Whether the date is in one of the school's holiday cycles" }),
  counts: Counts.openapi({ description: "Students per way, over every student the filters (but `way`) keep" }),
});

const summaryRoute = defineRoute({
  method: "get",
  path: "/api/v1/transportation-summary",
  tag: "Transport",
  operationId: "getTransportationSummary",
  summary: "How every student goes home on a date: their way, the totals per way (paginated, by last name)",
  access: permissions.read,
  module: "exit-permissions",
  request: {
    query: z.strictObject({
      ...PageQuery.shape,
      date: Day.optional(),
      level: z.enum(LEVELS).optional().openapi({ description: "Only students of this level" }),
      group: idFilter("Only the students of this group"),
      routeId: idFilter("Only students whose usual home route, or whose route change, is this route"),
      way: z.enum(WAYS).optional().openapi({ description: "Only students going home this way" }),
    }),
  },
  responses: { 200: json(Summary, "The day's summary") },
  extensions: { "x-filters": { level: "elementary", group: "1", routeId: "1", way: "route", date: "2027-03-01" } },
});

class SummaryListing<T> extends Listing<T> {
  constructor(
    data: T[],
    total: number,
    page: PageInput,
    readonly extra: {
      date: string;
      weekday: number;
      schoolDay: boolean;
      holiday: boolean;
      counts: Record<Way, number>;
    },
  ) {
    super(data, total, page);
  }
  override envelope(url: string) {
    return { ...super.envelope(url), ...this.extra };
  }
}

/**
 * The students at school that weekday by the school's calendar: of a level its schedules name that
 * weekday (a school without schedules, or a student without a level: every one). Both subqueries
 * are uncorrelated: SQLite runs each once per statement.
 */
function atSchool(ctx: SchoolCtx, weekday: number): SQL {
  const levels = SchoolSchedules.pick(ctx, schoolSchedules.level, eq(schoolSchedules.weekday, weekday));
  const any = SchoolSchedules.exists(ctx);
  return sql`(+${students.level} IS NULL OR +${students.level} IN ${levels} OR NOT ${any})`;
}

const zeroCounts = (): Record<Way, number> => ({
  route: 0,
  family: 0,
  route_change: 0,
  auto_pickup: 0,
  no_after_school: 0,
  absence: 0,
});

export async function getTransportationSummary(ctx: SchoolCtx, { query }: InputOf<typeof summaryRoute>) {
  const date = query.date ?? (await schoolToday(ctx));
  const weekday = isoWeekday(date);
  const filters: (SQL | undefined)[] = [
    atSchool(ctx, weekday),
    // Unary + keeps the level out of the index choice: the order's index (school, last name) serves.
    query.level === undefined ? undefined : sql`+${students.level} = ${query.level}`,
    query.group === undefined
      ? undefined
      : sql`EXISTS ${GroupStudents.select(ctx, { one: sql`1` }).where(eq(groupStudents.groupId, query.group), eq(groupStudents.studentId, students.id))}`,
    query.routeId === undefined ? undefined : onRoute(query.routeId),
  ];
  const way = wayOf(date);
  const batch = new Batch(ctx);
  const day = calendarReads(ctx, batch, date);
  const page = batch.read(
    withTargets(ctx, withUsualStop(studentDays(ctx, date, dayDetail(ctx, date))))
      .where(...filters, query.way === undefined ? undefined : sql`${way} = ${query.way}`)
      .orderBy(asc(students.lastName), asc(students.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  // Set by set without a route filter (./totals.ts); student by student with one.
  const totals =
    query.routeId === undefined
      ? { sets: readTotals(ctx, batch, date, filters) }
      : { each: batch.read(studentDays(ctx, date, countFields(date)).where(...filters)) };
  const results = await batch.commit();
  const { school, calendar } = calendarOf(results, day);
  if (!school) throw notFound(m`School ${ctx.schoolId} not found`);
  // The school's calendar (any level): a holiday, a weekend, or a weekday no schedule names is no school.
  const off = dayOff(date, calendar);
  const holiday = off === "holiday";
  const schoolDay = off === null;
  const dismissal = new Map(calendar.schedules.filter((s) => s.weekday === weekday).map((s) => [s.level, s.dismissal]));
  if (!schoolDay) return new SummaryListing([], 0, query, { date, weekday, schoolDay, holiday, counts: zeroCounts() });
  const counts = zeroCounts();
  const [sums] = totals.each ? results.get(totals.each) : [];
  if (totals.sets) Object.assign(counts, totalsOf(results, totals.sets));
  else if (sums) {
    const { total: all, ...ways } = sums;
    Object.assign(counts, ways);
    counts.family = all - WAYS.reduce((n, w) => (w === "family" ? n : n + counts[w]), 0);
  }
  const total = query.way === undefined ? WAYS.reduce((n, w) => n + counts[w], 0) : counts[query.way];
  const data = results.get(page).map((r) => {
    const usual = usualRouteOf(r);
    const permission = permissionOf(r);
    const route = r.way === "route" && usual ? usual : r.way === "route_change" ? (permission?.route ?? null) : null;
    return {
      studentId: r.studentId,
      firstName: r.firstName,
      lastName: r.lastName,
      level: r.level,
      way: r.way,
      route,
      usualRoute: usual ? { ...usual, suspended: Boolean(r.suspended), cancelled: Boolean(r.cancelled) } : null,
      permission,
      dismissal: (r.level && dismissal.get(r.level)) ?? null,
    };
  });
  return new SummaryListing(data, total, query, { date, weekday, schoolDay, holiday, counts });
}

/** The permission of a row with its targets, or null. */
function permissionOf(r: Targets) {
  if (r.permissionId === null || r.kind === null) return null;
  const kind = PermissionRef.shape.kind.parse(r.kind);
  return {
    id: r.permissionId,
    kind,
    reason: r.reason,
    fixedId: r.fixedId,
    ...destinationOf(r),
    collector: kind === "auto_pickup" ? collectorOf(r) : null,
  };
}

export const getTransportationSummaryOperation = operation(summaryRoute, getTransportationSummary);

// --- pending ---

const askerUser = Users.alias("asker_user");
const askerCopy = copyTable("asker_copy");
const askerName = identity(askerUser.table, askerCopy.table);

const PendingItem = PermissionRef.extend({
  status: z.enum(["awaiting_family", "pending", "needs_review"]).openapi({
    description:
      "awaiting_family: another family must answer first; pending: the school decides; needs_review: a fixed permission's day the rules refused on that day (see failures)",
  }),
  failures: z
    .array(
      z
        .looseObject({
          code: z.string().openapi({ example: "too-late", description: "The rule, stable across versions" }),
          message: z.string().openapi({ description: "Why, as written when the day was made" }),
        })
        .openapi({
          description: "A failed rule with its facts (which facts depends on the rule: docs/domain.md)",
          example: {
            code: "too-late",
            message: "Too late: changes for 2026-11-27 had to arrive by 2026-11-27T13:00:00-06:00 (dismissal 15:00)",
            date: "2026-11-27",
            deadline: "2026-11-27T13:00:00-06:00",
            dismissal: "15:00",
          },
        }),
    )
    .nullable()
    .openapi({ description: "needs_review: the rules it fails, as written when the day was made; null otherwise" }),
  date: z.iso.date().openapi({ description: "The school-local day it is for" }),
  student: z
    .object({
      id: z.number().int(),
      firstName: z.string(),
      lastName: z.string(),
      level: z.enum(LEVELS).nullable(),
    })
    .openapi({ description: "The student it is for" }),
  askedBy: z
    .object({
      userId: z.number().int(),
      name: z.string().openapi({ description: "Their name, as the school knows them" }),
      parentId: z.number().int().nullable(),
    })
    .nullable()
    .openapi({ description: "Who asked (parentId: the guardian profile they asked as; null for staff)" }),
  askedAt: z.string().openapi({ description: "When it was asked (ISO 8601)" }),
  dismissal: z
    .object({
      local: z.string().openapi({ description: "School-local HH:mm" }),
      at: z.string().openapi({ description: "The same instant in ISO 8601 with the school's offset" }),
    })
    .nullable()
    .openapi({ description: "The student's level's dismissal that day: when the answer is needed by" }),
}).openapi("PendingAuthorization");

const pendingRoute = defineRoute({
  method: "get",
  path: "/api/v1/transportation-summary/pending",
  tag: "Transport",
  operationId: "listPendingAuthorizations",
  summary: "The exit permissions of a date still waiting for a decision (pending or awaiting the family), oldest first",
  access: permissions.read,
  module: "exit-permissions",
  request: { query: z.strictObject({ ...PageQuery.shape, date: Day.optional() }) },
  responses: { 200: json(pageOf(PendingItem, "PendingAuthorizationPage"), "A page of pending authorizations") },
  extensions: { "x-filters": { date: "2027-03-01" } },
});

/** Waiting for a decision: the literal list names the partial index `exit_permission_pending_idx`. */
const waiting = sql`${exitPermissions.status} IN ('pending', 'awaiting_family', 'needs_review')`;

export async function listPendingAuthorizations(ctx: SchoolCtx, { query }: InputOf<typeof pendingRoute>) {
  const date = query.date ?? (await schoolToday(ctx));
  const where = and(eq(exitPermissions.date, date), waiting);
  const batch = new Batch(ctx);
  const day = calendarReads(ctx, batch, date);
  const rows = batch.read(
    withTargets(
      ctx,
      ExitPermissions.select(ctx, {
        ...permissionDetail(),
        status: exitPermissions.status,
        failures: exitPermissions.failures,
        date: exitPermissions.date,
        studentId: students.id,
        firstName: students.firstName,
        lastName: students.lastName,
        level: students.level,
        askedBy: exitPermissions.askedBy,
        askerParentId: exitPermissions.parentId,
        askerFirstName: askerName.firstName,
        askerLastName: askerName.lastName,
        askedAt: exitPermissions.createdAt,
      })
        .join(Students, eq(students.id, exitPermissions.studentId))
        .join(askerUser, eq(askerUser.table.id, exitPermissions.askedBy), "left")
        .join(askerCopy, copyOf(askerCopy, askerUser.table.id, ctx.schoolId), "left"),
    )
      .where(where, sql`${students.deletedAt} IS NULL`)
      .orderBy(asc(exitPermissions.createdAt), asc(exitPermissions.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(ExitPermissions.select(ctx).where(where).count());
  const results = await batch.commit();
  const { school, calendar } = calendarOf(results, day);
  if (!school) throw notFound(m`School ${ctx.schoolId} not found`);
  const weekday = isoWeekday(date);
  const dismissal = new Map(calendar.schedules.filter((s) => s.weekday === weekday).map((s) => [s.level, s.dismissal]));
  const data = results.get(rows).flatMap((r) => {
    const local = r.level ? dismissal.get(r.level) : undefined;
    const permission = permissionOf(r);
    if (!permission) return [];
    return {
      ...permission,
      status: r.status === "awaiting_family" || r.status === "needs_review" ? r.status : ("pending" as const),
      failures: r.failures ?? null,
      date: r.date,
      student: { id: r.studentId, firstName: r.firstName, lastName: r.lastName, level: r.level },
      askedBy:
        r.askedBy === null
          ? null
          : {
              userId: r.askedBy,
              name: `${r.askerFirstName ?? ""} ${r.askerLastName ?? ""}`.trim(),
              parentId: r.askerParentId,
            },
      askedAt: r.askedAt,
      dismissal: local ? { local, at: zonedInstant(date, local, school.timeZone).toISOString() } : null,
    };
  });
  return new Listing(data, results.get(total)[0]?.n ?? 0, query);
}

export const listPendingAuthorizationsOperation = operation(pendingRoute, listPendingAuthorizations);
