/**
 * Guardians: a parent's link to a student, with the relationship and what they may do (pick up,
 * request changes, receive notifications), and the school's restriction ("may not pick up",
 * optionally backed by a document, between inclusive dates). A guardian is made under its student
 * (`POST /api/v1/student/{id}/guardian`) and then managed by its own id
 * (`/api/v1/student-guardian/{id}`). The parent and the student must be of this school (404).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { Users, users } from "../../db/schema/core";
import { Documents, documents } from "../../db/schema/document";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { SchoolPeople } from "../../db/schema/user";
import { eq, isNull } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { badRequest, notFound } from "../../lib/errors";
import { factChanged, type LinkFacts, type Redecision } from "../../lib/facts";
import { m } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineResource, IdParams, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { identity } from "../user/api";
import { permissions } from "./permissions";

const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
const Relationship = z.enum(RELATIONSHIPS).openapi({ example: "mother" });
const Day = z.iso.date().openapi({ example: "2026-12-01", description: "YYYY-MM-DD, inclusive" });

/**
 * A guardian link as every operation answers it: the student detail's `guardians` and the link's
 * own operations. The flat `restriction*` fields are what the link's operations answered before the
 * link had this shape (they answered its row): kept there, optional, for the clients that read them.
 */
/** The flat restriction fields the link's operations answered before it had this shape. */
const LEGACY = {
  deprecated: true,
  description:
    "`restriction`'s field without the prefix (restrictionFrom: restriction.from), in the link's own answers",
};

export const StudentGuardian = RecordBase.extend({
  id: z.number().int().min(1).openapi({ example: 1, description: "The guardian link's id" }),
  studentId: z.number().int().openapi({ example: 1 }),
  parentId: z.number().int().openapi({ example: 1 }),
  userId: z.number().int().openapi({ example: 4 }),
  firstName: z.string(),
  lastName: z.string(),
  relationship: Relationship,
  canPickUp: z.boolean().openapi({ description: "May pick the student up" }),
  canRequestChanges: z.boolean().openapi({ description: "May ask to change how the student goes home" }),
  receivesNotifications: z.boolean().openapi({ description: "Gets the school's notifications about the student" }),
  restricted: z.boolean().openapi({ description: "The school restricted this guardian (see restriction)" }),
  restriction: z
    .object({
      reason: z.string().nullable().openapi({ description: "Why the school restricted them" }),
      documentId: z.number().int().nullable().openapi({ description: "A document behind it (a court order), if any" }),
      from: Day.nullable().openapi({ description: "The first day it holds; null: from always" }),
      until: Day.nullable().openapi({ description: "The last day it holds; null: until lifted" }),
    })
    .nullable()
    .openapi({
      description: "Shown to holders of student.read or guardian.restrict; null to others or when not restricted",
    }),
  restrictionReason: z.string().nullable().optional().openapi(LEGACY),
  restrictionDocumentId: z.number().int().nullable().optional().openapi(LEGACY),
  restrictionFrom: Day.nullable().optional().openapi(LEGACY),
  restrictionUntil: Day.nullable().optional().openapi(LEGACY),
}).openapi("StudentGuardian");

/** Whether this caller sees a guardian's restriction: staff who read students, or who set restrictions. */
export const seesRestriction = (ctx: SchoolCtx) => ctx.can(permissions.read) || ctx.can(permissions.restrict);

/** The guardian's name as this school knows it (src/modules/user/identity.ts). */
const copy = SchoolPeople.alias("guardian_copy");
const named = identity(users, copy.table);

