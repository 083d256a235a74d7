/**
 * Answering an invitation: the invited children's guardians (and their valid delegates) accept or
 * decline per child, while the invitation is open and before its expiry. `POST /{id}/respond` gives
 * first answers (a child already answered: 409); `PUT /{id}/response` and the student
 * response's PUT change an answer. Every answer is one guarded UPDATE per child (from the answer
 * read, while the invitation is open and not expired): of two racing answers one wins, the other is
 * a 409. Accepting a go-home invitation then asks the child's exit permission through the rules
 * (`askExitPermissions`) and keeps its id, or the rules' refusal, on the child's row.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  InvitationResponses,
  InvitationStudentResponses,
  Invitations,
  invitationResponses,
  invitationStudentResponses,
  invitations,
} from "../../db/schema/invitation";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { and, eq, gt, type SQL, sql } from "../../db/sql";
import { GuardFailed, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { conflict, forbidden, notFound, unprocessable } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { idList, recordId } from "../../lib/params";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { actedFor } from "../delegate/api";
import { askExitPermissions, type ExitPermissionAsk } from "../exit-permission/api";
import { restrictedOn } from "../student/api";
import { Answer, actedUsers, actingContext, familyStatus, StudentResponseRecord, visibleInvitation } from "./common";
import { permissions } from "./permissions";

export const AnswerBody = z
  .object({
    answer: Answer,
    studentIds: idList({ max: 50, what: "Student" }).optional().openapi({
      description: "The invited children answered for (default: every invited child the caller may answer for)",
    }),
  })
  .strict();

type AnswerInput = z.output<typeof AnswerBody>;
type StudentResponse = z.output<typeof StudentResponseRecord>;

/** Which children's rows an answer is about: those of an invitation, or one child's row. */
type Target = { invitationId: number } | { studentResponseId: number };

const where = (target: Target): SQL =>
  "invitationId" in target
    ? eq(invitationStudentResponses.invitationId, target.invitationId)
    : eq(invitationStudentResponses.id, target.studentResponseId);

const label = (target: Target) =>
  "invitationId" in target
    ? notFound(m`Invitation ${target.invitationId} not found`)
    : notFound(m`Invitation student response ${target.studentResponseId} not found`);

const answerFields = {
  id: invitationStudentResponses.id,
  studentId: invitationStudentResponses.studentId,
  responseId: invitationStudentResponses.responseId,
  answer: invitationStudentResponses.answer,
  answeredBy: invitationStudentResponses.answeredBy,
  answeredAt: invitationStudentResponses.answeredAt,
  exitPermissionId: invitationStudentResponses.exitPermissionId,
  invitationId: invitations.id,
  kind: invitations.kind,
  status: invitations.status,
  date: invitations.date,
  expiresAt: invitations.expiresAt,
  pickup: invitations.pickup,
  parentId: invitations.parentId,
  routeId: invitations.routeId,
  stopId: invitations.stopId,
};

/**
 * The invitation and the invited children of `target` the caller answers for, with the guardian
 * links that let them (one D1 call): a guardian (or their delegate) their own children, through each
 * of their links; `invitation.manage` (the school records a family's answer) every invited child.
 */
async function answerable(ctx: SchoolCtx, target: Target) {
  if (ctx.can(permissions.manage)) {
    const rows = await InvitationStudentResponses.select(ctx, answerFields)
      .join(Invitations, eq(invitations.id, invitationStudentResponses.invitationId))
      .where(where(target))
      .all();
    return rows.map((r) => ({
      ...r,
      canRequestChanges: true,
      restricted: false,
      restrictionFrom: null,
      restrictionUntil: null,
    }));
  }
  return InvitationStudentResponses.select(ctx, {
    ...answerFields,
    canRequestChanges: guardians.canRequestChanges,
    restricted: guardians.restricted,
    restrictionFrom: guardians.restrictionFrom,
    restrictionUntil: guardians.restrictionUntil,
  })
    .join(Invitations, eq(invitations.id, invitationStudentResponses.invitationId))
    .join(Guardians, eq(guardians.studentId, invitationStudentResponses.studentId))
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(where(target), actedFor(parents.userId, actedUsers(ctx)))
    .all();
}

