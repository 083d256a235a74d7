/**
 * Who may ride a route: an active student of a level the route serves (a route with no levels
 * serves every level). The one rule every write that puts a student on a bus reaches: a rider's
 * create and update, the import, and a day's join.
 */
import { unprocessable } from "../../lib/errors";
import type { Level } from "../../lib/levels";
import { type Message, m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { calendarDate, isoWeekday } from "../../lib/zoned-time";

export interface RouteLevels {
  name: string;
  levels: readonly Level[];
}

export interface Candidate {
  id: number;
  name: string;
  level: Level | null;
  status: string;
}

/** Why `student` may not ride `route`, or undefined when they may. */
export function whyNotRider(route: RouteLevels, student: Candidate): Message | undefined {
  if (student.status !== "active")
    return m`Student ${student.id} is ${stateName(student.status)}; only active students ride routes`;
  if (route.levels.length > 0 && (student.level === null || !route.levels.includes(student.level))) {
    const levels = route.levels.join(", ");
    return student.level === null
      ? m`Route '${route.name}' serves ${levels}; ${student.name} is of no level`
      : m`Route '${route.name}' serves ${levels}; ${student.name} is ${student.level}`;
  }
  return undefined;
}

/** The 422 of `whyNotRider`. */
export function mayRide(route: RouteLevels, student: Candidate): void {
  const why = whyNotRider(route, student);
  if (why) throw unprocessable(why);
}

/** A rider's days: the weekdays they ride and a suspension (an open end: until the school lifts it). */
export interface RiderDays {
  weekdays: number;
  suspendedFrom: string | null;
  suspendedUntil: string | null;
}

/** Whether the rider is suspended on `date` (the SQL of the same rule: route-availability's `riding`). */
export const suspendedOn = (rs: RiderDays, date: string): boolean =>
  rs.suspendedFrom !== null && rs.suspendedFrom <= date && (rs.suspendedUntil === null || rs.suspendedUntil >= date);

/** Whether a route student rides on `date` by its own days (weekday bit, not suspended). */
export function ridesOn(rs: RiderDays, date: string): boolean {
  if (!calendarDate(date) || (rs.weekdays & (1 << (isoWeekday(date) - 1))) === 0) return false;
  return !suspendedOn(rs, date);
}
