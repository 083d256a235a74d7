/**
 * `GET /api/v1/school-schedule/day?date=&level=`: a level's school-local day, in one round trip:
 * whether it is a school day and why not (`weekend`, `no-schedule`, `holiday`), entry and
 * dismissal, whether it is an early release (dismissal earlier than the level's usual one: the
 * most common of its weekdays), and the deadline for exit permission changes that day, computed by
 * the same function the exit permission rules use.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { ScheduleConfigurations, scheduleConfigurations } from "../../db/schema/schedule-configuration";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { isoWeekday } from "../../lib/zoned-time";
import { calendarOf, calendarReads, DayOffReason, dayOff } from "./calendar";
import { changeDeadline } from "./deadline";
import { permissions } from "./permissions";
import { Level } from "./resource";

/** Without a schedule configuration: changes are taken until dismissal (the exit permissions' default). */
const DEFAULT_TIME_LIMIT = 0;

const SchoolDayAnswer = z
  .object({
    date: z.iso.date().openapi({ example: "2026-11-27", description: "The school-local day" }),
    level: Level,
    weekday: z.number().int().openapi({ description: "ISO weekday, 1 Monday .. 7 Sunday" }),
    timeZone: z.string().openapi({ example: "America/Mexico_City", description: "The school's IANA time zone" }),
    schoolDay: z.boolean().openapi({ description: "Whether the level has school that day" }),
    reason: DayOffReason,
    entry: z
      .string()
      .nullable()
      .openapi({ example: "08:00", description: "Entry, school-local HH:mm; null without school" }),
    dismissal: z
      .string()
      .nullable()
      .openapi({ example: "13:00", description: "Dismissal, school-local HH:mm; null without school" }),
    afterSchoolEnd: z
      .string()
      .nullable()
      .openapi({ description: "End of the after-school program, HH:mm; null when there is none" }),
    usualDismissal: z
      .string()
      .nullable()
      .openapi({ description: "The level's most common dismissal", example: "14:30" }),
    earlyRelease: z.boolean().openapi({ description: "Dismissal is earlier than the level's usual one" }),
    deadline: z.string().nullable().openapi({
      example: "2026-11-27T11:00:00-06:00",
      description: "The last moment for exit permission changes that day",
    }),
  })
  .openapi("SchoolDay");

const route = defineRoute({
  method: "get",
  path: "/api/v1/school-schedule/day",
  tag: "Schools",
  operationId: "getSchoolDay",
  summary: "A level's school day on a date: school day or why not, times, early release, the deadline for changes",
  access: permissions.read,
  request: {
    query: z.strictObject({
      date: schoolDate("The school-local day to look at", "2026-11-27"),
      level: Level,
    }),
  },
  responses: { 200: json(SchoolDayAnswer, "The day") },
});

/** The most common dismissal of a level's weekdays (ties: the latest). */
function usual(dismissals: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const d of dismissals) counts.set(d, (counts.get(d) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1))[0]?.[0] ?? null;
}

export async function getSchoolDay(ctx: SchoolCtx, { query }: InputOf<typeof route>) {
  const { date, level } = query;
  const batch = new Batch(ctx);
  const day = calendarReads(ctx, batch, date);
  const config = batch.read(
    ScheduleConfigurations.select(ctx, { limit: scheduleConfigurations.permissionTimeLimit }).limit(1),
  );
  const results = await batch.commit();
  const { school, calendar } = calendarOf(results, day);
  if (!school) throw notFound(m`School ${ctx.schoolId ?? 0} not found`);
  const weekday = isoWeekday(date);
  const rows = calendar.schedules.filter((r) => r.level === level);
  const today = rows.find((r) => r.weekday === weekday);
  const reason = dayOff(date, calendar, [level]);
  const usualDismissal = usual(rows.map((r) => r.dismissal));
  const limit = results.get(config)[0]?.limit ?? DEFAULT_TIME_LIMIT;
  return {
    date,
    level,
    weekday,
    timeZone: school.timeZone,
    schoolDay: reason === null,
    reason,
    entry: today?.entry ?? null,
    dismissal: today?.dismissal ?? null,
    afterSchoolEnd: today?.afterSchoolEnd ?? null,
    usualDismissal,
    earlyRelease: today !== undefined && usualDismissal !== null && today.dismissal < usualDismissal,
    deadline: today && reason === null ? changeDeadline(date, today.dismissal, school.timeZone, limit) : null,
  };
}
export const getSchoolDayOperation = operation(route, getSchoolDay);
