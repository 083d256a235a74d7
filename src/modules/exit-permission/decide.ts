/**
 * Deciding and changing a permission. Each is a decision made again through the same rules
 * (`evaluate`), as the one who makes it, on the facts as they are now:
 *
 * - `PATCH /{id}/confirm {status, reason?}` (`exit-permission.review`): from `pending` (or
 *   `needs_review`), ONE guarded UPDATE from the state read (two reviewers at once: one wins, the
 *   other 409). Confirming runs the rules again as the school (late and far ahead are its to pass;
 *   a restriction never is: 422), supersedes the student's earlier confirmed permission of the day
 *   and makes the day changes (a route change takes its seat with a guarded UPDATE: none left is a
 *   422 `no-seat` and nothing is written), in the same batch.
 * - `POST /{id}/respond {accept, reason?}`: the child's guardian (or staff for them) answers a
 *   permission that names another family's collector (`awaiting_family`): declined it is
 *   `rejected`; accepted the rules run again as the family, the acceptance is recorded
 *   (`acceptedAt`) and it becomes `pending` (or `confirmed` where the school confirms automatically).
 * - `PUT /{id}` (the asker, or staff): while pending, awaiting the family or in review, through the
 *   rules again as the one editing; a change of the date, collector or route clears the family's
 *   acceptance (the family answers again); a decided one is a 409.
 * - `DELETE /{id}`: the asker cancels while not decided (`cancelled`); staff may also withdraw a
 *   confirmed one: its day changes are withdrawn and the seat given back in the same batch.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { and, eq, type SQL, sql } from "../../db/sql";
import { GuardFailed, inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { conflict, forbidden, notFound } from "../../lib/errors";
import { anyOf, type Message, m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { IdParams, nonEmpty } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { schoolEvent } from "../../lib/school-events";
import { text } from "../../lib/text";
import { announce, readSuperseded } from "./announce";
import { confirmEffects, type Effect, supersede, withdrawEffects } from "./effects";
import { permissions } from "./permissions";
import { actingContext, ExitPermissionRecord, exitPermission, permissionDate, TOO_LATE } from "./resource";
import { failure, type RuleFailure } from "./rules";
import { type Ask, effectOf, evaluate, refusal } from "./service";
import { isStaff } from "./snapshot";

const meta = {
  tag: "Permissions and tasks" as const,
  module: "exit-permissions" as const,
  audit: "exit-permission",
  context: actingContext,
};

/** The permission as this caller sees it (404 otherwise): one round trip. */
async function readPermission(ctx: SchoolCtx, id: number) {
  const permission = await ExitPermissions.select(ctx)
    .where(eq(exitPermissions.id, id), exitPermission.scoped(ctx, undefined, "read"))
    .first();
  if (!permission) throw notFound(m`Exit permission ${id} not found`);
  return permission;
}

type Stored = Awaited<ReturnType<typeof readPermission>>;

/** The statements that make a permission confirmed: supersede the day's earlier one, then the guarded change and its day changes. */
function confirming(ctx: SchoolCtx, id: number, effect: Effect, change: Statement[]): Statement[] {
  return [
    ...supersede(ctx, effect.studentId, effect.date, id),
    ...change,
    ...confirmEffects(ctx, sql<number>`${id}`, effect),
  ];
}

/**
 * Commits a decision's batch and reads the record back; a failed guard is a 409 when the
 * permission left the state it was read in meanwhile, else the seat it needed went (`no-seat`, 422).
 */
async function commitDecision(ctx: SchoolCtx, id: number, batch: Batch, from: string, effect?: Effect) {
  const after = batch.read(exitPermission.readOne(ctx, id));
  // Confirmed, it replaced the day's earlier confirmed permission: that one is heard withdrawn.
  const superseded = effect ? readSuperseded(ctx, batch, [id]) : undefined;
  try {
    const results = await batch.commit({ conflict: exitPermission.messages.conflict });
    const [row] = results.get(after);
    if (!row) throw notFound(m`Exit permission ${id} not found`);
    const record = exitPermission.toRecord(ctx, row);
    await announce(ctx, { withdrawn: superseded ? results.get(superseded) : [], confirmed: [record] });
    return record;
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const now = await ExitPermissions.find(ctx, id, { status: exitPermissions.status });
    if (!now) throw notFound(m`Exit permission ${id} not found`);
    if (now.status !== from || !effect)
      throw conflict(m`Exit permission ${id} is ${stateName(now.status)}; it was decided meanwhile`);
    const noSeat: RuleFailure = failure("no-seat", {
      route: effect.target?.routeId,
      routeId: effect.target?.routeId,
      date: effect.date,
      available: 0,
    });
    throw refusal([noSeat]);
  }
}

