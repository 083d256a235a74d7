/**
 * Re-decisions of the facts of the day's frame: a route's weekdays, levels or direction; a
 * level's schedule on a weekday; a student's status. Each as `./redecide.ts` says.
 */
import { Batch } from "../../db/batch";
import { ExitPermissions } from "../../db/schema/exit-permission";
import { SchoolSchedules } from "../../db/schema/school-schedule";
import { Students, students } from "../../db/schema/student";
import { RouteAvailabilities, Routes, routeAvailabilities, routes } from "../../db/schema/transport";
import { and, type Column, eq, type SQL, sql } from "../../db/sql";
import { m } from "../../lib/message";
import { addDays, dateIn, isoWeekday } from "../../lib/zoned-time";
import { type Broken, candidates, E, failureJson, type Planner, schoolToday, withdrawal } from "./redecide-kit";

/** The ISO weekday (1 Monday .. 7 Sunday) of the permission's date, in SQL. */
export const weekdayOfPermission = sql`((CAST(strftime('%w', ${E.date}) AS INTEGER) + 6) % 7 + 1)`;

/**
 * A route's weekdays, levels or direction changed: the route changes to it from today on that it
 * no longer allows (`route-not-running` on a weekday it dropped, `route-not-for-level` for a
 * student of a level it no longer serves, `route-not-home`), read against the route as the batch
 * leaves it. Their seats come back.
 */
export const planRoute: Planner<"route"> = async (ctx, { routeId, weekdays, levels, direction }) => {
  const why = m`The school changed a route`;
  const scope = and(eq(E.kind, "route_change"), eq(E.routeId, routeId)) ?? sql`0`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), scope));
  const route = batch.read(Routes.select(ctx, { name: routes.name }).where(eq(routes.id, routeId)).limit(1));
  const levelsOf = batch.read(
    Students.select(ctx, { id: students.id, level: students.level }).where(
      sql`${students.id} IN (${ExitPermissions.pick(ctx, E.studentId, scope)})`,
    ),
  );
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const name = read.get(route)[0]?.name;
  if (name === undefined) return { statements: [], withdrawn: [], why };
  const levelOf = new Map(read.get(levelsOf).map((st) => [st.id, st.level]));
  const withdrawn = read.get(reach).filter((c) => {
    if (c.date < today) return false;
    const level = levelOf.get(c.studentId) ?? null;
    return (
      !weekdays.includes(isoWeekday(c.date)) ||
      direction !== "home" ||
      (levels.length > 0 && (level === null || !levels.includes(level)))
    );
  });
  const rt = Routes.alias("redecided_route");
  const r = rt.table;
  const ofRoute = (what: SQL | Column) =>
    sql`(SELECT ${what} FROM ${rt.from} WHERE ${rt.where(ctx, sql`${r.id} = ${E.routeId}`)})`;
  const level = sql`(${Students.pick(ctx, students.level, eq(students.id, E.studentId))})`;
  const facts = { route: name, routeId, date: E.date };
  const broken: Broken[] = [
    {
      when: sql`(${ofRoute(r.weekdays)} & (1 << (${weekdayOfPermission} - 1))) = 0`,
      failure: failureJson("route-not-running", facts),
    },
    {
      when: sql`${ofRoute(r.direction)} <> 'home'`,
      failure: failureJson("route-not-home", facts),
    },
    {
      when: sql`EXISTS (SELECT 1 FROM ${rt.from} WHERE ${rt.where(ctx, sql`${r.id} = ${E.routeId} AND json_array_length(${r.levels}) > 0 AND NOT EXISTS (SELECT 1 FROM json_each(${r.levels}) WHERE value = ${level})`)})`,
      failure: failureJson("route-not-for-level", {
        ...facts,
        levels: sql`(SELECT group_concat(value, ', ') FROM ${rt.from}, json_each(${r.levels}) WHERE ${rt.where(ctx, sql`${r.id} = ${E.routeId}`)})`,
        level,
      }),
    },
  ];
  return { statements: withdrawal(ctx, today, scope, broken, why), withdrawn, why };
};

/**
 * A level's schedule on a weekday removed (or moved away): the permissions from today on of the
 * level's students on that weekday, when their level has no schedule that weekday any more
 * (`not-school-day`, `no-schedule`).
 */
export const planSchedule: Planner<"schedule"> = async (ctx, { level, weekday }) => {
  const why = m`The school changed its schedule`;
  const ofLevel = sql`${E.studentId} IN (${Students.pick(ctx, students.id, eq(students.level, level))})`;
  const scope = sql`(${ofLevel} AND ${weekdayOfPermission} = ${weekday})`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), scope));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  // One schedule per level and weekday: once removed, none is left for it.
  const withdrawn = read.get(reach).filter((c) => c.date >= today);
  const schedule = SchoolSchedules.alias("redecided_schedule");
  const sch = schedule.table;
  const broken: Broken[] = [
    {
      when: sql`NOT EXISTS (SELECT 1 FROM ${schedule.from} WHERE ${schedule.where(ctx, sql`${sch.level} = ${level} AND ${sch.weekday} = ${weekday}`)})`,
      failure: failureJson("not-school-day", { date: E.date, reason: "no-schedule", level }),
    },
  ];
  return { statements: withdrawal(ctx, today, scope, broken, why), withdrawn, why };
};

/** A student made inactive or graduated: every open permission from today on (`student-not-active`). */
export const planStudentStatus: Planner<"student-status"> = async (ctx, { studentId }) => {
  const why = m`A student is no longer active`;
  const theirs = eq(E.studentId, studentId);
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reach = batch.read(candidates(ctx, addDays(dateIn("UTC", ctx.deps.clock.now()), -1), theirs));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const withdrawn = read.get(reach).filter((c) => c.date >= today);
  const broken: Broken[] = [
    {
      when: sql`(${Students.pick(ctx, students.status, eq(students.id, E.studentId))}) <> 'active'`,
      failure: failureJson("student-not-active", { studentId: E.studentId }),
    },
  ];
  return { statements: withdrawal(ctx, today, theirs, broken, why), withdrawn, why };
};

/** A route cancelled on a date: the route changes to it that day (`route-cancelled`). */
export const planRouteDay: Planner<"route-day"> = async (ctx, { routeId, date }) => {
  const why = m`The school cancelled a route for a day`;
  const scope = and(eq(E.kind, "route_change"), eq(E.routeId, routeId), eq(E.date, date)) ?? sql`0`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const reach = batch.read(candidates(ctx, date, scope));
  const route = batch.read(Routes.select(ctx, { name: routes.name }).where(eq(routes.id, routeId)).limit(1));
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const name = read.get(route)[0]?.name;
  if (name === undefined || date < today) return { statements: [], withdrawn: [], why };
  const cancelled = sql`(${RouteAvailabilities.pick(ctx, routeAvailabilities.cancelled, eq(routeAvailabilities.routeId, routeId), eq(routeAvailabilities.date, date))}) = 1`;
  const broken: Broken[] = [
    { when: cancelled, failure: failureJson("route-cancelled", { route: name, routeId, date }) },
  ];
  return { statements: withdrawal(ctx, today, scope, broken, why), withdrawn: read.get(reach), why };
};
