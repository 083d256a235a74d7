/**
 * A change of a fact decides again what depends on it. The verb that changes a fact (a guardian
 * restricted, removed or losing a capability; a trusted person or address withdrawn; a holiday
 * added; fewer seats on a route's day; students removed) asks `redecide` for statements to put in
 * ITS OWN batch, beside the change: one set-based UPDATE whose WHERE is the rule the change can
 * break, read against the facts as the batch leaves them, over the permissions still open
 * (`awaiting_family`, `pending`, `needs_review`, `confirmed`) from the school's today on. What no
 * longer holds becomes `withdrawn` with the rules it fails (`failures`, written in the language of
 * the request), its day changes are withdrawn and its seat given back (`withdrawEffects`), and the
 * family and the office are told (one notification). The summary, the driver's list and its PDF,
 * and the pickup pass read only confirmed permissions, so none of them shows it any more.
 *
 * One read first (the school's today, the permissions the change may reach, the facts they stood
 * on): it names whom to tell. The UPDATE does not depend on it: a permission asked between that read
 * and the batch is decided by the UPDATE all the same.
 */
import { Batch } from "../../db/batch";
import { ExitPermissions } from "../../db/schema/exit-permission";
import { SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { Guardians, guardians } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  Routes,
  routeAvailabilities,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { TrustedAddresses, trustedAddresses } from "../../db/schema/trusted-address";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { and, desc, eq, lte, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { type Message, m } from "../../lib/message";
import { type SchoolEvent, schoolEvent } from "../../lib/school-events";
import { addDays, dateIn, isoWeekday } from "../../lib/zoned-time";
import { notify, type Sending } from "../notification/api";
import { baseRiders } from "../route-availability/api";
import { isHoliday } from "../school-schedule/api";
import { planRoute, planRouteDay, planSchedule, planStudentStatus } from "./redecide-facts";
import {
  type Broken,
  type Candidate,
  candidates,
  E,
  type FactChange,
  failureJson,
  type LinkFacts,
  type Plan,
  type Planner,
  type Redecision,
  schoolToday,
  withdrawal,
} from "./redecide-kit";
import { planRiders } from "./redecide-rider";

export type { FactChange, LinkFacts, Redecision } from "./redecide-kit";

const link = Guardians.alias("redecided_link");
const g = link.table;

/** The link of the permission's student and the parent in `parent` (a column of the permission). */
const linkOf = (ctx: SchoolCtx, parent: SQLWrapper, ...more: SQL[]) =>
  sql`SELECT 1 FROM ${link.from} WHERE ${link.where(
    ctx,
    sql`${g.studentId} = ${E.studentId} AND ${g.parentId} = ${parent}${sql.join(
      more.map((c) => sql` AND ${c}`),
      sql``,
    )}`,
  )}`;

/** The link restricts the permission's date (bounds inclusive, open when null). */
const restrictedOnDate = sql`(${g.restricted} = 1 AND (${g.restrictionFrom} IS NULL OR ${g.restrictionFrom} <= ${E.date}) AND (${g.restrictionUntil} IS NULL OR ${g.restrictionUntil} >= ${E.date}))`;

/** Tells the families (guardians of the students, and whoever asked) and the office, once, when anything broke. */
function tell(ctx: SchoolCtx, withdrawn: readonly Candidate[], what: Message): Sending | undefined {
  const [first] = withdrawn;
  if (!first) return undefined;
  const dates = [...new Set(withdrawn.map((c) => c.date))].sort().join(", ");
  const title = m`An exit permission no longer holds`;
  const body = m`${what}: the exit permissions it touched (${dates}) were withdrawn. Ask again if needed.`;
  return notify(ctx, {
    category: "afternoon",
    title: { en: title.render("en"), es: title.render("es") },
    body: { en: body.render("en"), es: body.render("es") },
    ...(withdrawn.length === 1 ? { about: { entity: "exit-permission", id: first.id } } : {}),
    audience: {
      guardiansOf: [...new Set(withdrawn.map((c) => c.studentId))],
      users: [...new Set(withdrawn.flatMap((c) => (c.askedBy === null ? [] : [c.askedBy])))],
      roles: [BUILTIN_ROLES["school-admin"].id, BUILTIN_ROLES.staff.id],
    },
  });
}

/** The decision again after `change`: statements for the caller's batch, and the notification. */
export async function redecide(ctx: SchoolCtx, change: FactChange): Promise<Redecision> {
  const plan = await planOf(ctx, change);
  const sending = plan.withdrawn.length > 0 ? tell(ctx, plan.withdrawn, plan.why) : undefined;
  return {
    statements: [...plan.statements, ...(sending?.statements ?? [])],
    withdrawn: plan.withdrawn.length,
    dispatch: async () => {
      await sending?.dispatch();
      await schoolEvent(ctx, ...withdrawnEvents(plan.withdrawn));
    },
  };
}

/** The confirmed ones withdrawn are events (the live board, webhooks); one never confirmed changed no plan. */
const withdrawnEvents = (withdrawn: readonly Candidate[]): SchoolEvent[] =>
  withdrawn
    .filter((c) => c.status === "confirmed")
    .map(({ id, studentId, date, kind, routeId, stopId }) => ({
      type: "exit-permission.withdrawn",
      data: { exitPermission: { id, studentId, date, kind, routeId, stopId, status: "withdrawn" } },
      student: { id: studentId, date },
    }));

/** Whether a link (after the change) restricts `date`. */
const restricts = (l: LinkFacts, date: string) =>
  l.restricted &&
  (l.restrictionFrom === null || l.restrictionFrom <= date) &&
  (l.restrictionUntil === null || l.restrictionUntil >= date);

const planGuardian: Planner<"guardian"> = async (ctx, change) => {
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const current = batch.read(
    Guardians.select(ctx, {
      studentId: guardians.studentId,
      parentId: guardians.parentId,
      canPickUp: guardians.canPickUp,
      canRequestChanges: guardians.canRequestChanges,
      restricted: guardians.restricted,
      restrictionFrom: guardians.restrictionFrom,
      restrictionUntil: guardians.restrictionUntil,
    })
      .where(eq(guardians.id, change.linkId))
      .limit(1),
  );
  const of = (column: typeof guardians.studentId | typeof guardians.parentId) =>
    sql`(${Guardians.pick(ctx, column, eq(guardians.id, change.linkId))})`;
  const reach = batch.read(
    candidates(
      ctx,
      addDays(dateIn("UTC", ctx.deps.clock.now()), -1),
      sql`${E.studentId} = ${of(guardians.studentId)} AND (${E.pickupParentId} = ${of(guardians.parentId)} OR ${E.parentId} = ${of(guardians.parentId)})`,
    ),
  );
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const [was] = read.get(current);
  // No such link in this school: nothing stood on it (the caller answers its own 404).
  if (!was) return { statements: [], withdrawn: [], why: m`The school changed what a guardian may do` };
  const { studentId, parentId } = was;
  const names = sql`(${E.pickupParentId} = ${parentId} OR ${E.parentId} = ${parentId})`;
  const scope = and(eq(E.studentId, studentId), names) ?? names;
  const after: LinkFacts | null =
    change.link === null
      ? null
      : {
          canPickUp: Boolean(change.link.canPickUp ?? was.canPickUp),
          canRequestChanges: Boolean(change.link.canRequestChanges ?? was.canRequestChanges),
          restricted: Boolean(change.link.restricted ?? was.restricted),
          restrictionFrom:
            change.link.restrictionFrom === undefined ? was.restrictionFrom : change.link.restrictionFrom,
          restrictionUntil:
            change.link.restrictionUntil === undefined ? was.restrictionUntil : change.link.restrictionUntil,
        };
  // The rules, in JS over the read, to tell whom it touches; in SQL over the batch's own facts, to decide.
  const pickupBreaks = (c: Candidate) =>
    c.kind === "auto_pickup" &&
    c.pickupParentId === parentId &&
    (after
      ? !after.canPickUp || restricts(after, c.date)
      : c.status !== "awaiting_family" && c.acceptedAt === null && c.invitationId === null);
  const askBreaks = (c: Candidate) =>
    c.askedAs === "guardian" && c.parentId === parentId && (!after?.canRequestChanges || restricts(after, c.date));
  const withdrawn = read.get(reach).filter((c) => c.date >= today && (pickupBreaks(c) || askBreaks(c)));

  const restrictedUntil = m`restricted until ${"\u0001until\u0001"}`.render();
  const pickupReason = sql`coalesce((SELECT CASE WHEN ${restrictedOnDate} THEN CASE WHEN ${g.restrictionUntil} IS NULL THEN ${m`restricted`.render()} ELSE replace(${restrictedUntil}, ${"\u0001until\u0001"}, ${g.restrictionUntil}) END ELSE ${m`may not pick up`.render()} END FROM ${link.from} WHERE ${link.where(ctx, sql`${g.studentId} = ${E.studentId} AND ${g.parentId} = ${E.pickupParentId}`)}), ${m`not a guardian`.render()})`;
  const askReason = sql`coalesce((SELECT CASE WHEN ${restrictedOnDate} THEN ${m`restricted by the school`.render()} ELSE ${m`this guardian may not request changes`.render()} END FROM ${link.from} WHERE ${link.where(ctx, sql`${g.studentId} = ${E.studentId} AND ${g.parentId} = ${E.parentId}`)}), ${m`no longer a guardian of this student`.render()})`;
  const broken: Broken[] = [
    {
      when: sql`(${E.kind} = 'auto_pickup' AND ${E.pickupParentId} = ${parentId} AND (EXISTS (${linkOf(ctx, E.pickupParentId, sql`(${g.canPickUp} = 0 OR ${restrictedOnDate})`)}) OR (NOT EXISTS (${linkOf(ctx, E.pickupParentId)}) AND ${E.status} <> 'awaiting_family' AND ${E.acceptedAt} IS NULL AND ${E.invitationId} IS NULL)))`,
      failure: failureJson("pickup-not-allowed", { date: E.date, reason: pickupReason, pickupParentId: parentId }),
    },
    {
      when: sql`(${E.askedAs} = 'guardian' AND ${E.parentId} = ${parentId} AND NOT EXISTS (${linkOf(ctx, E.parentId, sql`${g.canRequestChanges} = 1`, sql`NOT ${restrictedOnDate}`)}))`,
      failure: failureJson("may-not-ask", { reason: askReason }),
    },
  ];
  const why =
    change.link === null ? m`A guardian was removed from the student` : m`The school changed what a guardian may do`;
  return { statements: withdrawal(ctx, today, scope, broken, why), withdrawn, why };
};

/** A permission that names a trusted person or address about to be withdrawn (placed BEFORE the delete). */
async function planNamed(
  ctx: SchoolCtx,
  code: "trusted-person-not-approved" | "trusted-address-not-approved",
  named: SQL,
  fact: Record<string, number>,
  why: Message,
): Promise<Plan> {
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), named));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const withdrawn = read.get(reach).filter((c) => c.date >= today);
  const broken = [{ when: named, failure: failureJson(code, fact) }];
  return { statements: withdrawal(ctx, today, named, broken, why), withdrawn, why };
}

