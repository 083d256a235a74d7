/**
 * Schedule configuration: how far ahead the current school's exit permissions
 * are asked (`permissionTimeLimit`, hours) and generated (`permissionWeeksInAdvance`). One per
 * school (unique index): a second POST is a 409. "GET schedule configurations for school" is the
 * collection GET: the school's page of 0 or 1 records (see docs/school-setup.md).
 */
import { z } from "@hono/zod-openapi";
import { ScheduleConfigurations } from "../../db/schema/schedule-configuration";
import { m } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { permissions } from "./permissions";

export const MAX_PERMISSION_TIME_LIMIT_HOURS = 168;

const TimeLimit = z
  .number()
  .int()
  .min(0)
  .max(MAX_PERMISSION_TIME_LIMIT_HOURS)
  .openapi({
    example: 24,
    description: `Hours in advance a permission must be asked: a whole number, 0 to ${MAX_PERMISSION_TIME_LIMIT_HOURS} (one week)`,
  });

const WeeksInAdvance = z
  .literal([1, 2, 3, 4])
  // The generator renders a multi-value literal as its first value only: spell the enum out.
  .openapi({
    type: "integer",
    enum: [1, 2, 3, 4],
    example: 2,
    description: "Weeks in advance permissions are received: 1, 2, 3 or 4",
  });

const resource = defineResource({
  name: "scheduleConfiguration",
  plural: "scheduleConfigurations",
  label: m`Schedule configuration`,
  path: "/api/v1/schedule-configuration",
  tag: "Schools",
  scope: "school",
  data: ScheduleConfigurations,
  record: RecordBase.extend({
    permissionTimeLimit: z
      .number()
      .int()
      .openapi({ example: 24, description: "Hours before dismissal by which a change must be asked for" }),
    permissionWeeksInAdvance: z
      .number()
      .int()
      .openapi({ example: 2, description: "Weeks ahead a parent may ask; fixed permissions are made that far ahead" }),
  }),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    permissionTimeLimit: row.permissionTimeLimit,
    permissionWeeksInAdvance: row.permissionWeeksInAdvance,
  }),
  conflictMessage: m`The current school already has a schedule configuration: update it with PUT`,
});

export const listScheduleConfigurations = resource.list({
  access: permissions.read,
  summary: "Get the current school's schedule configuration: a page of 0 (not configured) or 1 record",
});
export const getScheduleConfiguration = resource.get({ access: permissions.read });
export const createScheduleConfiguration = resource.create({
  access: permissions.write,
  input: z.object({ permissionTimeLimit: TimeLimit, permissionWeeksInAdvance: WeeksInAdvance }),
  summary: "Create the current school's schedule configuration (one per school)",
});
export const updateScheduleConfiguration = resource.update({
  access: permissions.write,
  input: z.object({ permissionTimeLimit: TimeLimit.optional(), permissionWeeksInAdvance: WeeksInAdvance.optional() }),
});
export const deleteScheduleConfiguration = resource.delete({ access: permissions.write });
