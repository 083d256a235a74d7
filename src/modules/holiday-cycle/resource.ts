/**
 * School holiday cycles: holiday periods of a school configuration (school year).
 * `schoolConfigurationId` is an input of creation only and is not in the returned record; it must
 * name a configuration of the current school, else 404 as if it did not exist.
 * Date-times are stored in UTC ISO form so they sort; the list is in start order.
 */
import { z } from "@hono/zod-openapi";
import { SchoolHolidayCycles, schoolHolidayCycles } from "../../db/schema/holiday-cycle";
import { SchoolConfigurations } from "../../db/schema/school-configuration";
import { eq, gte, lte } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { dateTime } from "../../lib/dates";
import { factChanged, type Redecision } from "../../lib/facts";
import { m } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { operation } from "../../lib/route";
import { assertOrdered, orderedRangeUpdate, schoolConfigurationResource } from "../school-configuration/api";
import { permissions } from "./permissions";

const ConfigurationId = z
  .number()
  .int()
  .min(1)
  .max(Number.MAX_SAFE_INTEGER)
  .openapi({ example: 1, description: "A school configuration of the current school" });

const Start = dateTime("Start of the holidays", "2026-12-19T00:00:00-06:00");
const End = dateTime("End of the holidays; not before startHolidays", "2027-01-07T00:00:00-06:00");

const Create = z.object({ startHolidays: Start, endHolidays: End, schoolConfigurationId: ConfigurationId });
const Update = z.object({ startHolidays: Start.optional(), endHolidays: End.optional() });

const at = (description: string) => dateTime(description, "2026-12-01T00:00:00Z").optional();

const record = RecordBase.extend({
  startHolidays: z.iso
    .datetime()
    .openapi({ example: "2026-12-19T06:00:00.000Z", description: "Start of the holidays (UTC)" }),
  endHolidays: z.iso
    .datetime()
    .openapi({ example: "2027-01-07T06:00:00.000Z", description: "End of the holidays (UTC)" }),
});
const toRecord = (row: typeof schoolHolidayCycles.$inferSelect) => ({
  ...timestamps(row),
  startHolidays: row.startHolidays,
  endHolidays: row.endHolidays,
});

export const holidayCycleResource = defineResource({
  name: "schoolHolidayCycle",
  plural: "schoolHolidayCycles",
  label: m`School holiday cycle`,
  path: "/api/v1/school-holiday-cycle",
  tag: "Schools",
  scope: "school",
  data: SchoolHolidayCycles,
  record,
  toRecord: (_ctx, row) => toRecord(row),
});

const window = {
  // A window: cycles that overlap [from, to]. `to` is a range on school_holiday_cycle_school_idx
  // (school_id, start_holidays); `from` tests end_holidays on the school's few rows it yields.
  from: {
    schema: at("Only cycles that end at or after this instant (e.g. now: current and upcoming holidays)"),
    where: (_ctx: Ctx, v: string) => gte(schoolHolidayCycles.endHolidays, v),
    example: "2026-12-01T00:00:00Z",
  },
  to: {
    schema: at("Only cycles that start at or before this instant"),
    where: (_ctx: Ctx, v: string) => lte(schoolHolidayCycles.startHolidays, v),
    example: "2027-06-30T00:00:00Z",
  },
};
const startOrder = [{ by: schoolHolidayCycles.startHolidays }, { by: schoolHolidayCycles.id }];

export const listSchoolHolidayCycles = holidayCycleResource.list({
  access: permissions.read,
  filters: {
    // school_holiday_cycle_configuration_idx
    schoolConfigurationId: {
      schema: recordId()
        .optional()
        .openapi({ description: "Only the cycles of this school configuration (school year)" }),
      where: (_ctx, v: number) => eq(schoolHolidayCycles.schoolConfigurationId, v),
      example: "1",
    },
    ...window,
  },
  sort: { startHolidays: schoolHolidayCycles.startHolidays },
  defaultOrder: startOrder,
  summary: "List the current school's holiday cycles (paginated), in start order",
});

export const getSchoolHolidayCycle = holidayCycleResource.get({ access: permissions.read });

/**
 * What a holiday added (or moved) decided again about the exit permissions of its days: no school,
 * nobody goes home a way the school decided (withdrawn in the same batch, seats given back, families
 * and office told). Prepared before the write, added to its batch, dispatched after the commit.
 */
const redecided = new WeakMap<object, Redecision>();
const holidayOn = async (ctx: SchoolCtx, key: object, start: string, end: string) =>
  redecided.set(key, await factChanged(ctx, { fact: "holiday", start, end }));
const HOLIDAY_EFFECT =
  "The exit permissions of the days it covers, from the school's today on, are withdrawn in the same write (seats given back, families and office told).";

const created = holidayCycleResource.create({
  access: permissions.write,
  input: Create,
  values: async (ctx, { body: input }) => {
    assertOrdered({ start: input.startHolidays, end: input.endHolidays }, "startHolidays", "endHolidays");
    // Another school's configuration answers 404 like a missing one.
    await schoolConfigurationResource.find(ctx, input.schoolConfigurationId);
    await holidayOn(ctx, input, input.startHolidays, input.endHolidays);
    return input;
  },
  also: (_ctx, { body }) => redecided.get(body)?.statements ?? [],
  errors: [404],
  summary: "Create a holiday cycle in a school configuration of the current school",
  description: HOLIDAY_EFFECT,
});
export const createSchoolHolidayCycle = operation(created.route, async (ctx, input) => {
  const record = await created.run(ctx, input);
  await redecided.get(input.body)?.dispatch();
  return record;
});

const rangeOf = orderedRangeUpdate("startHolidays", "endHolidays", (ctx, id) => holidayCycleResource.find(ctx, id));
const updated = holidayCycleResource.update({
  access: permissions.write,
  input: Update,
  description: `Moved, its new days are decided again: ${HOLIDAY_EFFECT}`,
  values: async (ctx, input) => {
    const range = await rangeOf(ctx, input);
    if (range.startHolidays !== undefined && range.endHolidays !== undefined) {
      await holidayOn(ctx, input.body, range.startHolidays, range.endHolidays);
    }
    return range;
  },
  also: (_ctx, { body }) => redecided.get(body)?.statements ?? [],
});
export const updateSchoolHolidayCycle = operation(updated.route, async (ctx, input) => {
  await updated.run(ctx, input);
  await redecided.get(input.body)?.dispatch();
});

export const deleteSchoolHolidayCycle = holidayCycleResource.delete({ access: permissions.write });

/**
 * The same cycles nested under their school year: `/api/v1/school-configuration/{id}/...`. The
 * configuration must be the current school's (404 otherwise, even for an empty year).
 */
const cyclesOfYear = defineResource({
  name: "schoolConfigurationHolidayCycle",
  plural: "schoolConfigurationHolidayCycles",
  label: m`School holiday cycle`,
  path: "/api/v1/school-configuration/{schoolConfigurationId}/school-holiday-cycle",
  tag: "Schools",
  scope: "school",
  data: SchoolHolidayCycles,
  record,
  toRecord: (_ctx, row) => toRecord(row),
  parent: {
    param: "schoolConfigurationId",
    label: m`School configuration`,
    data: SchoolConfigurations,
    column: schoolHolidayCycles.schoolConfigurationId,
  },
});

export const listSchoolConfigurationHolidayCycles = cyclesOfYear.list({
  access: permissions.read,
  filters: window,
  defaultOrder: startOrder,
  summary: "List the holiday cycles of one school configuration (school year), in start order",
});
