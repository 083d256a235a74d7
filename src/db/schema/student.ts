/**
 * Students and their guardians. A student belongs to at most one family (`family_id`). A guardian
 * is a parent-student link that says the relationship and what the guardian may do; the school may
 * restrict it ("may not pick up"), optionally backed by a court-order document, between dates.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { LEVELS } from "../../lib/levels";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId } from "./core";
import { documents } from "./document";
import { families } from "./family";
import { parents } from "./parent";

export const students = searchable(
  sqliteTable(
    "student",
    {
      ...record,
      schoolId: schoolId(),
      familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
      firstName: text("first_name").notNull(),
      lastName: text("last_name").notNull(),
      /**
       * The school's enrolment number, unique among the school's students not deleted (a deleted
       * student gives it up, so a new student may take it): imports match on it.
       */
      idNumber: text("id_number"),
      level: text("level", { enum: LEVELS }),
      /** YYYY-MM-DD. */
      birthDate: text("birth_date"),
      status: text("status", { enum: ["active", "inactive", "graduated"] })
        .notNull()
        .default("active"),
      /** Object key of the student's photo under `{schoolId}/students/`. */
      photo: text("photo"),
      /** Soft delete: lists exclude the student (but `deleted=true`); records that name them keep their reference. */
      deletedAt: text("deleted_at"),
      firstNameSearch: searchCopy("first_name"),
      lastNameSearch: searchCopy("last_name"),
    },
    (t) => [
      index("student_school_idx").on(t.schoolId, t.lastName),
      // Each filter's index ends with the list's order (created_at, then the rowid): no sort step.
      index("student_family_idx").on(t.familyId, t.createdAt),
      index("student_created_idx").on(t.schoolId, t.createdAt),
      index("student_level_idx").on(t.schoolId, t.level, t.createdAt),
      index("student_status_idx").on(t.schoolId, t.status, t.createdAt),
      // Partial: the id number is held by live students only. Upserts on it name the same WHERE.
      uniqueIndex("student_id_number_uq").on(t.schoolId, t.idNumber).where(sql`deleted_at IS NULL`),
      // The deleted students of a school, in the list's order (`deleted=true`).
      index("student_deleted_idx").on(t.schoolId, t.createdAt).where(sql`deleted_at IS NOT NULL`),
    ],
  ),
  { firstName: "firstNameSearch", lastName: "lastNameSearch" },
);

/** A parent's guardianship of a student, with its capabilities and any restriction the school set. */
export const guardians = sqliteTable(
  "guardian",
  {
    ...record,
    schoolId: schoolId(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    parentId: integer("parent_id")
      .notNull()
      .references(() => parents.id, { onDelete: "cascade" }),
    relationship: text("relationship", { enum: ["mother", "father", "guardian", "grandparent", "other"] })
      .notNull()
      .default("guardian"),
    canPickUp: integer("can_pick_up", { mode: "boolean" }).notNull().default(true),
    canRequestChanges: integer("can_request_changes", { mode: "boolean" }).notNull().default(true),
    receivesNotifications: integer("receives_notifications", { mode: "boolean" }).notNull().default(true),
    /** A school-set restriction: the guardian may not pick the student up (between the dates, when given). */
    restricted: integer("restricted", { mode: "boolean" }).notNull().default(false),
    restrictionReason: text("restriction_reason"),
    restrictionDocumentId: integer("restriction_document_id").references(() => documents.id, {
      onDelete: "set null",
    }),
    /** YYYY-MM-DD, inclusive; null: open-ended. */
    restrictionFrom: text("restriction_from"),
    restrictionUntil: text("restriction_until"),
  },
  (t) => [
    uniqueIndex("guardian_uq").on(t.studentId, t.parentId),
    index("guardian_parent_idx").on(t.parentId),
    index("guardian_school_idx").on(t.schoolId, t.createdAt),
    index("guardian_document_idx").on(t.restrictionDocumentId),
    check(
      "guardian_restriction_dates_ck",
      sql`${t.restrictionFrom} IS NULL OR ${t.restrictionUntil} IS NULL OR ${t.restrictionFrom} <= ${t.restrictionUntil}`,
    ),
  ],
);

export const Students = dataTable(students, { entity: "student" });
export const Guardians = dataTable(guardians, { entity: "guardian" });