const notIn = (p: Stored, states: readonly string[], what: Message) => {
  if (!states.includes(p.status))
    throw conflict(
      m`Exit permission ${p.id} is ${stateName(p.status)}; ${what} needs it to be ${anyOf(states.map(stateName))}`,
    );
};

/** Who decided, when, and why: a reason the service writes is kept in the language of the request that decided. */
const decision = (ctx: SchoolCtx, reason: string | null) => ({
  decidedBy: ctx.userId,
  decidedAt: ctx.deps.clock.now().toISOString(),
  decisionReason: reason,
});

/** The stored permission as an ask (the rules run on it again), with the family's stored consent. */
const askOf = (p: Stored, also: Partial<Ask> = {}): Ask => ({
  studentId: p.studentId,
  date: p.date,
  kind: p.kind,
  ...(p.routeId === null ? {} : { routeId: p.routeId }),
  ...(p.stopId === null ? {} : { stopId: p.stopId }),
  ...(p.trustedAddressId === null ? {} : { trustedAddressId: p.trustedAddressId }),
  ...(p.pickupParentId === null ? {} : { pickupParentId: p.pickupParentId }),
  ...(p.trustedPersonId === null ? {} : { trustedPersonId: p.trustedPersonId }),
  ...(p.reason === null ? {} : { reason: p.reason }),
  ...(p.invitationId === null ? {} : { invitationId: p.invitationId }),
  familyAccepted: p.acceptedAt !== null,
  ...also,
});

/** The rules over one ask, as the caller: the resolved ask, or the 422 of every failed rule. */
async function decideAgain(ctx: SchoolCtx, ask: Ask) {
  const { evaluated } = await evaluate(ctx, [ask]);
  const [one] = evaluated;
  if (!one) throw new Error("no evaluation");
  if (one.verdict.failures.length > 0) throw refusal(one.verdict.failures);
  return one.resolved;
}

/** The states the office decides from: asked, or a fixed permission's day the rules refused on that day. */
const DECIDABLE = ["pending", "needs_review"] as const;

// --- confirm / reject -------------------------------------------------------------------------

const confirmRoute = defineRoute({
  ...meta,
  method: "patch",
  path: "/api/v1/exit-permission/{id}/confirm",
  operationId: "confirmExitPermission",
  summary: "Confirm or reject a pending exit permission",
  access: permissions.review,
  errors: [409, 422],
  examples: {
    409: "Exit permission 42 is rejected; it was decided meanwhile",
    422: {
      name: "noSeat",
      summary: "The seat it needed went meanwhile",
      detail: "No seat left on route 3 on 2026-11-27 (40 seats)",
      errors: [{ path: "routeId", message: "No seat left on route 3 on 2026-11-27 (40 seats)" }],
      members: { failures: [{ code: "no-seat", message: "No seat left on route 3 on 2026-11-27 (40 seats)" }] },
    },
  },
  request: {
    params: IdParams,
    body: jsonBody(
      z.strictObject({
        status: z
          .enum(["confirmed", "rejected"])
          .openapi({ example: "confirmed", description: "The school's decision" }),
        reason: text({ max: 500 }).optional().openapi({ example: "Grandma is on the list" }),
      }),
      "ExitPermissionDecision",
    ),
  },
  responses: { 200: json(ExitPermissionRecord, "The permission, decided") },
});

export async function confirmExitPermission(ctx: SchoolCtx, { params, body }: InputOf<typeof confirmRoute>) {
  const { id } = params;
  const permission = await readPermission(ctx, id);
  notIn(permission, DECIDABLE, m`a decision`);
  const from = permission.status;
  const guardState = eq(exitPermissions.status, from);
  if (body.status === "rejected") {
    const set = { status: "rejected" as const, ...decision(ctx, body.reason ?? null) };
    const batch = new Batch(ctx).add(
      ...ExitPermissions.updateOne(ctx, id, set, { action: "reject", where: guardState }),
    );
    return commitDecision(ctx, id, batch, from);
  }
  // Confirming is a decision like asking: the rules run again, as the school who confirms (late and
  // far ahead are its to pass), on the facts as they are now.
  const resolved = await decideAgain(ctx, askOf(permission));
  const effect = effectOf(resolved);
  const set = { status: "confirmed" as const, failures: null, ...decision(ctx, body.reason ?? null) };
  const change = ExitPermissions.updateOne(ctx, id, set, { action: "confirm", where: guardState });
  return commitDecision(ctx, id, new Batch(ctx).add(...confirming(ctx, id, effect, change)), from, effect);
}
export const confirmExitPermissionOperation = operation(confirmRoute, confirmExitPermission);

// --- the family's answer ----------------------------------------------------------------------