type Row = Awaited<ReturnType<typeof answerable>>[number];

/** Why this guardian link may not give `answer` on the invitation's day, or null. */
function barred(link: Row, answer: AnswerInput["answer"]): Message | null {
  if (!link.canRequestChanges) return m`this guardian may not request changes to the student's way home`;
  // A restricted guardian may still decline: declining changes nothing of the child's way home.
  if (answer === "accepted" && restrictedOn({ ...link, canPickUp: true }, link.date))
    return m`the school has restricted this guardian`;
  return null;
}

/** The condition of every answer's UPDATE: the invitation is open and not expired, now. */
const stillOpen = (ctx: SchoolCtx, invitationId: number) =>
  Invitations.exists(
    ctx,
    eq(invitations.id, invitationId),
    eq(invitations.status, "open"),
    gt(invitations.expiresAt, ctx.deps.clock.now().toISOString()),
  );

/**
 * Gives `answer` for the caller's invited children of `target` (`studentIds`: some of them). `first`:
 * only children not answered yet (else 409); else a change of an answer. Answers the children's rows.
 */
export async function giveAnswers(
  ctx: SchoolCtx,
  target: Target,
  input: AnswerInput,
  mode: "first" | "change",
): Promise<StudentResponse[]> {
  const rows = await answerable(ctx, target);
  const [first] = rows;
  if (!first) {
    // Not theirs to answer: a 404 unless the caller sees it (its creator): then it names why.
    if ("invitationId" in target) {
      const seen = await Invitations.select(ctx, { id: invitations.id })
        .where(eq(invitations.id, target.invitationId), visibleInvitation(ctx))
        .first();
      if (seen) throw forbidden(m`You are not a guardian of a child invited by invitation ${target.invitationId}`);
    }
    throw label(target);
  }
  // One entry per child: the best of the caller's links to them (one allowed to give this answer).
  const children = new Map<number, Row>();
  for (const r of rows) {
    const seen = children.get(r.studentId);
    if (!seen || (barred(seen, input.answer) !== null && barred(r, input.answer) === null))
      children.set(r.studentId, r);
  }
  // By default every child of theirs; a first answer, those not answered yet.
  const pendingOnes = [...children.values()].filter((c) => c.answer === "pending").map((c) => c.studentId);
  const asked = input.studentIds ?? (mode === "first" && pendingOnes.length ? pendingOnes : [...children.keys()]);
  const missing = asked.filter((id) => !children.has(id));
  if (missing.length) {
    throw notFound(
      missing.length > 1
        ? m`Invited children of yours ${missing.join(", ")} not found`
        : m`Invited child of yours ${missing.join(", ")} not found`,
    );
  }
  const chosen = asked.flatMap((id) => children.get(id) ?? []);
  if (first.status !== "open")
    throw conflict(m`Invitation ${first.invitationId} is ${stateName(first.status)}; it takes no answers`);
  const now = ctx.deps.clock.now().toISOString();
  if (first.expiresAt !== null && first.expiresAt <= now) {
    throw conflict(m`Invitation ${first.invitationId} expired at ${first.expiresAt}; it takes no answers`);
  }
  for (const c of chosen) {
    const why = barred(c, input.answer);
    if (why)
      throw unprocessable(
        input.answer === "accepted"
          ? m`You may not accept for student ${c.studentId}: ${why}`
          : m`You may not decline for student ${c.studentId}: ${why}`,
      );
  }
  if (mode === "first") {
    const answered = chosen.filter((c) => c.answer !== "pending");
    if (answered.length) {
      throw conflict(
        answered.length > 1
          ? m`Already answered for students ${answered.map((c) => c.studentId).join(", ")}; change an answer with PUT`
          : m`Already answered for student ${answered.map((c) => c.studentId).join(", ")}; change an answer with PUT`,
      );
    }
  }
  const made = chosen.filter((c) => input.answer === "declined" && c.exitPermissionId !== null);
  if (made.length) {
    throw conflict(
      m`The acceptance for student ${made[0]?.studentId} made exit permission ${made[0]?.exitPermissionId}; cancel that permission instead`,
    );
  }
  // What changes: an answer that differs, or an acceptance the rules refused (asked again).
  const changing = chosen.filter(
    (c) => c.answer !== input.answer || (c.answer === "accepted" && c.exitPermissionId === null),
  );
  if (changing.length) await answerAll(ctx, first, changing, input.answer, now);
  return readRows(
    ctx,
    inList(
      invitationStudentResponses.id,
      chosen.map((c) => c.id),
    ),
  );
}

