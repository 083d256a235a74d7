/**
 * Trusted people: someone a parent authorises to pick a student up (name, relationship, phone,
 * photo, ID document). The school decides: pending -> approved | rejected, recording who, when and
 * why. Only approved ones count (src/modules/trusted-person/approved.ts).
 */
import { check, index, integer, type SQLiteColumn, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { parents } from "./parent";
import { students } from "./student";

export const TRUSTED_STATUSES = ["pending", "approved", "rejected"] as const;

/** The decision columns both trusted tables share. */
export const decision = () => ({
  status: text("status", { enum: TRUSTED_STATUSES }).notNull().default("pending"),
  /** The user who approved or rejected it. */
  decidedBy: integer("decided_by").references(() => users.id, { onDelete: "set null" }),
  decidedAt: text("decided_at"),
  reason: text("reason"),
});

/**
 * The columns both trusted tables have before their own: the school, the student it is for and the
 * parent profile that registered it (null when the school registered it itself).
 */
export const requestColumns = () => ({
  schoolId: schoolId(),
  studentId: integer("student_id")
    .notNull()
    .references(() => students.id, { onDelete: "cascade" }),
  parentId: integer("parent_id").references(() => parents.id, { onDelete: "set null" }),
});

type RequestTable = Record<"schoolId" | "createdAt" | "status" | "studentId" | "parentId" | "decidedAt", SQLiteColumn>;

/**
 * Their indexes (the lists, by status, a student's, a parent's) and the check that a decided
 * request says when, named after the table.
 */
export const requestIndexes = (name: string, t: RequestTable) => [
  index(`${name}_created_idx`).on(t.schoolId, t.createdAt),
  index(`${name}_status_idx`).on(t.schoolId, t.status, t.createdAt),
  index(`${name}_student_idx`).on(t.studentId, t.status),
  index(`${name}_parent_idx`).on(t.parentId),
  check(`${name}_decided_ck`, sql`${t.status} = 'pending' OR ${t.decidedAt} IS NOT NULL`),
];

export const trustedPeople = sqliteTable(
  "trusted_person",
  {
    ...record,
    ...requestColumns(),
    name: text("name").notNull(),
    relationship: text("relationship").notNull(),
    /** E.164. */
    phone: text("phone").notNull(),
    /** Object keys under `{schoolId}/trusted-people/{id}/`. */
    photo: text("photo"),
    idDocument: text("id_document"),
    ...decision(),
  },
  (t) => requestIndexes("trusted_person", t),
);

export const TrustedPeople = dataTable(trustedPeople, { entity: "trusted-person" });