const planTrustedPerson: Planner<"trusted-person"> = (ctx, { id }) =>
  // By the student's index: the permissions of the person's student that name them.
  planNamed(
    ctx,
    "trusted-person-not-approved",
    sql`(${E.studentId} = (${TrustedPeople.pick(ctx, trustedPeople.studentId, eq(trustedPeople.id, id))}) AND ${E.trustedPersonId} = ${id})`,
    { trustedPersonId: id },
    m`A trusted person was withdrawn`,
  );

const planTrustedAddress: Planner<"trusted-address"> = (ctx, { id }) =>
  planNamed(
    ctx,
    "trusted-address-not-approved",
    sql`(${E.studentId} = (${TrustedAddresses.pick(ctx, trustedAddresses.studentId, eq(trustedAddresses.id, id))}) AND ${E.trustedAddressId} = ${id})`,
    { trustedAddressId: id },
    m`A trusted address was withdrawn`,
  );

/** The most days a holiday is decided again for (a cycle over a year is a mistake the office corrects). */
const MAX_HOLIDAY_DAYS = 400;

const planHoliday: Planner<"holiday"> = async (ctx, { start, end }) => {
  const why = m`The school added a holiday`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  // Local dates are within a day of the UTC ones: read around them, keep those the cycle covers.
  const first = addDays(start.slice(0, 10), -1);
  const last = addDays(end.slice(0, 10), 1);
  const reach = batch.read(candidates(ctx, first, lte(E.date, last)));
  const read = await batch.commit();
  const timeZone = read.get(school)[0]?.timeZone ?? "UTC";
  const today = dateIn(timeZone, ctx.deps.clock.now());
  const cycle = [{ start, end }];
  const dates: string[] = [];
  for (let d = [first, today].sort()[1] ?? today; d <= last && dates.length < MAX_HOLIDAY_DAYS; d = addDays(d, 1)) {
    if (isHoliday(d, timeZone, cycle)) dates.push(d);
  }
  if (dates.length === 0) return { statements: [], withdrawn: [], why };
  const withdrawn = read.get(reach).filter((c) => dates.includes(c.date));
  const onDates = inList(E.date, dates);
  const broken = [{ when: onDates, failure: failureJson("not-school-day", { date: E.date, reason: "holiday" }) }];
  return { statements: withdrawal(ctx, today, onDates, broken, why), withdrawn, why };
};