/** The guarded answers (one batch), then for a go-home acceptance the exit permissions and their record. */
async function answerAll(ctx: SchoolCtx, invitation: Row, changing: Row[], answer: AnswerInput["answer"], now: string) {
  const open = stillOpen(ctx, invitation.invitationId);
  const batch = new Batch(ctx);
  for (const c of changing) {
    batch.add(
      ...InvitationStudentResponses.updateOne(
        ctx,
        c.id,
        { answer, answeredBy: ctx.userId, answeredAt: now, exitPermissionId: null, failures: null },
        { action: "answer", where: and(eq(invitationStudentResponses.answer, c.answer), open) },
      ),
    );
  }
  const families = [...new Set(changing.map((c) => c.responseId))];
  // The invitation's own trail: who answered what, one row per answer given.
  const given = changing.map((c) => ({ studentId: c.studentId, answer }));
  batch.add(
    ...Invitations.action(ctx, eq(invitations.id, invitation.invitationId), {
      action: "answer",
      changes: { answers: { old: null, new: given } },
    }),
  );
  batch.add(
    ...InvitationResponses.update(
      ctx,
      inList(invitationResponses.id, families),
      { status: sql`${familyStatus}`, respondedBy: ctx.userId, respondedAt: now },
      "answer",
    ),
  );
  try {
    await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) {
      throw conflict(
        m`Invitation ${invitation.invitationId} changed while answering (answered, closed or expired); read it again`,
      );
    }
    throw err;
  }
  if (answer !== "accepted" || invitation.kind !== "go_home") return;
  const asks: ExitPermissionAsk[] = changing.map((c) => ({
    studentId: c.studentId,
    date: invitation.date,
    invitationId: invitation.invitationId,
    ...(invitation.pickup === "route_change"
      ? { kind: "route_change" as const, routeId: invitation.routeId ?? 0, stopId: invitation.stopId ?? 0 }
      : { kind: "auto_pickup" as const, pickupParentId: invitation.parentId ?? 0 }),
  }));
  let results: Awaited<ReturnType<typeof askExitPermissions>>;
  try {
    results = await askExitPermissions(ctx, asks);
  } catch (err) {
    // The permissions could not be asked: the answers go back to what they were, so it can be retried.
    const undo = new Batch(ctx);
    for (const c of changing) {
      undo.add(
        ...InvitationStudentResponses.update(
          ctx,
          eq(invitationStudentResponses.id, c.id),
          { answer: c.answer, answeredBy: c.answeredBy, answeredAt: c.answeredAt },
          "answer",
        ),
      );
    }
    undo.add(
      ...InvitationResponses.update(
        ctx,
        inList(invitationResponses.id, families),
        { status: sql`${familyStatus}` },
        "answer",
      ),
    );
    await undo.commit();
    throw err;
  }
  const record = new Batch(ctx);
  changing.forEach((c, i) => {
    const result = results[i];
    // Kept on the answer as text: written in the language of the request that decided it.
    const set = !result
      ? { failures: [{ code: "not_asked", message: m`The exit permission was not asked`.render() }] }
      : result.ok
        ? { exitPermissionId: result.id, failures: null }
        : { failures: result.failures.map((f) => ({ ...f, message: f.message.render() })) };
    record.add(
      ...InvitationStudentResponses.update(
        ctx,
        and(eq(invitationStudentResponses.id, c.id), eq(invitationStudentResponses.answer, "accepted")),
        set,
        "exit-permission",
      ),
    );
  });
  // Notifications (module to come): a refusal is told to the inviting family too, as it is in this answer.
  await record.commit();
}

