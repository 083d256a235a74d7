/**
 * The answers of an invitation: one row per invited family (`GET /api/v1/invitation/{id}/responses`)
 * and one per invited child (`/api/v1/invitation-student-response`). The creator of an invitation
 * (and `invitation.manage`) sees every answer; a recipient their own family's answers and the rows
 * of the children they are a guardian of. The creator adds a child (POST) or withdraws a child not
 * answered yet (DELETE); a guardian changes a child's answer (PUT, as ./answers.ts).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  ANSWERS,
  InvitationResponses,
  InvitationStudentResponses,
  Invitations,
  invitationResponses,
  invitationStudentResponses,
  invitations,
  RESPONSE_STATUSES,
} from "../../db/schema/invitation";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { and, eq, isNull, type SQL, sql } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { PageQuery, pageOf } from "../../lib/pagination";
import { idFilter, recordId } from "../../lib/params";
import { defineResource, type Filters } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { actedFor } from "../delegate/api";
import { giveAnswers, toStudentResponse } from "./answers";
import {
  Answer,
  actedUsers,
  actingContext,
  createdByMe,
  familyStatus,
  ownStudents,
  pageOfRows,
  ResponseRecord,
  StudentResponseRecord,
  visibleInvitation,
} from "./common";
import { inviteStatements } from "./invite";
import { permissions } from "./permissions";
import { mayChange } from "./resource";

/** Who sees a family's answer: `invitation.manage`, the invitation's creator, a guardian of a child in it. */
const visibleResponse = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage)
    ? undefined
    : sql`(${Invitations.exists(ctx, eq(invitations.id, invitationResponses.invitationId), createdByMe(ctx))} OR ${InvitationStudentResponses.exists(
        ctx,
        eq(invitationStudentResponses.responseId, invitationResponses.id),
        sql`${invitationStudentResponses.studentId} IN ${ownStudents(ctx)}`,
      )})`;

/** Who sees a child's answer: `invitation.manage`, the invitation's creator, a guardian of the child. */
const visibleStudentResponse = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage)
    ? undefined
    : sql`(${Invitations.exists(ctx, eq(invitations.id, invitationStudentResponses.invitationId), createdByMe(ctx))} OR ${invitationStudentResponses.studentId} IN ${ownStudents(ctx)})`;

// ---- A family's answers of an invitation ----------------------------------------------------------

const responsesRoute = defineRoute({
  method: "get",
  path: "/api/v1/invitation/{id}/responses",
  tag: "Communication",
  operationId: "listInvitationResponses",
  summary: "The families' answers to an invitation (paginated), oldest first",
  description:
    "Its creator and staff see every family's; a recipient their own family's. An invitation the caller does not " +
    "see is a 404. Each child's answer: GET /api/v1/invitation-student-response/response/{responseId}.",
  access: permissions.read,
  module: "invitations",
  context: actingContext,
  request: {
    params: z.object({
      id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "Invitation id" }),
    }),
    query: z.strictObject({
      ...PageQuery.shape,
      status: z.enum(RESPONSE_STATUSES).optional().openapi({ description: "pending, accepted, declined or partial" }),
    }),
  },
  responses: {
    200: json(
      pageOf(ResponseRecord.openapi("InvitationResponse"), "InvitationResponsePage"),
      "A page of the families' answers",
    ),
  },
});

export async function listInvitationResponses(ctx: SchoolCtx, { params, query }: InputOf<typeof responsesRoute>) {
  const where = and(
    eq(invitationResponses.invitationId, params.id),
    query.status ? eq(invitationResponses.status, query.status) : undefined,
    visibleResponse(ctx),
  );
  return pageOfRows(
    ctx,
    {
      rows: InvitationResponses.select(ctx).where(where),
      total: InvitationResponses.select(ctx, { id: invitationResponses.id }).where(where).count(),
      order: [{ by: invitationResponses.createdAt }, { by: invitationResponses.id }],
      parent: {
        read: Invitations.select(ctx, { id: invitations.id })
          .where(eq(invitations.id, params.id), visibleInvitation(ctx))
          .limit(1),
        missing: () => notFound(m`Invitation ${params.id} not found`),
      },
    },
    query,
    (r) => ({
      id: r.id,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      invitationId: r.invitationId,
      familyId: r.familyId,
      status: r.status,
      respondedBy: r.respondedBy,
      respondedAt: r.respondedAt,
    }),
  );
}
export const listInvitationResponsesOperation = operation(responsesRoute, listInvitationResponses);

// ---- Each child's answer --------------------------------------------------------------------------

export const studentResponse = defineResource({
  name: "invitationStudentResponse",
  plural: "invitationStudentResponses",
  label: m`Invitation student response`,
  path: "/api/v1/invitation-student-response",
  tag: "Communication",
  scope: "school",
  module: "invitations",
  data: InvitationStudentResponses,
  record: StudentResponseRecord,
  toRecord: (_ctx, row) => toStudentResponse(row),
  visibleTo: (ctx) => visibleStudentResponse(ctx),
  context: actingContext,
  conflictMessage: m`This child is already invited`,
});

