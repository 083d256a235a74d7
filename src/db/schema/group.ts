/** Groups (classes): a level and a school year, with their teachers and students. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { LEVELS } from "../../lib/levels";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId } from "./core";
import { students } from "./student";
import { teachers } from "./teacher";

export const groups = searchable(
  sqliteTable(
    "school_group",
    {
      ...record,
      schoolId: schoolId(),
      name: text("name").notNull(),
      level: text("level", { enum: LEVELS }).notNull(),
      /** "2026-2027". */
      schoolYear: text("school_year").notNull(),
      /** Grade within the level (1 to 12), when the school uses one. */
      grade: integer("grade"),
      /** Object key of the group's image under `{schoolId}/groups/`. */
      image: text("image"),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      // A name is unique in its school year whatever its case or accents ("Música" = "MUSICA").
      uniqueIndex("school_group_name_folded_uq").on(t.schoolId, t.schoolYear, t.nameSearch),
      index("school_group_created_idx").on(t.schoolId, t.createdAt),
      index("school_group_level_idx").on(t.schoolId, t.level),
      // sort=name (and -name): the school's groups in name order, nothing sorted.
      index("school_group_name_idx").on(t.schoolId, t.name),
    ],
  ),
  { name: "nameSearch" },
);

export const groupTeachers = sqliteTable(
  "group_teacher",
  {
    ...record,
    schoolId: schoolId(),
    groupId: integer("group_id")
      .notNull()
      .references(() => groups.id, { onDelete: "cascade" }),
    teacherId: integer("teacher_id")
      .notNull()
      .references(() => teachers.id, { onDelete: "cascade" }),
    /** What they teach this group ("Math"); null: the group's homeroom teacher. */
    subject: text("subject"),
  },
  (t) => [
    uniqueIndex("group_teacher_uq").on(t.groupId, t.teacherId),
    index("group_teacher_teacher_idx").on(t.teacherId),
    index("group_teacher_school_idx").on(t.schoolId, t.createdAt),
  ],
);

export const groupStudents = sqliteTable(
  "group_student",
  {
    ...record,
    schoolId: schoolId(),
    groupId: integer("group_id")
      .notNull()
      .references(() => groups.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
  },
  (t) => [
    uniqueIndex("group_student_uq").on(t.groupId, t.studentId),
    index("group_student_student_idx").on(t.studentId),
    index("group_student_school_idx").on(t.schoolId, t.createdAt),
  ],
);

export const Groups = dataTable(groups, { entity: "group" });
export const GroupTeachers = dataTable(groupTeachers, { entity: "group-teacher" });
export const GroupStudents = dataTable(groupStudents, { entity: "group-student" });
