/**
 * School configuration: a school year of the current school, with the settings that go
 * with it. Minimal on purpose: it exists so holiday cycles have something to belong to.
 * Deleting one deletes its holiday cycles (the foreign key cascades).
 */
import { z } from "@hono/zod-openapi";
import { SchoolConfigurations, schoolConfigurations } from "../../db/schema/school-configuration";
import { schoolDate } from "../../lib/dates";
import { m } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { text } from "../../lib/text";
import { permissions } from "./permissions";
import { assertOrdered, orderedRangeUpdate } from "./range";

const StartDate = schoolDate("First day of the school year", "2026-08-24");
const EndDate = schoolDate("Last day of the school year; not before startDate", "2027-06-30");
const Name = text({ max: 100 }).openapi({ example: "2026-2027" });
const MaxParents = z
  .number()
  .int()
  .min(1)
  .max(6)
  .openapi({ example: 2, description: "How many parents a family may have, 1 to 6" });

const AutoConfirm = z.boolean().openapi({
  example: false,
  description: "Exit permissions for dates of this school year are confirmed as they are asked (the rules still apply)",
});

const KeepBusPositions = z.boolean().openapi({
  example: true,
  description:
    "The bus positions of this school year's runs are kept for the day (false: none are kept, only each run's last position)",
});

const Create = z.object({
  name: Name,
  startDate: StartDate,
  endDate: EndDate,
  maxParentsPerFamily: MaxParents.default(2),
  autoConfirmExitPermissions: AutoConfirm.default(false),
  keepBusPositions: KeepBusPositions.default(true),
});

const Update = z.object({
  name: Name.optional(),
  startDate: StartDate.optional(),
  endDate: EndDate.optional(),
  maxParentsPerFamily: MaxParents.optional(),
  autoConfirmExitPermissions: AutoConfirm.optional(),
  keepBusPositions: KeepBusPositions.optional(),
});

export const schoolConfigurationResource = defineResource({
  name: "schoolConfiguration",
  plural: "schoolConfigurations",
  label: m`School configuration`,
  path: "/api/v1/school-configuration",
  tag: "Schools",
  scope: "school",
  data: SchoolConfigurations,
  record: RecordBase.extend({
    name: z.string().openapi({ example: "2026-2027", description: "The school year's name" }),
    startDate: z.iso.date().openapi({ example: "2026-08-24", description: "First day of the school year" }),
    endDate: z.iso.date().openapi({ example: "2027-06-30", description: "Last day of the school year" }),
    maxParentsPerFamily: z
      .number()
      .int()
      .openapi({ example: 2, description: "How many parents a family may have in this school" }),
    autoConfirmExitPermissions: AutoConfirm,
    keepBusPositions: KeepBusPositions,
  }),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    name: row.name,
    startDate: row.startDate,
    endDate: row.endDate,
    maxParentsPerFamily: row.maxParentsPerFamily,
    autoConfirmExitPermissions: row.autoConfirmExitPermissions,
    keepBusPositions: row.keepBusPositions,
  }),
});

export const listSchoolConfigurations = schoolConfigurationResource.list({
  access: permissions.read,
  sort: { startDate: schoolConfigurations.startDate },
  // school_configuration_school_idx (school_id, start_date) serves this order.
  defaultOrder: [{ by: schoolConfigurations.startDate }, { by: schoolConfigurations.id }],
  summary: "List the current school's configurations (school years), oldest first",
});

export const getSchoolConfiguration = schoolConfigurationResource.get({ access: permissions.read });

export const createSchoolConfiguration = schoolConfigurationResource.create({
  access: permissions.write,
  input: Create,
  values: (_ctx, { body: input }) => {
    assertOrdered({ start: input.startDate, end: input.endDate }, "startDate", "endDate");
    return input;
  },
});

export const updateSchoolConfiguration = schoolConfigurationResource.update({
  access: permissions.write,
  input: Update,
  values: orderedRangeUpdate("startDate", "endDate", (ctx, id) => schoolConfigurationResource.find(ctx, id)),
});

export const deleteSchoolConfiguration = schoolConfigurationResource.delete({
  access: permissions.write,
  summary: "Delete a school configuration and its holiday cycles",
});