const respondRoute = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/exit-permission/{id}/respond",
  operationId: "respondExitPermission",
  summary: "Answer, as the child's family, a permission that names another family's collector",
  access: permissions.write,
  errors: [409, 422],
  examples: {
    409: "Exit permission 42 is pending; an answer needs it to be awaiting_family",
    422: TOO_LATE,
  },
  request: {
    params: IdParams,
    body: jsonBody(
      z.strictObject({
        accept: z
          .boolean()
          .openapi({ example: true, description: "true: the family agrees; false: it declines (rejected)" }),
        reason: text({ max: 500 }).optional().openapi({ example: "She may go with them" }),
      }),
      "ExitPermissionResponse",
    ),
  },
  responses: { 200: json(ExitPermissionRecord, "The permission after the answer") },
});

export async function respondExitPermission(ctx: SchoolCtx, { params, body }: InputOf<typeof respondRoute>) {
  const { id } = params;
  const permission = await readPermission(ctx, id);
  notIn(permission, ["awaiting_family"], m`an answer`);
  const awaiting = eq(exitPermissions.status, "awaiting_family");
  if (!body.accept) {
    if (!isStaff(ctx)) await mustBeFamily(ctx, permission);
    const set = { status: "rejected" as const, ...decision(ctx, body.reason ?? m`Declined by the family`.render()) };
    const batch = new Batch(ctx).add(
      ...ExitPermissions.updateOne(ctx, id, set, { action: "respond", where: awaiting }),
    );
    return commitDecision(ctx, id, batch, "awaiting_family");
  }
  // The family's acceptance is a decision: the rules run again, as the family who accepts.
  const { evaluated } = await evaluate(ctx, [askOf(permission, { familyAccepted: true })]);
  const [one] = evaluated;
  if (!one) throw new Error("no evaluation");
  if (one.resolved.snapshot.asker.as === "collector") throw forbidden(m`Only the child's family answers this request`);
  if (one.verdict.failures.length > 0) throw refusal(one.verdict.failures);
  const confirmed = one.resolved.status === "confirmed";
  const at = ctx.deps.clock.now().toISOString();
  const set = {
    status: confirmed ? ("confirmed" as const) : ("pending" as const),
    acceptedBy: ctx.userId,
    acceptedAt: at,
    ...(confirmed ? decision(ctx, m`Confirmed automatically (the school's setting)`.render()) : {}),
  };
  const effect = effectOf(one.resolved);
  const change = ExitPermissions.updateOne(ctx, id, set, { action: "respond", where: awaiting });
  const batch = new Batch(ctx).add(...(confirmed ? confirming(ctx, id, effect, change) : change));
  return commitDecision(ctx, id, batch, "awaiting_family", effect);
}
export const respondExitPermissionOperation = operation(respondRoute, respondExitPermission);

/** A guardian of the child (or a valid delegate of one) answers; the collector does not. */
async function mustBeFamily(ctx: SchoolCtx, p: Stored) {
  const { evaluated } = await evaluate(ctx, [askOf(p, { familyAccepted: true })]);
  if (evaluated[0]?.resolved.snapshot.asker.as !== "guardian")
    throw forbidden(m`Only the child's family answers this request`);
}

// --- change -----------------------------------------------------------------------------------

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const Update = z.strictObject({
  date: permissionDate("The new school-local date").optional(),
  routeId: Id.optional(),
  stopId: Id.optional(),
  trustedAddressId: Id.optional(),
  pickupParentId: Id.optional(),
  trustedPersonId: Id.optional(),
  reason: text({ max: 500 }).nullable().optional(),
});

const updateRoute = defineRoute({
  ...meta,
  method: "put",
  path: "/api/v1/exit-permission/{id}",
  operationId: "updateExitPermission",
  summary: "Change a pending exit permission (the rules run again)",
  access: permissions.write,
  ifMatch: exitPermission.ifMatch,
  errors: [409, 422],
  examples: {
    409: "Exit permission 42 is confirmed; a change needs it to be pending or awaiting_family",
    422: TOO_LATE,
  },
  request: { params: IdParams, body: jsonBody(nonEmpty(Update), "ExitPermissionUpdate") },
  responses: { 204: noContent },
});

/** Whether the caller asked it (themself, or a parent they act for asked it). */
const isAsker = (ctx: SchoolCtx, p: Stored) =>
  p.askedBy !== null && (p.askedBy === ctx.userId || (ctx.actingFor ?? []).includes(p.askedBy));

/** The states an edit starts from: not decided yet (a fixed permission's refused day included). */
const EDITABLE = ["pending", "awaiting_family", "needs_review"] as const;

