/**
 * School schedules: when each
 * level's day starts (entry), ends (dismissal) and when its after-school program ends, per ISO
 * weekday, as school-local `HH:mm`. One per (school, level, weekday): a second is a 409. Times
 * must run forward (entry < dismissal < after-school end), else 400 naming the field; an update
 * that sends some of the times is checked against the stored others and writes all three together.
 */
import { z } from "@hono/zod-openapi";
import { LEVELS, SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { type FieldError, invalidBody } from "../../lib/errors";
import { factChanged, type Redecision } from "../../lib/facts";
import { m, zodMessage } from "../../lib/message";
import { integerString } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { operation } from "../../lib/route";
import { LevelSchema } from "../school/api";
import { permissions } from "./permissions";

/** A school-local time of day, `HH:mm` from 00:00 to 23:59. */
export const LocalTime = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, zodMessage(m`Expected a time HH:mm from 00:00 to 23:59`))
  .openapi({ example: "08:00", description: "School-local time of day, HH:mm (00:00-23:59)" });

export const Level = LevelSchema;

export const Weekday = z
  .number()
  .int()
  .min(1)
  .max(7)
  .openapi({ example: 1, description: "ISO weekday: 1 Monday .. 7 Sunday" });

const Entry = LocalTime.openapi({ example: "08:00", description: "When the day starts (school-local HH:mm)" });
const Dismissal = LocalTime.openapi({
  example: "14:30",
  description: "When the day ends (school-local HH:mm); after entryTime",
});
const AfterSchoolEnd = LocalTime.nullable().openapi({
  example: "17:00",
  description: "When the after-school program ends (school-local HH:mm), after dismissalTime; null: none",
});

export const SchoolScheduleRecord = RecordBase.extend({
  level: z.enum(LEVELS).openapi({ example: "elementary" }),
  weekday: z.number().int().openapi({ example: 1, description: "ISO weekday: 1 Monday .. 7 Sunday" }),
  entryTime: z.string().openapi({ example: "08:00", description: "Entry, school-local HH:mm" }),
  dismissalTime: z.string().openapi({ example: "14:30", description: "Dismissal, school-local HH:mm" }),
  afterSchoolEndTime: z
    .string()
    .nullable()
    .openapi({ example: "17:00", description: "End of the after-school program, HH:mm; null when there is none" }),
});

type Times = { entryTime: string; dismissalTime: string; afterSchoolEndTime: string | null };

/** 400 with a field error for each time that does not come after the one before it. */
export function assertTimesInOrder(times: Times) {
  const errors: FieldError[] = [];
  // HH:mm with leading zeros compares as text in time order.
  if (times.dismissalTime <= times.entryTime) {
    errors.push({ path: "dismissalTime", message: m`Must be after entryTime` });
  }
  if (times.afterSchoolEndTime !== null && times.afterSchoolEndTime <= times.dismissalTime) {
    errors.push({ path: "afterSchoolEndTime", message: m`Must be after dismissalTime` });
  }
  if (errors.length > 0) {
    throw invalidBody(errors);
  }
}

export const scheduleResource = defineResource({
  name: "schoolSchedule",
  plural: "schoolSchedules",
  label: m`School schedule`,
  path: "/api/v1/school-schedule",
  tag: "Schools",
  scope: "school",
  data: SchoolSchedules,
  record: SchoolScheduleRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    level: row.level,
    weekday: row.weekday,
    entryTime: row.entryTime,
    dismissalTime: row.dismissalTime,
    afterSchoolEndTime: row.afterSchoolEndTime,
  }),
  conflictMessage: m`The current school already has a schedule for this level and weekday: update it with PUT`,
});

export const listSchoolSchedules = scheduleResource.list({
  access: permissions.read,
  filters: {
    // school_schedule_level_weekday_uq
    level: {
      schema: Level.optional().openapi({ description: "Only this level's schedules" }),
      where: (_ctx, v: (typeof LEVELS)[number]) => eq(schoolSchedules.level, v),
      example: "elementary",
    },
    // school_schedule_weekday_idx
    weekday: {
      schema: integerString(z.number().int().min(1).max(7)).optional().openapi({
        type: "integer",
        minimum: 1,
        maximum: 7,
        description: "Only this ISO weekday (1 Monday .. 7 Sunday)",
      }),
      where: (_ctx, v: number) => eq(schoolSchedules.weekday, v),
      example: "5",
    },
  },
  // A total order (one schedule per level and weekday), served by the unique index.
  defaultOrder: [{ by: schoolSchedules.level }, { by: schoolSchedules.weekday }],
  summary: "List the current school's schedules (paginated), by level then weekday",
});

