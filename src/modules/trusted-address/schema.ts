/**
 * Trusted addresses: where a parent asks the bus to drop a student off (the address columns of
 * src/modules/address/schema.ts). The school decides like for trusted people; only approved ones
 * count. `route_stop_id` links the stop once routes exist (no foreign key until then).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { record, schoolId } from "../../db/core";
import { parents } from "../parent/schema";
import { students } from "../student/schema";
import { decision } from "../trusted-person/schema";

export const trustedAddresses = sqliteTable(
  "trusted_address",
  {
    ...record,
    schoolId: schoolId(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    parentId: integer("parent_id").references(() => parents.id, { onDelete: "set null" }),
    street: text("street").notNull(),
    number: text("number"),
    neighborhood: text("neighborhood"),
    city: text("city").notNull(),
    state: text("state"),
    postalCode: text("postal_code"),
    /** ISO 3166-1 alpha-2, upper case. */
    country: text("country").notNull(),
    latitude: real("latitude"),
    longitude: real("longitude"),
    /** The route stop serving it (routes come later: no foreign key yet). */
    routeStopId: integer("route_stop_id"),
    ...decision(),
  },
  (t) => [
    index("trusted_address_created_idx").on(t.schoolId, t.createdAt),
    index("trusted_address_status_idx").on(t.schoolId, t.status, t.createdAt),
    index("trusted_address_student_idx").on(t.studentId, t.status),
    index("trusted_address_parent_idx").on(t.parentId),
    check("trusted_address_decided_ck", sql`${t.status} = 'pending' OR ${t.decidedAt} IS NOT NULL`),
  ],
);