export async function updateExitPermission(ctx: SchoolCtx, { params, body }: InputOf<typeof updateRoute>) {
  const { id } = params;
  const permission = await readPermission(ctx, id);
  if (!isStaff(ctx) && !isAsker(ctx, permission))
    throw forbidden(m`Only who asked for exit permission ${id}, or the school, may change it`);
  notIn(permission, EDITABLE, m`a change`);
  const retarget = body.routeId !== undefined || body.stopId !== undefined || body.trustedAddressId !== undefined;
  const recollect = body.pickupParentId !== undefined || body.trustedPersonId !== undefined;
  const redated = body.date !== undefined && body.date !== permission.date;
  // A change of the date, the collector or the route is another request: the family's consent to a
  // collector who is no guardian (an answer, an invitation) does not carry over to it.
  const reset = redated || retarget || recollect;
  const { invitationId: _invitation, ...base } = askOf(permission);
  const ask: Ask = {
    ...base,
    ...(retarget ? { routeId: body.routeId, stopId: body.stopId, trustedAddressId: body.trustedAddressId } : {}),
    ...(recollect ? { pickupParentId: body.pickupParentId, trustedPersonId: body.trustedPersonId } : {}),
    ...(body.date === undefined ? {} : { date: body.date }),
    ...(body.reason === undefined ? {} : { reason: body.reason ?? undefined }),
    ...(reset
      ? { familyAccepted: false, awaitingFamily: true }
      : permission.invitationId === null
        ? {}
        : { invitationId: permission.invitationId }),
  };
  // The edit is a decision: the rules run again, as the one who edits.
  const r = await decideAgain(ctx, ask);
  const at = ctx.deps.clock.now().toISOString();
  const status =
    r.status === "awaiting_family"
      ? "awaiting_family"
      : permission.status === "needs_review"
        ? "pending"
        : permission.status;
  const set = {
    date: ask.date,
    routeId: ask.kind === "route_change" ? (r.target?.routeId ?? null) : null,
    stopId: ask.kind === "route_change" ? (r.target?.stopId ?? null) : null,
    trustedAddressId: ask.trustedAddressId ?? null,
    pickupParentId: r.snapshot.pickup?.parentId ?? null,
    trustedPersonId: ask.trustedPersonId ?? null,
    reason: ask.reason ?? null,
    status,
    failures: null,
    ...(reset
      ? r.consentGiven
        ? { acceptedBy: ctx.userId, acceptedAt: at }
        : { acceptedBy: null, acceptedAt: null }
      : {}),
  };
  const batch = new Batch(ctx).add(
    ...ExitPermissions.updateOne(ctx, id, set, { where: eq(exitPermissions.status, permission.status) }),
  );
  await exitPermission.commit(ctx, id, batch, {
    diagnose: { action: "a change", from: { column: exitPermissions.status, states: [permission.status] } },
  });
}
export const updateExitPermissionOperation = operation(updateRoute, updateExitPermission);

// --- cancel / withdraw ------------------------------------------------------------------------

const deleteRoute = defineRoute({
  ...meta,
  method: "delete",
  path: "/api/v1/exit-permission/{id}",
  operationId: "deleteExitPermission",
  summary: "Cancel a pending exit permission (staff: also withdraw a confirmed one, giving its seat back)",
  access: permissions.write,
  errors: [409],
  examples: {
    409: "Exit permission 42 is cancelled; cancelling needs it to be awaiting_family or pending or confirmed",
  },
  request: { params: IdParams },
  responses: { 204: noContent },
});

export async function deleteExitPermission(ctx: SchoolCtx, { params }: InputOf<typeof deleteRoute>) {
  const { id } = params;
  const permission = await readPermission(ctx, id);
  const staff = isStaff(ctx);
  if (!staff && !isAsker(ctx, permission))
    throw forbidden(m`Only who asked for exit permission ${id}, or the school, may cancel it`);
  const states = staff ? [...EDITABLE, "confirmed"] : EDITABLE;
  notIn(permission, states, m`cancelling`);
  const withdraw = permission.status === "confirmed";
  const only: SQL = withdraw ? eq(exitPermissions.status, "confirmed") : inList(exitPermissions.status, EDITABLE);
  const batch = new Batch(ctx);
  if (withdraw) batch.add(...withdrawEffects(ctx, sql`(${id})`));
  batch.add(
    ...ExitPermissions.updateOne(
      ctx,
      id,
      { status: "cancelled", ...(withdraw ? decision(ctx, m`Withdrawn by the school`.render()) : {}) },
      { action: withdraw ? "withdraw" : "cancel", where: and(only) },
    ),
  );
  await exitPermission.commit(ctx, id, batch, {
    diagnose: { action: "cancelling", from: { column: exitPermissions.status, states: [permission.status] } },
  });
  if (withdraw) {
    const { studentId, date, kind, routeId, stopId } = permission;
    await schoolEvent(ctx, {
      type: "exit-permission.withdrawn",
      data: { exitPermission: { id, studentId, date, kind, routeId, stopId, status: "cancelled" } },
      student: { id: studentId, date },
    });
  }
}
export const deleteExitPermissionOperation = operation(deleteRoute, deleteExitPermission);
