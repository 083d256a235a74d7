/** Families: a unique number per school; they hold students (student.family_id) and parents (parent.family_id). */
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

export const families = searchable(
  sqliteTable(
    "family",
    {
      ...record,
      schoolId: schoolId(),
      /**
       * The school's own number for the family ("F-0042"), unique in the school whatever its case
       * or accents ("f-0042" is the same number): the unique index is on its search copy.
       */
      familyNumber: text("family_number").notNull(),
      name: text("name").notNull(),
      nameSearch: searchCopy("name"),
      familyNumberSearch: searchCopy("family_number"),
    },
    (t) => [
      uniqueIndex("family_number_folded_uq").on(t.schoolId, t.familyNumberSearch),
      // sort=familyNumber: the school's families in number order, nothing sorted.
      index("family_number_idx").on(t.schoolId, t.familyNumber),
      index("family_created_idx").on(t.schoolId, t.createdAt),
      index("family_name_idx").on(t.schoolId, t.name),
    ],
  ),
  { name: "nameSearch", familyNumber: "familyNumberSearch" },
);

export const Families = dataTable(families, { entity: "family" });