export const guardianResource = defineResource({
  name: "studentGuardian",
  plural: "studentGuardians",
  label: m`Guardian`,
  path: "/api/v1/student-guardian",
  tag: "People",
  scope: "school",
  data: Guardians,
  record: StudentGuardian,
  view: {
    fields: { ...columnsOf(guardians), userId: parents.userId, firstName: named.firstName, lastName: named.lastName },
    join: (q) =>
      q
        .join(Parents, eq(parents.id, guardians.parentId))
        .join(Users, eq(users.id, parents.userId))
        .join(copy, eq(copy.table.userId, parents.userId), "left"),
  },
  toRecord: (ctx, row) => {
    const shown = seesRestriction(ctx) && row.restricted;
    return {
      ...timestamps(row),
      studentId: row.studentId,
      parentId: row.parentId,
      userId: row.userId,
      firstName: row.firstName,
      lastName: row.lastName,
      relationship: row.relationship,
      canPickUp: row.canPickUp,
      canRequestChanges: row.canRequestChanges,
      receivesNotifications: row.receivesNotifications,
      restricted: row.restricted,
      restriction: shown
        ? {
            reason: row.restrictionReason,
            documentId: row.restrictionDocumentId,
            from: row.restrictionFrom,
            until: row.restrictionUntil,
          }
        : null,
      restrictionReason: shown ? row.restrictionReason : null,
      restrictionDocumentId: shown ? row.restrictionDocumentId : null,
      restrictionFrom: shown ? row.restrictionFrom : null,
      restrictionUntil: shown ? row.restrictionUntil : null,
    };
  },
  conflictMessage: m`This parent is already a guardian of this student`,
});
const resource = guardianResource;

const Capabilities = {
  relationship: Relationship.optional().openapi({ description: "Default: the parent's own relationship" }),
  canPickUp: z.boolean().optional().openapi({ description: "Default true" }),
  canRequestChanges: z.boolean().optional().openapi({ description: "Default true" }),
  receivesNotifications: z.boolean().optional().openapi({ description: "Default true" }),
};

const AddBody = z.strictObject({
  parentId: recordId().openapi({ example: 1, description: "A parent of this school (404 otherwise)" }),
  ...Capabilities,
});

const addRoute = defineRoute({
  method: "post",
  path: "/api/v1/student/{id}/guardian",
  tag: "People",
  operationId: "addStudentGuardian",
  summary: "Make a parent a guardian of the student, with their capabilities",
  access: permissions.write,
  audit: "guardian",
  errors: [409],
  examples: { 409: "This parent is already a guardian of this student" },
  request: { params: IdParams, body: jsonBody(AddBody, "StudentGuardianCreate") },
  responses: { 201: json(resource.record, "The guardian link") },
});

/** Links a parent of this school to a student of this school (404 for either elsewhere; 409 if linked). */
export async function addGuardianTo(ctx: SchoolCtx, { params, body }: InputOf<typeof addRoute>) {
  const studentId = params.id;
  const reads = new Batch(ctx);
  const student = reads.read(
    Students.select(ctx, { id: students.id }).where(eq(students.id, studentId), isNull(students.deletedAt)).limit(1),
  );
  const parent = reads.read(
    Parents.select(ctx, { id: parents.id, relationship: parents.relationship })
      .where(eq(parents.id, body.parentId))
      .limit(1),
  );
  const found = await reads.commit();
  if (!found.get(student)[0]) throw notFound(m`Student ${studentId} not found`);
  const [own] = found.get(parent);
  if (!own) throw notFound(m`Parent ${body.parentId} not found`);
  const { parentId, relationship, ...capabilities } = body;
  const batch = new Batch(ctx).add(
    ...resource.writes.insert(ctx, {
      studentId,
      parentId,
      relationship: relationship ?? own.relationship,
      ...capabilities,
    }),
  );
  const created = batch.read(resource.readOne(ctx, Guardians.insertedId()));
  const [row] = (await batch.commit(resource.messages)).get(created);
  if (!row) throw new Error("guardian: the created row was not read back");
  return resource.toRecord(ctx, row);
}

export const addGuardian = operation(addRoute, addGuardianTo);

/**
 * What a change of a link decided again about the exit permissions standing on it (./exit-permission
 * `redecide`), prepared before the change's batch and added to it; dispatched after the commit.
 */
const redecided = new WeakMap<object, Redecision>();

/** Prepares the decision again when a link's change can break permissions (never when it only widens them). */
async function prepare(ctx: SchoolCtx, key: object, linkId: number, link: Partial<LinkFacts> | null) {
  redecided.set(key, await factChanged(ctx, { fact: "guardian", linkId, link }));
}

export const getGuardian = resource.get({
  access: permissions.read,
  summary: "Get a guardian link by id (its ETag is what an update's If-Match names)",
});