const Id = recordId();
const filters = {
  invitationId: {
    schema: idFilter("An invitation id"),
    where: (_ctx: Ctx, v: number) => eq(invitationStudentResponses.invitationId, v),
    example: "1",
  },
  responseId: {
    schema: idFilter("A family's response id"),
    where: (_ctx: Ctx, v: number) => eq(invitationStudentResponses.responseId, v),
    example: "1",
  },
  studentId: {
    schema: idFilter("A student id"),
    where: (_ctx: Ctx, v: number) => eq(invitationStudentResponses.studentId, v),
    example: "1",
  },
  answer: {
    schema: z.enum(ANSWERS).optional().openapi({ description: "pending, accepted or declined" }),
    where: (_ctx: Ctx, v: (typeof ANSWERS)[number]) => eq(invitationStudentResponses.answer, v),
    example: "pending",
  },
} satisfies Filters;

export const listStudentResponses = studentResponse.list({
  access: permissions.read,
  filters,
  summary: "List invited children's answers (paginated), oldest first",
  description:
    "invitation.manage: every one of the school; anyone else those of the invitations they created and of the " +
    "children they are a guardian of (or a delegate of a guardian of).",
});

const byResponseRoute = defineRoute({
  method: "get",
  path: "/api/v1/invitation-student-response/response/{responseId}",
  tag: "Communication",
  operationId: "listStudentResponsesOfResponse",
  summary: "The children's answers of one family's response (paginated), oldest first",
  description: "A response the caller does not see is a 404 (see GET /api/v1/invitation/{id}/responses).",
  access: permissions.read,
  module: "invitations",
  context: actingContext,
  request: {
    params: z.object({
      responseId: Id.openapi({ param: { name: "responseId", in: "path" }, example: 1, description: "Response id" }),
    }),
    query: z.strictObject({ ...PageQuery.shape, answer: filters.answer.schema }),
  },
  responses: { 200: json(pageOf(StudentResponseRecord, "InvitationStudentResponseListPage"), "A page of answers") },
});

export async function listStudentResponsesOfResponse(
  ctx: SchoolCtx,
  { params, query }: InputOf<typeof byResponseRoute>,
) {
  const where = and(
    eq(invitationStudentResponses.responseId, params.responseId),
    query.answer ? eq(invitationStudentResponses.answer, query.answer) : undefined,
    visibleStudentResponse(ctx),
  );
  return pageOfRows(
    ctx,
    {
      rows: InvitationStudentResponses.select(ctx).where(where),
      total: InvitationStudentResponses.select(ctx, { id: invitationStudentResponses.id }).where(where).count(),
      order: [{ by: invitationStudentResponses.createdAt }, { by: invitationStudentResponses.id }],
      parent: {
        read: InvitationResponses.select(ctx, { id: invitationResponses.id })
          .where(eq(invitationResponses.id, params.responseId), visibleResponse(ctx))
          .limit(1),
        missing: () => notFound(m`Invitation response ${params.responseId} not found`),
      },
    },
    query,
    toStudentResponse,
  );
}
export const listStudentResponsesOfResponseOperation = operation(byResponseRoute, listStudentResponsesOfResponse);

export const getStudentResponse = studentResponse.get({ access: permissions.read });

// ---- Add a child, change a child's answer, withdraw a child ------------------------------------

const createStudentResponse = studentResponse.create({
  access: permissions.write,
  input: z.object({
    invitationId: Id.openapi({ example: 1 }),
    studentId: Id.openapi({ example: 2, description: "The child to invite (a guardian: another family's)" }),
  }),
  summary: "Invite one more child to an open invitation",
  description:
    "Its creator or staff (a recipient: 403; an invitation not seen: 404), while it is open (409). The rules of " +
    "inviting: a guardian invites other families' children (422); a child already invited is a 409.",
  errors: [422],
  examples: { 422: "Student 7: a guardian invites other families' children, not their own" },
});

