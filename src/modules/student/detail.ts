/**
 * A student's detail: the record with its family, guardians (capabilities; the restriction for
 * holders of student.read), groups, approved trusted people and addresses, in one query (one D1
 * round trip for staff).
 */
import { z } from "@hono/zod-openapi";
import { Guardians, Students, students } from "../../db/schema/student";
import { eq, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { m } from "../../lib/message";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, operation } from "../../lib/route";
import { trustedAddressesJson, trustedPeopleJson } from "../trusted-person/api";
import { columnsAs, contactOf, copyJoin, identity } from "../user/api";
import { StudentGuardian, seesRestriction } from "./guardian-routes";
import { fields, READ_DESCRIPTION, StudentRecord, studentResource, toStudent } from "./resource";
import { ownChildField, readerContext } from "./visibility";

const Detail = StudentRecord.extend({
  family: z
    .object({
      id: z.number().int().openapi({ description: "The family's id" }),
      familyNumber: z.string(),
      name: z.string().openapi({ description: "The family's name" }),
    })
    .nullable()
    .openapi({ description: "The student's family" }),
  guardians: z
    .array(StudentGuardian)
    .openapi({ description: "The parents linked to the student, with what each may do" }),
  trustedPeople: z
    .array(
      z
        .object({
          id: z.number().int(),
          name: z.string().openapi({ description: "The trusted person's full name" }),
          relationship: z.string(),
          phone: z.string().nullable().openapi({
            description: "Masked without user.contact, except for the student's own parents (and their delegates)",
          }),
        })
        .openapi("StudentTrustedPerson"),
    )
    .openapi({ description: "Approved trusted people (who may pick the student up besides guardians)" }),
  trustedAddresses: z
    .array(
      z
        .object({
          id: z.number().int(),
          street: z.string(),
          number: z.string().nullable(),
          city: z.string(),
          country: z.string(),
          routeStopId: z.number().int().nullable(),
        })
        .openapi("StudentTrustedAddress"),
    )
    .openapi({ description: "Approved trusted addresses (where the bus may drop the student)" }),
}).openapi("StudentDetail");

/** Guardians' names as this school knows them (src/modules/user/identity.ts). */
const guardianName = identity(columnsAs("u"), columnsAs("gc"));

const g = Guardians.alias("g");

// The sub-selects name their tables explicitly: they are correlated with the outer "student" row.
const detailFields = {
  ...fields,
  family: sql<
    string | null
  >`(SELECT json_object('id', f.id, 'familyNumber', f.family_number, 'name', f.name) FROM family f WHERE f.id = "student"."family_id")`,
  guardians: sql<string>`(SELECT json_group_array(json_object('id', g.id, 'createdAt', g.created_at, 'updatedAt', g.updated_at, 'studentId', g.student_id, 'parentId', g.parent_id, 'userId', p.user_id, 'firstName', ${guardianName.firstName}, 'lastName', ${guardianName.lastName}, 'relationship', g.relationship, 'canPickUp', g.can_pick_up, 'canRequestChanges', g.can_request_changes, 'receivesNotifications', g.receives_notifications, 'restricted', g.restricted, 'reason', g.restriction_reason, 'documentId', g.restriction_document_id, 'from', g.restriction_from, 'until', g.restriction_until)) FROM guardian g INNER JOIN parent p ON p.id = g.parent_id INNER JOIN user u ON u.id = p.user_id ${copyJoin("gc", sql.raw("p.user_id"), g.schoolOf())} WHERE g.student_id = "student"."id")`,
  trustedPeople: trustedPeopleJson(students.id),
  trustedAddresses: trustedAddressesJson(students.id),
};

/** A guardian as the sub-select builds it: the flags as stored (0/1), the restriction's fields flat. */
const GuardianJson = StudentGuardian.pick({
  id: true,
  createdAt: true,
  updatedAt: true,
  studentId: true,
  parentId: true,
  userId: true,
  firstName: true,
  lastName: true,
  relationship: true,
}).extend({
  canPickUp: z.number(),
  canRequestChanges: z.number(),
  receivesNotifications: z.number(),
  restricted: z.number(),
  reason: z.string().nullable(),
  documentId: z.number().nullable(),
  from: z.string().nullable(),
  until: z.string().nullable(),
});

const TrustedPeopleJson = z.array(
  z.object({ id: z.number(), name: z.string(), relationship: z.string(), phone: z.string() }),
);
/** The detail of a student this caller may see (404 otherwise): one query, so one D1 round trip. */
export async function studentDetail(ctx: SchoolCtx, id: number): Promise<z.infer<typeof Detail>> {
  const row = await Students.select(ctx, { ...detailFields, ownChild: ownChildField(ctx) })
    .where(studentResource.scoped(ctx, eq(students.id, id), "read"))
    .first();
  if (!row) throw notFound(m`Student ${id} not found`);
  const staff = seesRestriction(ctx);
  const guardianRows = parseJson(z.array(GuardianJson), row.guardians);
  const trustedPeople = parseJson(TrustedPeopleJson, row.trustedPeople);
  const guardianList = guardianRows.map((g) => ({
    id: g.id,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
    studentId: g.studentId,
    parentId: g.parentId,
    userId: g.userId,
    firstName: g.firstName,
    lastName: g.lastName,
    relationship: g.relationship,
    canPickUp: Boolean(g.canPickUp),
    canRequestChanges: Boolean(g.canRequestChanges),
    receivesNotifications: Boolean(g.receivesNotifications),
    restricted: Boolean(g.restricted),
    restriction:
      staff && g.restricted ? { reason: g.reason, documentId: g.documentId, from: g.from, until: g.until } : null,
  }));
  return {
    ...toStudent(row),
    family: row.family ? parseJson(Detail.shape.family, row.family) : null,
    guardians: guardianList.sort((a, b) => a.id - b.id),
    // Their own parents call them; anyone else sees the phones with user.contact only.
    trustedPeople: trustedPeople.map((p) => ({
      ...p,
      ...contactOf(ctx, null, { phone: p.phone }, row.ownChild === 1),
    })),
    trustedAddresses: parseJson(Detail.shape.trustedAddresses, row.trustedAddresses),
  };
}

const detailRoute = defineRoute({
  method: "get",
  path: "/api/v1/student/{id}/detail",
  tag: "People",
  operationId: "getStudentDetail",
  summary:
    "Get a student's detail: family, guardians (capabilities, restriction), groups, approved trusted people and addresses",
  description: `${READ_DESCRIPTION} One D1 round trip for staff.`,
  access: "member",
  context: readerContext,
  request: { params: IdParams },
  responses: { 200: json(Detail, "The student's detail") },
});

export const getStudentDetail = operation(detailRoute, (ctx, { params }) => studentDetail(ctx, params.id));