const updated = resource.update({
  access: permissions.write,
  input: z.object({
    relationship: Relationship.optional(),
    canPickUp: Capabilities.canPickUp,
    canRequestChanges: Capabilities.canRequestChanges,
    receivesNotifications: Capabilities.receivesNotifications,
  }),
  summary: "Change a guardian's relationship or capabilities",
  description:
    "Taking away canPickUp or canRequestChanges withdraws, in the same write, the student's exit permissions from today on that stood on it (the guardian's pickups; the requests they asked), gives their seats back and tells the family and the office.",
  values: async (ctx, { id, body }) => {
    if (body.canPickUp === false || body.canRequestChanges === false) {
      await prepare(ctx, body, id, { canPickUp: body.canPickUp, canRequestChanges: body.canRequestChanges });
    }
    return body;
  },
  also: (_ctx, { body }) => redecided.get(body)?.statements ?? [],
});
export const updateGuardian = operation(updated.route, async (ctx, input) => {
  await updated.run(ctx, input);
  await redecided.get(input.body)?.dispatch();
});

const removed = resource.delete({
  access: permissions.write,
  summary: "Remove a guardian link (the parent stays a parent of the school)",
  description:
    "The student's exit permissions from today on that stood on the link (the guardian's pickups; the requests they asked) are withdrawn in the same write, their seats given back, and the family and the office told.",
  check: (ctx, { id }) => prepare(ctx, ctx, id, null),
  also: (ctx) => redecided.get(ctx)?.statements ?? [],
});
export const removeGuardian = operation(removed.route, async (ctx, input) => {
  await removed.run(ctx, input);
  await redecided.get(ctx)?.dispatch();
});

const RestrictionBody = z
  .strictObject({
    restricted: z.boolean().openapi({ description: "true sets the restriction; false clears it (send nothing else)" }),
    reason: text({ max: 500 }).optional().openapi({ example: "Court order 2026/118" }),
    documentId: recordId().optional().openapi({ description: "A document of this school backing it (404 otherwise)" }),
    from: schoolDate("First day it holds (inclusive); none: from now on").optional(),
    until: schoolDate("Last day it holds (inclusive); none: until cleared").optional(),
  })
  .superRefine((v, issue) => {
    if (v.restricted && !v.reason) issue.addIssue({ code: "custom", path: ["reason"], message: m`Required`.render() });
    if (!v.restricted && (v.reason ?? v.documentId ?? v.from ?? v.until) !== undefined) {
      issue.addIssue({
        code: "custom",
        path: ["restricted"],
        message: m`Clearing a restriction takes no other field`.render(),
      });
    }
    if (v.from && v.until && v.from > v.until) {
      issue.addIssue({ code: "custom", path: ["until"], message: m`Must not be before from`.render() });
    }
  });

const restriction = resource.action({
  name: "restriction",
  verb: "restrict",
  access: permissions.restrict,
  input: RestrictionBody,
  summary: "Set or clear the school's restriction on a guardian (may not pick the student up)",
  description:
    "School admins only. Dates are inclusive; reversed dates are a 400; a document of another school is a 404. Audited. " +
    "A restriction withdraws, in the same write, the student's exit permissions on the days it covers from today on that stood on the guardian (their pickups; the requests they asked), gives their seats back and tells the family and the office.",
  also: (ctx) => redecided.get(ctx)?.statements ?? [],
  set: async (ctx, { id, body: input }) => {
    if (!input.restricted) {
      return {
        restricted: false,
        restrictionReason: null,
        restrictionDocumentId: null,
        restrictionFrom: null,
        restrictionUntil: null,
      };
    }
    if (input.from && input.until && input.from > input.until) throw badRequest(m`until must not be before from`);
    if (input.documentId !== undefined) {
      const doc = await Documents.find(ctx, input.documentId, { id: documents.id });
      if (!doc) throw notFound(m`Document ${input.documentId} not found`);
    }
    const link = { restricted: true, restrictionFrom: input.from ?? null, restrictionUntil: input.until ?? null };
    await prepare(ctx, ctx, id, link);
    return {
      ...link,
      restrictionReason: input.reason ?? null,
      restrictionDocumentId: input.documentId ?? null,
    };
  },
});
export const restrictGuardian = operation(restriction.route, async (ctx, input) => {
  const record = await restriction.run(ctx, input);
  await redecided.get(ctx)?.dispatch();
  return record;
});
