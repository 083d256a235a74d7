/** Families: a unique number per school; they hold students (student.family_id) and parents (parent.family_id). */
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { record, schoolId } from "../../db/core";
import { searchable, searchCopy } from "../../db/search";

export const families = searchable(
  sqliteTable(
    "family",
    {
      ...record,
      schoolId: schoolId(),
      /** The school's own number for the family, unique in the school ("F-0042"). */
      familyNumber: text("family_number").notNull(),
      name: text("name").notNull(),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      uniqueIndex("family_number_uq").on(t.schoolId, t.familyNumber),
      index("family_created_idx").on(t.schoolId, t.createdAt),
      index("family_name_idx").on(t.schoolId, t.name),
    ],
  ),
  { name: "nameSearch" },
);
