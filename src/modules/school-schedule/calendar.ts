/**
 * The school's calendar: whether a date is a school day, and whether a route runs on it. One rule,
 * reached by every area that asks (a route's seats, changes and lists, a family's routes, the day's
 * summary, a level's school day):
 *
 * - a holiday cycle that overlaps the school-local day makes it a holiday (the school's IANA zone
 *   decides where the day starts; a cycle ending at midnight has ended);
 * - otherwise a school with schedules has school on the weekdays they name (for a level, or a
 *   route's levels: the weekdays those levels' schedules name), and one without any schedule,
 *   Monday to Friday;
 * - a route runs on a school day of its levels that is one of its weekdays.
 *
 * Early release changes the times of a day, not whether there is school: see the level's schedule.
 */
import { z } from "@hono/zod-openapi";
import type { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import { SchoolHolidayCycles, schoolHolidayCycles } from "../../db/schema/holiday-cycle";
import { SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { eq, gt, lt } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import type { Level } from "../../lib/levels";
import { keptFor } from "../../lib/memo";
import { type Message, m } from "../../lib/message";
import { addDays, endOfDay, isoWeekday, zonedInstant } from "../../lib/zoned-time";

/** Why a date is not a school day. */
export type DayOff = "holiday" | "weekend" | "no-schedule";

/** Why a date is not a school day, as answers carry it. */
export const DayOffReason = z.enum(["holiday", "weekend", "no-schedule"]).nullable().openapi({
  description:
    "Why it is not a school day: a holiday cycle covers it, a weekend, or the school's schedules do not name that weekday (for the levels concerned); null on a school day",
  example: null,
});

/** Why a route does not run on a date: the school's day off, or a weekday the route does not run. */
export type RouteOff = DayOff | "not-running";

/** Why a route does not run on a date, as answers carry it. */
export const RouteOffReason = z.enum(["holiday", "weekend", "no-schedule", "not-running"]).nullable().openapi({
  description:
    "Why the route does not run that day: the school's day off for the levels it serves (`holiday`, `weekend`, `no-schedule`), or not one of its weekdays (`not-running`); null when it runs",
  example: null,
});

export interface Cycle {
  start: string;
  end: string;
}

export interface ScheduleRow {
  level: Level;
  weekday: number;
  entry: string;
  dismissal: string;
  afterSchoolEnd: string | null;
}

/** What the rule reads: the school's zone, its holiday cycles around the dates, its schedules. */
export interface Calendar {
  timeZone: string;
  cycles: readonly Cycle[];
  schedules: readonly ScheduleRow[];
}

export interface School {
  name: string;
  timeZone: string;
  logo: string | null;
}

/**
 * The reads of the calendar for the dates `first`..`last`, in the caller's batch (no round trip of
 * their own): the school (name, zone, logo), its holiday cycles that may cover those dates in any
 * zone, and its schedules (at most 4 levels x 7 weekdays).
 */
export function calendarReads(ctx: SchoolCtx, batch: Batch, first: string, last = first) {
  const school = batch.read(
    Schools.select(ctx, { name: schools.name, timeZone: schools.timeZone, logo: schools.logo })
      .where(eq(schools.id, ctx.schoolId))
      .limit(1),
  );
  // A UTC window a day wider each side than any zone's day: school_holiday_cycle_school_idx.
  const cycles = batch.read(
    SchoolHolidayCycles.select(ctx, { start: schoolHolidayCycles.startHolidays, end: schoolHolidayCycles.endHolidays })
      .where(lt(schoolHolidayCycles.startHolidays, `${addDays(last, 2)}T00:00:00.000Z`))
      .where(gt(schoolHolidayCycles.endHolidays, `${addDays(first, -1)}T00:00:00.000Z`)),
  );
  const schedules = batch.read(
    SchoolSchedules.select(ctx, {
      level: schoolSchedules.level,
      weekday: schoolSchedules.weekday,
      entry: schoolSchedules.entryTime,
      dismissal: schoolSchedules.dismissalTime,
      afterSchoolEnd: schoolSchedules.afterSchoolEndTime,
    }),
  );
  return { school, cycles, schedules };
}

type Reads = ReturnType<typeof calendarReads>;
type Results = Awaited<ReturnType<Batch["commit"]>>;

/** The school and its calendar from the batch's results (undefined school: not this school). */
export function calendarOf(results: Results, reads: Reads): { school: School | undefined; calendar: Calendar } {
  const [school] = results.get(reads.school);
  return {
    school,
    calendar: {
      timeZone: school?.timeZone ?? "UTC",
      cycles: results.get(reads.cycles),
      schedules: results.get(reads.schedules),
    },
  };
}

/** Whether a cycle covers the school-local day `date` (half-open: a cycle ending at midnight ends the day before). */
export function isHoliday(date: string, timeZone: string, cycles: readonly Cycle[]): boolean {
  const from = zonedInstant(date, "00:00", timeZone).getTime();
  const to = endOfDay(date, timeZone).getTime();
  return cycles.some((c) => Date.parse(c.start) < to && Date.parse(c.end) > from);
}

/** Each calendar's answers of `isHoliday` by date: a request asks one date for each of its rides. */
const holidays = new WeakMap<Calendar, Map<string, boolean>>();

function holidayIn(calendar: Calendar, date: string): boolean {
  return keptFor(holidays, calendar, date, () => isHoliday(date, calendar.timeZone, calendar.cycles));
}

/**
 * Why `date` is not a school day (for `levels`; none given: for any level), or null when it is one.
 */
export function dayOff(date: string, calendar: Calendar, levels: readonly Level[] = []): DayOff | null {
  if (holidayIn(calendar, date)) return "holiday";
  const weekday = isoWeekday(date);
  if (calendar.schedules.length === 0) return weekday <= 5 ? null : "weekend";
  const open = calendar.schedules.some(
    (s) => s.weekday === weekday && (levels.length === 0 || levels.includes(s.level)),
  );
  if (open) return null;
  return weekday >= 6 ? "weekend" : "no-schedule";
}

/** Why a route (its weekday mask and levels) does not run on `date`, or null when it runs. */
export function routeOff(
  date: string,
  calendar: Calendar,
  route: { weekdays: number; levels: readonly Level[] },
): RouteOff | null {
  const off = dayOff(date, calendar, route.levels);
  if (off) return off;
  return (route.weekdays & (1 << (isoWeekday(date) - 1))) === 0 ? "not-running" : null;
}

/** A sentence for a route that does not run: the 422 of a write on that day, the empty list's reason. */
export function routeOffMessage(why: RouteOff, routeName: string, date: string): Message {
  switch (why) {
    case "holiday":
      return m`${date} is a school holiday: no route runs`;
    case "weekend":
    case "no-schedule":
      return m`${date} is not a school day for the levels route ${routeName} serves: it does not run`;
    case "not-running":
      return m`Route ${routeName} does not run on ${date} (weekday ${isoWeekday(date)})`;
  }
}