export async function addInvitedChild(ctx: SchoolCtx, { body }: InputOf<typeof createStudentResponse.route>) {
  const invitation = await mayChange(ctx, body.invitationId);
  if (invitation.status !== "open")
    throw conflict(
      m`Invitation ${body.invitationId} is ${stateName(invitation.status)}; only an open invitation can be changed`,
    );
  const batch = new Batch(ctx);
  const kid = batch.read(
    Students.select(ctx, {
      familyId: students.familyId,
      own: sql<number>`${students.id} IN ${ownStudents(ctx)}`,
      inviterFamily: sql<
        number | null
      >`(SELECT p.family_id FROM parent p JOIN invitation i ON i.parent_id = p.id WHERE i.id = ${body.invitationId})`,
    }).where(eq(students.id, body.studentId), isNull(students.deletedAt)),
  );
  const family = batch.read(
    InvitationResponses.select(ctx, { id: invitationResponses.id, familyId: invitationResponses.familyId }).where(
      eq(invitationResponses.invitationId, body.invitationId),
    ),
  );
  const teacher = batch.read(
    Teachers.select(ctx, { id: teachers.id })
      .where(eq(teachers.userId, ctx.userId ?? 0))
      .limit(1),
  );
  const guardian = batch.read(
    Parents.select(ctx, { id: parents.id })
      .where(actedFor(parents.userId, actedUsers(ctx)))
      .limit(1),
  );
  const r = await batch.commit();
  const student = r.get(kid)[0];
  if (!student) throw notFound(m`Student ${body.studentId} not found`);
  const anyone = ctx.can(permissions.manage) || r.get(teacher).length > 0 || r.get(guardian).length === 0;
  const ownFamily = student.inviterFamily !== null && student.familyId === student.inviterFamily;
  if (student.own === 1 || ownFamily) {
    if (invitation.kind === "go_home" || !anyone) {
      throw unprocessable(m`Student ${body.studentId}: a guardian invites other families' children, not their own`);
    }
  }
  const existing =
    student.familyId === null ? undefined : r.get(family).find((f) => f.familyId === student.familyId)?.id;
  const write = new Batch(ctx).add(
    ...inviteStatements(ctx, body.invitationId, [
      { studentId: body.studentId, familyId: student.familyId, responseId: existing },
    ]),
  );
  if (existing !== undefined) {
    write.add(
      ...InvitationResponses.update(
        ctx,
        eq(invitationResponses.id, existing),
        { status: sql`${familyStatus}` },
        "invite",
      ),
    );
  }
  const back = write.read(studentResponse.readOne(ctx, InvitationStudentResponses.insertedId()));
  const [row] = (await write.commit(studentResponse.messages)).get(back);
  if (!row) throw new Error("invitation student response: the created row was not read back");
  return toStudentResponse(row);
}
export const createStudentResponseOperation = operation(createStudentResponse.route, addInvitedChild);

const updateStudentResponse = studentResponse.update({
  access: permissions.write,
  input: z.object({ answer: Answer }),
  summary: "Accept or decline (again) for one invited child",
  description:
    "A guardian of the child (or their delegate) with the right to request changes (422), while the invitation is " +
    "open and not expired (409); the rules of respond (a restricted guardian may only decline). The creator of the " +
    "invitation does not answer for other families' children (404 unless they are the child's guardian).",
  errors: [422],
  examples: {
    422: "You may not accept for student 7: this guardian may not request changes to the student's way home",
  },
});

export async function answerForChild(ctx: SchoolCtx, { params, body }: InputOf<typeof updateStudentResponse.route>) {
  await giveAnswers(ctx, { studentResponseId: params.id }, { answer: body.answer }, "change");
}
export const updateStudentResponseOperation = operation(updateStudentResponse.route, answerForChild);

const deleteStudentResponse = studentResponse.delete({
  access: permissions.write,
  summary: "Withdraw an invited child not answered yet",
  description:
    "The invitation's creator or staff (a recipient: 403). An answered child is a 409: the answer stays on record. " +
    "A family left with no child loses its response row.",
  errors: [409],
  examples: { 409: "The child of invitation student response 42 answered (accepted); the answer stays on record" },
});

export async function withdrawInvitedChild(ctx: SchoolCtx, { params }: InputOf<typeof deleteStudentResponse.route>) {
  const { id } = params;
  const row = await InvitationStudentResponses.select(ctx, {
    invitationId: invitationStudentResponses.invitationId,
    responseId: invitationStudentResponses.responseId,
  })
    .where(eq(invitationStudentResponses.id, id), visibleStudentResponse(ctx))
    .first();
  if (!row) throw notFound(m`Invitation student response ${id} not found`);
  await mayChange(ctx, row.invitationId);
  const pending = { column: invitationStudentResponses.answer, states: ["pending"] };
  const batch = new Batch(ctx).add(
    ...InvitationStudentResponses.deleteOne(ctx, id, { where: eq(invitationStudentResponses.answer, "pending") }),
    ...InvitationResponses.update(
      ctx,
      eq(invitationResponses.id, row.responseId),
      { status: sql`${familyStatus}` },
      "withdraw",
    ),
    ...InvitationResponses.delete(
      ctx,
      and(
        eq(invitationResponses.id, row.responseId),
        sql`NOT EXISTS (SELECT 1 FROM invitation_student_response s WHERE s.response_id = ${row.responseId})`,
      ),
    ),
  );
  await studentResponse.commit(ctx, id, batch, {
    diagnose: {
      action: "delete",
      from: pending,
      conflict: (state) =>
        m`The child of invitation student response ${id} answered (${stateName(state)}); the answer stays on record`,
    },
  });
}
export const deleteStudentResponseOperation = operation(deleteStudentResponse.route, withdrawInvitedChild);
