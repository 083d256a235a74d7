/**
 * School schedules as other areas use them: "the schedule of level L on date D" with its times as
 * both school-local `HH:mm` and UTC instants of that date (exit permissions' cut-offs, dismissal
 * lists, reminders). Holidays are not considered here: a holiday cycle says whether D is a school
 * day at all.
 */
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import { type Level, SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { isoWeekday, zonedInstant } from "../../lib/zoned-time";

export interface ScheduledTime {
  /** School-local time of day, `HH:mm`. */
  local: string;
  /** The instant it is on the date asked for, ISO 8601 UTC. */
  at: string;
}

export interface ScheduleOn {
  scheduleId: number;
  level: Level;
  date: string;
  weekday: number;
  timeZone: string;
  entry: ScheduledTime;
  dismissal: ScheduledTime;
  afterSchoolEnd: ScheduledTime | null;
}

/**
 * The schedule of `level` on the calendar date `date` (`YYYY-MM-DD`) in the current school, or
 * null when the level has none on that weekday. The weekday is the date's own (a calendar date
 * has one weekday in every zone); the school's IANA time zone (`school.time_zone`) turns its local
 * times into instants, so 15:00 in New York is 19:00Z in October and 20:00Z in November. One round
 * trip: the school's zone and the schedule in one batch.
 */
export async function scheduleOn(ctx: SchoolCtx, level: Level, date: string): Promise<ScheduleOn | null> {
  const weekday = isoWeekday(date);
  const schoolId = ctx.schoolId;
  const batch = new Batch(ctx);
  const zone = batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, schoolId)).limit(1));
  const schedule = batch.read(
    SchoolSchedules.select(ctx).where(eq(schoolSchedules.level, level), eq(schoolSchedules.weekday, weekday)).limit(1),
  );
  const results = await batch.commit();
  const [school] = results.get(zone);
  const [row] = results.get(schedule);
  if (!school) throw notFound(m`School ${schoolId} not found`);
  if (!row) return null;
  const at = (local: string): ScheduledTime => ({
    local,
    at: zonedInstant(date, local, school.timeZone).toISOString(),
  });
  return {
    scheduleId: row.id,
    level,
    date,
    weekday,
    timeZone: school.timeZone,
    entry: at(row.entryTime),
    dismissal: at(row.dismissalTime),
    afterSchoolEnd: row.afterSchoolEndTime === null ? null : at(row.afterSchoolEndTime),
  };
}
