/**
 * "Only approved ones count": what exit permissions (auto pickup by a trusted person, a route change
 * to a trusted address) and the student detail view read. Scoped to the current school only: the
 * caller decides who may ask about the student (a parent's own child, staff).
 */
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { TrustedAddresses, trustedAddresses } from "../../db/schema/trusted-address";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { asc, eq, getTableName, type SQL, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";

/** The approved trusted people of a student, by name. Index: trusted_person_student_idx. */
export function approvedTrustedPeople(ctx: SchoolCtx, studentId: number) {
  return TrustedPeople.select(ctx, {
    id: trustedPeople.id,
    name: trustedPeople.name,
    relationship: trustedPeople.relationship,
    phone: trustedPeople.phone,
    photo: trustedPeople.photo,
  })
    .where(eq(trustedPeople.studentId, studentId), eq(trustedPeople.status, "approved"))
    .orderBy(asc(trustedPeople.name), asc(trustedPeople.id))
    .all();
}

/** The approved trusted addresses of a student, oldest first. Index: trusted_address_student_idx. */
export function approvedTrustedAddresses(ctx: SchoolCtx, studentId: number) {
  return TrustedAddresses.select(ctx, {
    id: trustedAddresses.id,
    street: trustedAddresses.street,
    number: trustedAddresses.number,
    neighborhood: trustedAddresses.neighborhood,
    city: trustedAddresses.city,
    state: trustedAddresses.state,
    postalCode: trustedAddresses.postalCode,
    country: trustedAddresses.country,
    latitude: trustedAddresses.latitude,
    longitude: trustedAddresses.longitude,
    routeStopId: trustedAddresses.routeStopId,
  })
    .where(eq(trustedAddresses.studentId, studentId), eq(trustedAddresses.status, "approved"))
    .orderBy(asc(trustedAddresses.createdAt), asc(trustedAddresses.id))
    .all();
}

export interface ApprovedTrustedPerson {
  id: number;
  name: string;
  relationship: string;
  phone: string;
}

export interface ApprovedTrustedAddress {
  id: number;
  street: string;
  number: string | null;
  city: string;
  country: string;
  routeStopId: number | null;
}

/**
 * A column written with its table's name: drizzle writes a column inside a selected field
 * unqualified, which inside a sub-select would name the sub-select's own column.
 */
const qualified = (column: SQLiteColumn) =>
  sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;

/**
 * A JSON array of a student's approved trusted people, as an SQL expression a student read can
 * select beside its own columns (`trustedPeople: trustedPeopleJson(students.id)` in a view's
 * fields): one query, no N+1 (index trusted_person_student_idx). It is text: read it with `parseJson(schema, text)` (src/lib/json.ts).
 * `studentId` is written as `"table"."column"`: pass a column of an unaliased table.
 */
export function trustedPeopleJson(studentId: SQLiteColumn): SQL<string> {
  return sql<string>`(SELECT coalesce(json_group_array(json(j)), '[]') FROM (SELECT json_object('id', tp.id, 'name', tp.name, 'relationship', tp.relationship, 'phone', tp.phone) AS j FROM trusted_person tp WHERE tp.student_id = ${qualified(studentId)} AND tp.status = 'approved' ORDER BY tp.name, tp.id))`;
}

/** The same for approved trusted addresses (oldest first). */
export function trustedAddressesJson(studentId: SQLiteColumn): SQL<string> {
  return sql<string>`(SELECT coalesce(json_group_array(json(j)), '[]') FROM (SELECT json_object('id', ta.id, 'street', ta.street, 'number', ta.number, 'city', ta.city, 'country', ta.country, 'routeStopId', ta.route_stop_id) AS j FROM trusted_address ta WHERE ta.student_id = ${qualified(studentId)} AND ta.status = 'approved' ORDER BY ta.created_at, ta.id))`;
}