/** Student response rows as records (one D1 call). */
export async function readRows(ctx: SchoolCtx, condition: SQL): Promise<StudentResponse[]> {
  const rows = await InvitationStudentResponses.select(ctx).where(condition).all();
  return rows.map(toStudentResponse);
}

export function toStudentResponse(row: typeof invitationStudentResponses.$inferSelect): StudentResponse {
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    invitationId: row.invitationId,
    responseId: row.responseId,
    studentId: row.studentId,
    answer: row.answer,
    answeredBy: row.answeredBy,
    answeredAt: row.answeredAt,
    exitPermissionId: row.exitPermissionId,
    failures: row.failures ?? null,
  };
}

// ---- Routes -------------------------------------------------------------------------------------

const IdParams = z.object({
  id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "Invitation id" }),
});

const Answered = z
  .object({
    data: z
      .array(StudentResponseRecord)
      .openapi({ description: "The answers for each of the family's invited children" }),
  })
  .openapi("InvitationAnswered");

const respondRoute = defineRoute({
  method: "post",
  path: "/api/v1/invitation/{id}/respond",
  tag: "Communication",
  operationId: "respondToInvitation",
  summary: "Respond to an invitation: accept or decline for one's invited children",
  description:
    "A guardian of an invited child (or their delegate) with the right to request changes (else 422), while the " +
    "invitation is open and not expired (else 409). A child already answered is a 409 (change it with PUT " +
    "/api/v1/invitation/{id}/response). A restricted guardian may decline, not accept (422). Accepting a " +
    "go_home invitation asks each child's exit permission through the rules: the rows say the permission made, or " +
    "why the rules refused it. invitation.manage (staff) records a family's answer for any invited child. 200: the " +
    "children's rows.",
  access: permissions.write,
  module: "invitations",
  audit: "invitation",
  context: actingContext,
  errors: [409, 422],
  examples: {
    409: [
      {
        name: "closed",
        summary: "The invitation takes no answers",
        detail: "Invitation 42 is closed; it takes no answers",
      },
      {
        name: "answered",
        summary: "Answered before: change it with PUT",
        detail: "Already answered for student 7; change an answer with PUT",
      },
    ],
    422: "You may not accept for student 7: this guardian may not request changes to the student's way home",
  },
  request: { params: IdParams, body: jsonBody(AnswerBody, "InvitationAnswer") },
  responses: { 200: json(Answered, "The answered children's rows") },
});
export async function respondToInvitation(ctx: SchoolCtx, { params, body }: InputOf<typeof respondRoute>) {
  return { data: await giveAnswers(ctx, { invitationId: params.id }, body, "first") };
}
export const respondOperation = operation(respondRoute, respondToInvitation);

const updateResponseRoute = defineRoute({
  method: "put",
  path: "/api/v1/invitation/{id}/response",
  tag: "Communication",
  operationId: "updateInvitationResponse",
  summary: "Update an invitation response: accept or decline (again) for the family's invited children",
  description:
    "The rules of respond, but a child answered before may be answered again before the expiry. Declining a child " +
    "whose acceptance made an exit permission is a 409: cancel that permission instead.",
  access: permissions.write,
  module: "invitations",
  audit: "invitation",
  context: actingContext,
  errors: [409, 422],
  examples: {
    409: [
      {
        name: "closed",
        summary: "The invitation takes no answers",
        detail: "Invitation 42 is closed; it takes no answers",
      },
      {
        name: "permission",
        summary: "A decline where the acceptance made an exit permission",
        detail: "The acceptance for student 7 made exit permission 12; cancel that permission instead",
      },
    ],
    422: "You may not accept for student 7: this guardian may not request changes to the student's way home",
  },
  request: { params: IdParams, body: jsonBody(AnswerBody, "InvitationResponseUpdate") },
  responses: { 204: noContent },
});
export async function updateInvitationResponse(ctx: SchoolCtx, { params, body }: InputOf<typeof updateResponseRoute>) {
  await giveAnswers(ctx, { invitationId: params.id }, body, "change");
}
export const updateResponseOperation = operation(updateResponseRoute, updateInvitationResponse);
