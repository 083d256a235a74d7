/**
 * Guardians: a parent's link to a student, with the relationship and what they may do (pick up,
 * request changes, receive notifications), and the school's restriction ("may not pick up",
 * optionally backed by a document, between inclusive dates). A guardian is made under its student
 * (`POST /api/v1/student/{id}/guardian`) and then managed by its own id
 * (`/api/v1/student-guardian/{id}`). The parent and the student must be of this school (404).
 */
import { z } from "@hono/zod-openapi";
import { and, eq, isNull } from "drizzle-orm";
import { documents } from "../../db/schema/document";
import { parents } from "../../db/schema/parent";
import { guardians, students } from "../../db/schema/student";
import { commit, insertedId } from "../../db/write";
import { type Ctx, ctxOf, tenant } from "../../lib/context";
import { badRequest, notFound } from "../../lib/errors";
import { recordId } from "../../lib/params";
import { defineResource, IdParams, RecordBase } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody } from "../../lib/route";
import { text } from "../../lib/text";
import { permissions } from "./permissions";

const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
const Relationship = z.enum(RELATIONSHIPS).openapi({ example: "mother" });
const Day = z.iso.date().openapi({ example: "2026-12-01", description: "YYYY-MM-DD, inclusive" });

const Record = RecordBase.extend({
  studentId: z.number().int().openapi({ example: 1 }),
  parentId: z.number().int().openapi({ example: 1 }),
  relationship: Relationship,
  canPickUp: z.boolean(),
  canRequestChanges: z.boolean(),
  receivesNotifications: z.boolean(),
  restricted: z.boolean(),
  restrictionReason: z.string().nullable(),
  restrictionDocumentId: z.number().int().nullable(),
  restrictionFrom: Day.nullable(),
  restrictionUntil: Day.nullable(),
});

export const guardianResource = defineResource({
  name: "studentGuardian",
  plural: "studentGuardians",
  label: "Guardian",
  entity: "guardian",
  path: "/api/v1/student-guardian",
  tag: "People",
  scope: "school",
  table: guardians,
  record: Record,
  toRecord: (row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    studentId: row.studentId,
    parentId: row.parentId,
    relationship: row.relationship,
    canPickUp: row.canPickUp,
    canRequestChanges: row.canRequestChanges,
    receivesNotifications: row.receivesNotifications,
    restricted: row.restricted,
    restrictionReason: row.restrictionReason,
    restrictionDocumentId: row.restrictionDocumentId,
    restrictionFrom: row.restrictionFrom,
    restrictionUntil: row.restrictionUntil,
  }),
  conflictMessage: "This parent is already a guardian of this student",
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

/** Links a parent of this school to a student of this school (404 for either elsewhere; 409 if linked). */
export async function addGuardianTo(ctx: Ctx, studentId: number, input: z.infer<typeof AddBody>) {
  const { db } = ctx.deps;
  const [student, parent] = await db.batch([
    db
      .select({ id: students.id })
      .from(students)
      .where(and(eq(students.id, studentId), tenant(ctx, students), isNull(students.deletedAt)))
      .limit(1),
    db
      .select({ id: parents.id, relationship: parents.relationship })
      .from(parents)
      .where(and(eq(parents.id, input.parentId), tenant(ctx, parents)))
      .limit(1),
  ]);
  if (!student[0]) throw notFound("Student", studentId);
  const found = parent[0];
  if (!found) throw notFound("Parent", input.parentId);
  const { parentId, relationship, ...capabilities } = input;
  const [inserted] = await commit(
    ctx,
    [
      ...resource.writes.insert(ctx, {
        studentId,
        parentId,
        relationship: relationship ?? found.relationship,
        ...capabilities,
      }),
      resource.readOne(ctx, insertedId(guardians)),
    ],
    { conflict: resource.config.conflictMessage },
  );
  const [row] = inserted as unknown[];
  if (!row) throw new Error("guardian: the created row was not read back");
  return resource.toRecord(row as never, ctx);
}

export const addGuardian = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/student/{id}/guardian",
    tag: "People",
    operationId: "addStudentGuardian",
    summary: "Make a parent a guardian of the student, with their capabilities",
    access: permissions.write,
    audit: "guardian",
    errors: [409],
    request: { params: IdParams, body: jsonBody(AddBody, "StudentGuardianCreate") },
    responses: { 201: json(resource.record, "The guardian link") },
  }),
  async (c) => c.json(await addGuardianTo(ctxOf(c), c.req.valid("param").id, c.req.valid("json")), 201),
);

export const updateGuardian = resource.update({
  access: permissions.write,
  input: z.object({
    relationship: Relationship.optional(),
    canPickUp: Capabilities.canPickUp,
    canRequestChanges: Capabilities.canRequestChanges,
    receivesNotifications: Capabilities.receivesNotifications,
  }),
  summary: "Change a guardian's relationship or capabilities",
});

export const removeGuardian = resource.delete({
  access: permissions.write,
  summary: "Remove a guardian link (the parent stays a parent of the school)",
});

const RestrictionBody = z
  .strictObject({
    restricted: z.boolean().openapi({ description: "true sets the restriction; false clears it (send nothing else)" }),
    reason: text({ max: 500 }).optional().openapi({ example: "Court order 2026/118" }),
    documentId: recordId().optional().openapi({ description: "A document of this school backing it (404 otherwise)" }),
    from: Day.optional().openapi({ description: "First day it holds (inclusive); none: from now on" }),
    until: Day.optional().openapi({ description: "Last day it holds (inclusive); none: until cleared" }),
  })
  .superRefine((v, issue) => {
    if (v.restricted && !v.reason) issue.addIssue({ code: "custom", path: ["reason"], message: "Required" });
    if (!v.restricted && (v.reason ?? v.documentId ?? v.from ?? v.until) !== undefined) {
      issue.addIssue({ code: "custom", path: ["restricted"], message: "Clearing a restriction takes no other field" });
    }
    if (v.from && v.until && v.from > v.until) {
      issue.addIssue({ code: "custom", path: ["until"], message: "Must not be before from" });
    }
  });

export const restrictGuardian = resource.action({
  name: "restriction",
  verb: "restrict",
  access: permissions.restrict,
  input: RestrictionBody as unknown as z.ZodObject<{
    restricted: z.ZodBoolean;
    reason: z.ZodOptional<z.ZodString>;
    documentId: z.ZodOptional<z.ZodNumber>;
    from: z.ZodOptional<z.ZodISODate>;
    until: z.ZodOptional<z.ZodISODate>;
  }>,
  summary: "Set or clear the school's restriction on a guardian (may not pick the student up)",
  description:
    "School admins only. Dates are inclusive; reversed dates are a 400; a document of another school is a 404. Audited.",
  set: async (ctx, input) => {
    if (!input.restricted) {
      return {
        restricted: false,
        restrictionReason: null,
        restrictionDocumentId: null,
        restrictionFrom: null,
        restrictionUntil: null,
      };
    }
    if (input.from && input.until && input.from > input.until) throw badRequest("until must not be before from");
    if (input.documentId !== undefined) {
      const [doc] = await ctx.deps.db
        .select({ id: documents.id })
        .from(documents)
        .where(and(eq(documents.id, input.documentId), tenant(ctx, documents)))
        .limit(1);
      if (!doc) throw notFound("Document", input.documentId);
    }
    return {
      restricted: true,
      restrictionReason: input.reason ?? null,
      restrictionDocumentId: input.documentId ?? null,
      restrictionFrom: input.from ?? null,
      restrictionUntil: input.until ?? null,
    };
  },
});