const planStudents: Planner<"students"> = async (ctx, { studentIds }) => {
  const why = m`A student was removed from the school`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const theirs = inList(E.studentId, studentIds);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), theirs));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const withdrawn = read.get(reach).filter((c) => c.date >= today);
  const broken = [{ when: theirs, failure: failureJson("student-removed", { studentId: E.studentId }) }];
  return { statements: withdrawal(ctx, today, theirs, broken, why), withdrawn, why };
};

/**
 * Fewer seats on a route's day than its riders and the joins taken: the joins of confirmed
 * permissions beyond the seats lose theirs, the latest confirmed first (the earliest decision keeps
 * its seat). The route's own riders and the school's manual joins are the route-availability
 * module's to keep within the seats (it refuses seats below them).
 */
const planSeats: Planner<"seats"> = async (ctx, { routeId, dates, seats }) => {
  const why = m`A route has fewer seats that day`;
  const joins = RouteAvailabilityStudents.alias("redecided_join");
  const j = joins.table;
  const held = ExitPermissions.alias("redecided_held");
  const h = held.table;
  const vehicleSeats = sql`(${Transports.pick(ctx, transports.seats, eq(transports.id, routes.transportId))})`;
  const dayOf = (date: string) =>
    sql`(${RouteAvailabilities.pick(ctx, routeAvailabilities.id, eq(routeAvailabilities.routeId, routeId), eq(routeAvailabilities.date, date))})`;
  // One read for every date: the route's seats, riders and joins taken that day, and who holds the joins.
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reads = dates.map((date) => ({
    date,
    route: batch.read(
      Routes.select(ctx, {
        name: routes.name,
        vehicleSeats: sql<number>`${vehicleSeats}`,
        riders: baseRiders(ctx, routeId, date),
        taken: sql<number>`coalesce((${RouteAvailabilities.pick(ctx, routeAvailabilities.taken, eq(routeAvailabilities.routeId, routeId), eq(routeAvailabilities.date, date))}), 0)`,
      })
        .where(eq(routes.id, routeId))
        .limit(1),
    ),
    holders: batch.read(
      candidates(
        ctx,
        date,
        and(
          eq(E.date, date),
          sql`${E.id} IN (SELECT ${j.exitPermissionId} FROM ${joins.from} WHERE ${joins.where(ctx, sql`${j.routeAvailabilityId} = ${dayOf(date)} AND ${j.kind} = 'join' AND ${j.confirmed} = 1`)})`,
        ) ?? sql`0`,
      ).orderBy(desc(E.decidedAt), desc(E.id)),
    ),
  }));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const plan: Plan = { statements: [], withdrawn: [], why };
  for (const { date, route, holders } of reads) {
    const [r] = read.get(route);
    if (!r || date < today) continue;
    const offered = seats ?? r.vehicleSeats;
    const over = r.riders + r.taken - offered;
    if (over <= 0) continue;
    plan.withdrawn.push(...read.get(holders).slice(0, over));
    // In SQL, from the day as the batch leaves it: the latest confirmed joins beyond the seats.
    const day = dayOf(date);
    const ofDay = (column: typeof routeAvailabilities.taken | typeof routeAvailabilities.seats) =>
      sql`(${RouteAvailabilities.pick(ctx, column, eq(routeAvailabilities.id, day))})`;
    const excess = sql`max(0, ${baseRiders(ctx, routeId, date)} + coalesce(${ofDay(routeAvailabilities.taken)}, 0) - coalesce(${ofDay(routeAvailabilities.seats)}, ${offered}))`;
    const latest = sql`${E.id} IN (SELECT ${j.exitPermissionId} FROM ${joins.from} ${held.joinOn(ctx, sql`${h.id} = ${j.exitPermissionId}`)} WHERE ${joins.where(ctx, sql`${j.routeAvailabilityId} = ${day} AND ${j.kind} = 'join' AND ${j.confirmed} = 1`)} ORDER BY ${h.decidedAt} DESC, ${h.id} DESC LIMIT ${excess})`;
    const scope = and(eq(E.date, date), eq(E.routeId, routeId)) ?? sql`0`;
    const broken = [
      { when: latest, failure: failureJson("no-seat", { route: r.name, routeId, date, seats: offered }) },
    ];
    plan.statements.push(...withdrawal(ctx, today, scope, broken, why));
  }
  return plan;
};

