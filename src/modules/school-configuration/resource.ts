/**
 * School configuration (spec 4.7): a school year of the current school, with the settings that go
 * with it. Minimal on purpose: it exists so holiday cycles have something to belong to (BRIEF).
 * Deleting one deletes its holiday cycles (the foreign key cascades).
 */
import { z } from "@hono/zod-openapi";
import { asc } from "drizzle-orm";
import { defineResource, RecordBase, readWrite, timestamps } from "../../lib/resource";
import { text } from "../../lib/text";
import { assertOrdered, orderedRangeUpdate } from "./range";
import { schoolConfigurations } from "./schema";

const Day = z.iso.date().openapi({ example: "2026-08-24", description: "YYYY-MM-DD" });
const Name = text({ max: 100 }).openapi({ example: "2026-2027" });
const MaxParents = z
  .number()
  .int()
  .min(1)
  .max(6)
  .openapi({ example: 2, description: "How many parents a family may have, 1 to 6" });

const Create = z.object({
  name: Name,
  startDate: Day.openapi({ description: "First day of the school year, YYYY-MM-DD" }),
  endDate: Day.openapi({ description: "Last day of the school year, YYYY-MM-DD; not before startDate" }),
  maxParentsPerFamily: MaxParents.default(2),
});

const Update = z.object({
  name: Name.optional(),
  startDate: Day.optional(),
  endDate: Day.optional(),
  maxParentsPerFamily: MaxParents.optional(),
});

export const schoolConfigurationResource = defineResource({
  name: "schoolConfiguration",
  plural: "schoolConfigurations",
  label: "School configuration",
  path: "/api/v1/school-configuration",
  tag: "Schools",
  scope: "school",
  table: schoolConfigurations,
  record: RecordBase.extend({
    name: z.string().openapi({ example: "2026-2027" }),
    startDate: z.iso.date().openapi({ example: "2026-08-24" }),
    endDate: z.iso.date().openapi({ example: "2027-06-30" }),
    maxParentsPerFamily: z.number().int().openapi({ example: 2 }),
  }),
  toRecord: (row) => ({
    ...timestamps(row),
    name: row.name,
    startDate: row.startDate,
    endDate: row.endDate,
    maxParentsPerFamily: row.maxParentsPerFamily,
  }),
  access: readWrite("school-configuration.read", "school-configuration.write"),
  create: Create,
  update: Update,
  sort: { startDate: schoolConfigurations.startDate },
  // school_configuration_school_idx (school_id, start_date) serves this order.
  defaultOrder: [asc(schoolConfigurations.startDate), asc(schoolConfigurations.id)],
  beforeCreate: (input) => {
    assertOrdered({ start: input.startDate, end: input.endDate }, "startDate", "endDate");
    return input;
  },
  beforeUpdate: orderedRangeUpdate(
    "startDate",
    "endDate",
    // Annotated: the hook reads through the resource it belongs to.
    (caller, id): Promise<Record<"startDate" | "endDate", string>> =>
      schoolConfigurationResource.service.get(caller, id),
  ),
  summaries: {
    list: "List the current school's configurations (school years), oldest first",
    delete: "Delete a school configuration and its holiday cycles",
  },
});
