/** Teachers: a user's teacher profile in a school (the teacher role's own fields). */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";

export const teachers = searchable(
  sqliteTable(
    "teacher",
    {
      ...record,
      schoolId: schoolId(),
      userId: integer("user_id")
        .notNull()
        .references(() => users.id, { onDelete: "cascade" }),
      /** JSON array of subject names ("Math", "Biology"). */
      subjects: text("subjects", { mode: "json" }).$type<string[]>().notNull().default([]),
      /** The school's own staff number, if it uses one (unique in the school when set). */
      employeeNumber: text("employee_number"),
      subjectsSearch: searchCopy("subjects", "[]"),
    },
    (t) => [
      // The list's order (created_at, id) within a school, without a sort step.
      index("teacher_created_idx").on(t.schoolId, t.createdAt),
      uniqueIndex("teacher_user_uq").on(t.schoolId, t.userId),
      uniqueIndex("teacher_employee_number_uq").on(t.schoolId, t.employeeNumber),
    ],
  ),
  { subjects: "subjectsSearch" },
);

export const Teachers = dataTable(teachers, { entity: "teacher" });