export const getSchoolSchedule = scheduleResource.get({ access: permissions.read });

export const createSchoolSchedule = scheduleResource.create({
  access: permissions.write,
  input: z.object({
    level: Level,
    weekday: Weekday,
    entryTime: Entry,
    dismissalTime: Dismissal,
    afterSchoolEndTime: AfterSchoolEnd.optional(),
  }),
  values: (_ctx, { body: input }) => {
    const times = { ...input, afterSchoolEndTime: input.afterSchoolEndTime ?? null };
    assertTimesInOrder(times);
    return times;
  },
  summary: "Create the schedule of a level on a weekday for the current school",
});

/** The times an update leaves: the sent ones over the stored ones, checked, all three written. */
async function updatedTimes(input: Partial<Times>, ctx: SchoolCtx, id: number): Promise<Times | undefined> {
  const sent = [input.entryTime, input.dismissalTime, input.afterSchoolEndTime];
  if (sent.every((v) => v === undefined)) return undefined;
  const stored = sent.some((v) => v === undefined) ? await scheduleResource.find(ctx, id) : undefined;
  const times: Times = {
    entryTime: input.entryTime ?? stored?.entryTime ?? "",
    dismissalTime: input.dismissalTime ?? stored?.dismissalTime ?? "",
    afterSchoolEndTime:
      input.afterSchoolEndTime !== undefined ? input.afterSchoolEndTime : (stored?.afterSchoolEndTime ?? null),
  };
  assertTimesInOrder(times);
  return times;
}

/**
 * What a level's schedule removed from a weekday (deleted, or moved to another level or weekday)
 * decided again: that level's exit permissions on that weekday, from the school's today on, no
 * longer on a school day (exit-permission `redecide`). Prepared before the write, added to its
 * batch, dispatched after the commit.
 */
const redecided = new WeakMap<object, Redecision>();
const SCHEDULE_EFFECT =
  "The exit permissions from the school's today on of the level's students on the weekday it leaves are withdrawn in the same write (no school that day for them: seats given back, families and office told).";

/** Prepares the decision again when the schedule at `id` leaves its level and weekday. */
async function leaving(ctx: SchoolCtx, key: object, id: number, to?: { level?: string; weekday?: number }) {
  const was = await scheduleResource.find(ctx, id);
  const moved =
    to === undefined || (to.level ?? was.level) !== was.level || (to.weekday ?? was.weekday) !== was.weekday;
  if (moved) redecided.set(key, await factChanged(ctx, { fact: "schedule", level: was.level, weekday: was.weekday }));
}

const updated = scheduleResource.update({
  access: permissions.write,
  input: z.object({
    level: Level.optional(),
    weekday: Weekday.optional(),
    entryTime: Entry.optional(),
    dismissalTime: Dismissal.optional(),
    afterSchoolEndTime: AfterSchoolEnd.optional(),
  }),
  // The three times are written together, so a concurrent update cannot leave them out of order.
  values: async (ctx, { id, body: input }) => {
    if (input.level !== undefined || input.weekday !== undefined) await leaving(ctx, input, id, input);
    return { ...input, ...(await updatedTimes(input, ctx, id)) };
  },
  also: (_ctx, { body }) => redecided.get(body)?.statements ?? [],
  summary: "Update a schedule (another level and weekday that already has one is a 409)",
  description: `Moved to another level or weekday: ${SCHEDULE_EFFECT}`,
});
export const updateSchoolSchedule = operation(updated.route, async (ctx, input) => {
  await updated.run(ctx, input);
  await redecided.get(input.body)?.dispatch();
});

const removed = scheduleResource.delete({
  access: permissions.write,
  description: SCHEDULE_EFFECT,
  check: (ctx, { id }) => leaving(ctx, ctx, id),
  also: (ctx) => redecided.get(ctx)?.statements ?? [],
});
export const deleteSchoolSchedule = operation(removed.route, async (ctx, input) => {
  await removed.run(ctx, input);
  await redecided.get(ctx)?.dispatch();
});
