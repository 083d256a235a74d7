/**
 * Trusted people: someone a parent authorises to pick a student up (name, relationship, phone,
 * photo, ID document). The school decides: pending -> approved | rejected, recording who, when and
 * why. Only approved ones count (src/modules/trusted-person/approved.ts).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { record, schoolId, users } from "../../db/core";
import { parents } from "../parent/schema";
import { students } from "../student/schema";

export const TRUSTED_STATUSES = ["pending", "approved", "rejected"] as const;

/** The decision columns both trusted tables share. */
export const decision = () => ({
  status: text("status", { enum: TRUSTED_STATUSES }).notNull().default("pending"),
  /** The user who approved or rejected it. */
  decidedBy: integer("decided_by").references(() => users.id, { onDelete: "set null" }),
  decidedAt: text("decided_at"),
  reason: text("reason"),
});

export const trustedPeople = sqliteTable(
  "trusted_person",
  {
    ...record,
    schoolId: schoolId(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    /** The parent profile that registered it; null when the school registered it itself. */
    parentId: integer("parent_id").references(() => parents.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    relationship: text("relationship").notNull(),
    /** E.164. */
    phone: text("phone").notNull(),
    /** Object keys under `{schoolId}/trusted-people/{id}/`. */
    photo: text("photo"),
    idDocument: text("id_document"),
    ...decision(),
  },
  (t) => [
    index("trusted_person_created_idx").on(t.schoolId, t.createdAt),
    index("trusted_person_status_idx").on(t.schoolId, t.status, t.createdAt),
    index("trusted_person_student_idx").on(t.studentId, t.status),
    index("trusted_person_parent_idx").on(t.parentId),
    check("trusted_person_decided_ck", sql`${t.status} = 'pending' OR ${t.decidedAt} IS NOT NULL`),
  ],
);