/**
 * A student moved to another level: route changes to a route that does not serve it
 * (`route-not-for-level`), and every permission on a weekday the level has no schedule (or with no
 * level at all: `not-school-day`, `no-schedule`).
 */
const planLevel: Planner<"level"> = async (ctx, { studentId, level }) => {
  const why = m`A student moved to another level`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const theirs = eq(E.studentId, studentId);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), theirs));
  const served = batch.read(
    Routes.select(ctx, { id: routes.id, levels: routes.levels }).where(
      sql`${routes.id} IN (${ExitPermissions.pick(ctx, E.routeId, theirs, eq(E.kind, "route_change"))})`,
    ),
  );
  const days = batch.read(
    SchoolSchedules.select(ctx, { weekday: schoolSchedules.weekday }).where(
      level === null ? sql`0` : eq(schoolSchedules.level, level),
    ),
  );
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const weekdays = new Set(read.get(days).map((d) => d.weekday));
  const notServing = new Set(
    read
      .get(served)
      .filter((r) => r.levels.length > 0 && (level === null || !r.levels.includes(level)))
      .map((r) => r.id),
  );
  const withdrawn = read
    .get(reach)
    .filter(
      (c) =>
        c.date >= today &&
        (!weekdays.has(isoWeekday(c.date)) || (c.kind === "route_change" && notServing.has(c.routeId ?? 0))),
    );
  const route = Routes.alias("redecided_route");
  const r = route.table;
  const schedule = SchoolSchedules.alias("redecided_schedule");
  const sch = schedule.table;
  const weekdayOf = sql`(CAST(strftime('%w', ${E.date}) AS INTEGER) + 6) % 7 + 1`;
  const broken: Broken[] = [
    {
      when: sql`(${E.kind} = 'route_change' AND EXISTS (SELECT 1 FROM ${route.from} WHERE ${route.where(ctx, sql`${r.id} = ${E.routeId} AND json_array_length(${r.levels}) > 0 AND ${level === null ? sql`1` : sql`NOT EXISTS (SELECT 1 FROM json_each(${r.levels}) WHERE value = ${level})`}`)}))`,
      failure: failureJson("route-not-for-level", {
        route: sql`(SELECT ${r.name} FROM ${route.from} WHERE ${route.where(ctx, sql`${r.id} = ${E.routeId}`)})`,
        routeId: E.routeId,
        levels: sql`(SELECT group_concat(value, ', ') FROM ${route.from}, json_each(${r.levels}) WHERE ${route.where(ctx, sql`${r.id} = ${E.routeId}`)})`,
        level,
      }),
    },
    {
      when: sql`NOT EXISTS (SELECT 1 FROM ${schedule.from} WHERE ${schedule.where(ctx, sql`${level === null ? sql`0` : eq(sch.level, level)} AND ${sch.weekday} = ${weekdayOf}`)})`,
      failure: failureJson("not-school-day", { date: E.date, reason: "no-schedule", level }),
    },
  ];
  return { statements: withdrawal(ctx, today, theirs, broken, why), withdrawn, why };
};

function planOf(ctx: SchoolCtx, change: FactChange): Promise<Plan> {
  switch (change.fact) {
    case "route":
      return planRoute(ctx, change);
    case "schedule":
      return planSchedule(ctx, change);
    case "route-day":
      return planRouteDay(ctx, change);
    case "student-status":
      return planStudentStatus(ctx, change);
    case "level":
      return planLevel(ctx, change);
    case "guardian":
      return planGuardian(ctx, change);
    case "trusted-person":
      return planTrustedPerson(ctx, change);
    case "trusted-address":
      return planTrustedAddress(ctx, change);
    case "holiday":
      return planHoliday(ctx, change);
    case "students":
      return planStudents(ctx, change);
    case "seats":
      return planSeats(ctx, change);
    case "riders":
      return planRiders(ctx, change);
  }
}
