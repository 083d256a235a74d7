/** The transportation rules text of a school. */
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";

/** The transportation rules text a school shows parents: one per school. */
export const transportationRules = sqliteTable(
  "transportation_rules",
  {
    ...record,
    schoolId: schoolId(),
    content: text("content").notNull(),
    updatedBy: integer("updated_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [uniqueIndex("transportation_rules_school_uq").on(t.schoolId)],
);

export const TransportationRules = dataTable(transportationRules, { entity: "transport-rules" });
