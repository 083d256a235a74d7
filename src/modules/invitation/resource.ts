/**
 * Invitations (`/api/v1/invitation`): a guardian invites other families' children ("Ana goes home
 * with us on Friday"), a teacher or staff invites families to something. The invited children's
 * guardians answer per child (./answers.ts); the creator sees the answers, changes, closes or
 * cancels the invitation. Who sees what: ./common.ts.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { Schools, schools } from "../../db/schema/core";
import { INVITATION_KINDS, INVITATION_PICKUPS, Invitations, invitations } from "../../db/schema/invitation";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { RouteStops, routeStops } from "../../db/schema/transport";
import { and, desc, eq, gt, gte, isNull, lte, or, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { dateTime, schoolDate } from "../../lib/dates";
import { conflict, forbidden, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { PageQuery, pageOf } from "../../lib/pagination";
import { idList } from "../../lib/params";
import { defineResource, type Filters, filterConditions, IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { dateIn, endOfDay } from "../../lib/zoned-time";
import { actedFor } from "../delegate/api";
import {
  actedUsers,
  actingContext,
  countsJson,
  createdByMe,
  INVITATION_ORDER,
  InvitationRecord,
  ownStudents,
  pageOfRows,
  receivedByMe,
  SHOWN_INVITATION_STATUSES,
  toInvitation,
  visibleInvitation,
} from "./common";
import { inviteStatements } from "./invite";
import { permissions } from "./permissions";

const Title = text({ max: 200 }).openapi({ example: "Ana comes home with us on Friday" });
const Message = text({ max: 2000 }).openapi({ example: "We pick them up at the gate and have pizza." });
const ExpiresAt = dateTime(
  "No answer is taken after it; default and latest: the end of the invitation's day at the school",
  "2026-12-03T22:00:00.000Z",
);

export const invitation = defineResource({
  name: "invitation",
  plural: "invitations",
  label: m`Invitation`,
  path: "/api/v1/invitation",
  tag: "Communication",
  scope: "school",
  module: "invitations",
  data: Invitations,
  record: InvitationRecord,
  view: { fields: { ...columnsOf(invitations), counts: countsJson } },
  toRecord: (ctx, row) => toInvitation(row, ctx.deps.clock.now()),
  visibleTo: (ctx) => visibleInvitation(ctx),
  context: actingContext,
  conflictMessage: m`This child is already invited`,
});

// ---- Lists --------------------------------------------------------------------------------------

export const filters = {
  status: {
    schema: z
      .enum(SHOWN_INVITATION_STATUSES)
      .optional()
      .openapi({ description: "open, expired (open, past its expiresAt), closed or cancelled" }),
    where: (ctx: SchoolCtx, v: (typeof SHOWN_INVITATION_STATUSES)[number]) => {
      const now = ctx.deps.clock.now().toISOString();
      if (v === "expired") return and(eq(invitations.status, "open"), lte(invitations.expiresAt, now)) ?? sql`0`;
      if (v === "open")
        return (
          and(eq(invitations.status, "open"), or(isNull(invitations.expiresAt), gt(invitations.expiresAt, now))) ??
          sql`0`
        );
      return eq(invitations.status, v);
    },
    example: "open",
  },
  kind: {
    schema: z.enum(INVITATION_KINDS).optional().openapi({ description: "go_home or general" }),
    where: (_ctx: Ctx, v: (typeof INVITATION_KINDS)[number]) => eq(invitations.kind, v),
    example: "go_home",
  },
  date: {
    schema: schoolDate("The day it is for", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => eq(invitations.date, v),
    example: "2026-12-04",
  },
  from: {
    schema: schoolDate("For this day or later", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => gte(invitations.date, v),
    example: "2026-12-01",
  },
  to: {
    schema: schoolDate("For this day or earlier", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => lte(invitations.date, v),
    example: "2026-12-31",
  },
} satisfies Filters;

export const listInvitations = invitation.list({
  access: permissions.read,
  filters,
  defaultOrder: INVITATION_ORDER,
  summary: "List invitations (paginated), latest day first",
  description:
    "invitation.manage (staff): every invitation of the school; anyone else the ones they created (or the parent they " +
    "act for as a delegate created) and the ones inviting their children.",
});

const InvitationListPage = pageOf(InvitationRecord, "InvitationListPage");

const ListQuery = z.strictObject({
  ...PageQuery.shape,
  status: filters.status.schema,
  kind: filters.kind.schema,
  date: filters.date.schema,
  from: filters.from.schema,
  to: filters.to.schema,
});

/** A list of invitations of a verb of its own: `mine` (created or received) with the list's filters. */
function mine(ctx: SchoolCtx, query: z.output<typeof ListQuery>, which: "created" | "received") {
  const where = and(
    which === "created" ? createdByMe(ctx) : receivedByMe(ctx),
    ...filterConditions(filters, query, ctx),
  );
  return pageOfRows(
    ctx,
    {
      rows: invitation.select(ctx).where(where),
      total: Invitations.select(ctx, { id: invitations.id }).where(where).count(),
      order: INVITATION_ORDER,
    },
    query,
    (row) => toInvitation(row, ctx.deps.clock.now()),
  );
}

const createdRoute = defineRoute({
  method: "get",
  path: "/api/v1/invitation/mine/created",
  tag: "Communication",
  operationId: "listCreatedInvitations",
  summary: "The invitations the caller created (paginated), latest day first",
  description: "A delegate also sees those the parent they act for created, and the parent those of their delegates.",
  access: permissions.read,
  module: "invitations",
  context: actingContext,
  request: { query: ListQuery },
  responses: { 200: json(InvitationListPage, "A page of invitations") },
});
export const listCreatedInvitations = operation(createdRoute, (ctx, { query }) => mine(ctx, query, "created"));

const receivedRoute = defineRoute({
  method: "get",
  path: "/api/v1/invitation/mine/received",
  tag: "Communication",
  operationId: "listReceivedInvitations",
  summary: "The invitations inviting the caller's children (paginated), latest day first",
  description: "Those of the children the caller is a guardian of, or a valid delegate of a guardian of, today.",
  access: permissions.read,
  module: "invitations",
  context: actingContext,
  request: { query: ListQuery },
  responses: { 200: json(InvitationListPage, "A page of invitations") },
});
export const listReceivedInvitations = operation(receivedRoute, (ctx, { query }) => mine(ctx, query, "received"));

export const exportInvitations = invitation.export({
  access: permissions.read,
  list: {
    ...listInvitations,
    // A file of one's own: staff every invitation, anyone else those they created.
    visibleTo: (ctx) => (ctx.can(permissions.manage) ? undefined : createdByMe(ctx)),
  },
  filename: m`invitations.xlsx`,
  sheet: m`Invitations`,
  file: "An .xlsx of invitations with the count of answers",
  description: "invitation.manage: every invitation of the school; anyone else those they created. The list's filters.",
  columns: [
    m`Id`,
    m`Kind`,
    m`Title`,
    m`Date`,
    m`Status`,
    m`Expires at`,
    m`Invited`,
    m`Accepted`,
    m`Declined`,
    m`Pending`,
    m`Created at`,
  ],
  cells: (ctx, row) => {
    const r = toInvitation(row, ctx.deps.clock.now());
    return [
      r.id,
      r.kind,
      r.title,
      r.date,
      r.status,
      r.expiresAt,
      r.counts.invited,
      r.counts.accepted,
      r.counts.declined,
      r.counts.pending,
      r.createdAt,
    ];
  },
});

export const getInvitation = invitation.get({ access: permissions.read });

// ---- Create -------------------------------------------------------------------------------------

const MAX_INVITED = 50;

const CreateBody = z
  .object({
    kind: z.enum(INVITATION_KINDS).default("go_home").openapi({
      example: "go_home",
      description: "go_home (the default: the children go home with the inviter) or another kind",
    }),
    title: Title,
    message: Message.optional(),
    date: schoolDate("The school-local day it is for", "2026-12-04"),
    studentIds: idList({ max: MAX_INVITED, what: "Student" }).openapi({
      description: `The invited children (1-${MAX_INVITED}, each once); a guardian invites other families' children`,
    }),
    expiresAt: ExpiresAt.optional(),
    pickup: z.enum(INVITATION_PICKUPS).optional().openapi({
      description: "go_home only: auto_pickup (default; the inviting guardian collects) or route_change",
    }),
    routeId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: "route_change" }),
    stopId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: "route_change" }),
  })
  .strict();

const created = invitation.create({
  access: permissions.write,
  input: CreateBody,
  summary: "Invite children's families",
  description:
    "A guardian (or their delegate) invites children of other families of the school (their own: 422); a teacher or " +
    "staff any children. A go_home invitation is collected by the inviting guardian (auto_pickup) or rides a route " +
    "and stop (route_change). A student of another school is a 404.",
  errors: [422],
  examples: {
    422: [
      {
        name: "past",
        summary: "A date before today",
        detail: "2026-11-20 is past (today is 2026-11-23 at the school)",
      },
      { name: "stop", summary: "A stop of another route", detail: "Stop 7 is not a stop of route 3" },
    ],
  },
});

/** What a create reads first, in one round trip. */
async function inviter(ctx: SchoolCtx, studentIds: readonly number[]) {
  const batch = new Batch(ctx);
  const school = batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)));
  const profile = batch.read(
    Parents.select(ctx, { id: parents.id, userId: parents.userId, familyId: parents.familyId })
      .where(actedFor(parents.userId, actedUsers(ctx)))
      // The caller's own profile first, then a parent they act for.
      .orderBy(desc(sql`${parents.userId} = ${ctx.userId ?? 0}`))
      .limit(1),
  );
  const teacher = batch.read(
    Teachers.select(ctx, { id: teachers.id })
      .where(eq(teachers.userId, ctx.userId ?? 0))
      .limit(1),
  );
  const kids = batch.read(
    Students.select(ctx, {
      id: students.id,
      familyId: students.familyId,
      own: sql<number>`${students.id} IN ${ownStudents(ctx)}`,
    }).where(inList(students.id, studentIds), isNull(students.deletedAt)),
  );
  const r = await batch.commit();
  return {
    timeZone: r.get(school)[0]?.timeZone ?? "UTC",
    parent: r.get(profile)[0],
    teacher: r.get(teacher).length > 0,
    students: r.get(kids),
  };
}

/** The expiry to store: the given one (after now, not after the day's end), else the day's end. */
export function expiry(ctx: SchoolCtx, date: string, timeZone: string, given: string | undefined | null): string {
  const end = endOfDay(date, timeZone);
  if (given === undefined || given === null) return end.toISOString();
  const at = new Date(given);
  if (at.getTime() <= ctx.deps.clock.now().getTime()) throw unprocessable(m`expiresAt must be in the future`);
  if (at.getTime() > end.getTime()) {
    throw unprocessable(m`expiresAt must not be after the end of ${date} at the school (${end.toISOString()})`);
  }
  return at.toISOString();
}

export async function createInvitation(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  const goHome = body.kind === "go_home";
  if (!goHome && (body.pickup || body.routeId || body.stopId)) {
    throw unprocessable(m`pickup, routeId and stopId are for go_home invitations only`);
  }
  const pickup = goHome ? (body.pickup ?? "auto_pickup") : null;
  if (pickup === "route_change" && (!body.routeId || !body.stopId)) {
    throw unprocessable(m`A route_change invitation names routeId and stopId`);
  }
  if (pickup === "auto_pickup" && (body.routeId || body.stopId)) {
    throw unprocessable(m`An auto_pickup invitation names no route: the inviting guardian collects`);
  }
  const read = await inviter(ctx, body.studentIds);
  const missing = body.studentIds.filter((id) => !read.students.some((s) => s.id === id));
  if (missing.length)
    throw notFound(
      missing.length > 1 ? m`Students ${missing.join(", ")} not found` : m`Student ${missing.join(", ")} not found`,
    );
  const anyone = ctx.can(permissions.manage) || read.teacher;
  if (!anyone && !read.parent) throw forbidden(m`Only guardians, teachers and staff invite`);
  const own = read.students.filter(
    (s) => s.own === 1 || (read.parent?.familyId != null && s.familyId === read.parent.familyId),
  );
  if (own.length && (goHome || !anyone)) {
    throw unprocessable(
      own.length > 1
        ? m`Students ${own.map((s) => s.id).join(", ")}: a guardian invites other families' children, not their own`
        : m`Student ${own.map((s) => s.id).join(", ")}: a guardian invites other families' children, not their own`,
    );
  }
  if (pickup === "auto_pickup" && !read.parent) {
    throw unprocessable(
      m`Only a guardian collects invited children (auto_pickup): invite as a guardian, or name a route`,
    );
  }
  if (pickup === "route_change") {
    const stop = await RouteStops.select(ctx, { routeId: routeStops.routeId })
      .where(eq(routeStops.id, body.stopId ?? 0))
      .first();
    if (!stop) throw notFound(m`Stop ${body.stopId} not found`);
    if (stop.routeId !== body.routeId)
      throw unprocessable(m`Stop ${body.stopId} is not a stop of route ${body.routeId}`);
  }
  const today = dateIn(read.timeZone, ctx.deps.clock.now());
  if (body.date < today) throw unprocessable(m`${body.date} is past (today is ${today} at the school)`);
  const expiresAt = expiry(ctx, body.date, read.timeZone, body.expiresAt);
  // A guardian invites as their profile; staff and teachers as themselves (a teacher who is also a
  // guardian takes children home as the guardian).
  const parent = goHome || !anyone ? read.parent : undefined;

  const batch = new Batch(ctx).add(
    ...Invitations.insert(ctx, {
      kind: body.kind,
      title: body.title,
      message: body.message ?? null,
      createdBy: ctx.userId,
      parentId: parent?.id ?? null,
      ownerId: parent?.userId ?? ctx.userId,
      date: body.date,
      pickup,
      routeId: pickup === "route_change" ? (body.routeId ?? null) : null,
      stopId: pickup === "route_change" ? (body.stopId ?? null) : null,
      expiresAt,
      status: "open",
    }),
  );
  // One answer row per family (a child of no family answers alone), one per child.
  batch.add(
    ...inviteStatements(
      ctx,
      Invitations.insertedId(),
      read.students.map((s) => ({ studentId: s.id, familyId: s.familyId })),
    ),
  );
  const back = batch.read(invitation.readOne(ctx, Invitations.insertedId()));
  const [row] = (await batch.commit(invitation.messages)).get(back);
  if (!row) throw new Error("invitation: the created row was not read back");
  return toInvitation(row, ctx.deps.clock.now());
}
export const createInvitationOperation = operation(created.route, createInvitation);

// ---- Change, withdraw, close --------------------------------------------------------------------

/** The invitation as the caller sees it (else 404), and whether it is theirs to change (else 403). */
export async function mayChange(ctx: SchoolCtx, id: number) {
  const row = await Invitations.select(ctx, {
    date: invitations.date,
    kind: invitations.kind,
    status: invitations.status,
    accepted: sql<number>`(SELECT count(*) FROM invitation_student_response s WHERE s.invitation_id = "invitation"."id" AND s.answer = 'accepted')`,
    mine: ctx.can(permissions.manage) ? sql<number>`1` : sql<number>`CASE WHEN ${createdByMe(ctx)} THEN 1 ELSE 0 END`,
    timeZone: schools.timeZone,
  })
    .join(Schools, eq(schools.id, ctx.schoolId))
    .where(eq(invitations.id, id), visibleInvitation(ctx))
    .first();
  if (!row) throw notFound(m`Invitation ${id} not found`);
  if (row.mine !== 1) throw forbidden(m`Invitation ${id} is not yours: only its creator or the school changes it`);
  return row;
}

const open = { column: invitations.status, states: ["open"] };
const notOpen =
  ({ id }: { id: number }) =>
  (state: string) =>
    m`Invitation ${id} is ${stateName(state)}; only an open invitation can be changed`;

export const updateInvitation = invitation.update({
  access: permissions.write,
  input: z.object({ title: Title.optional(), message: Message.nullable().optional(), expiresAt: ExpiresAt.optional() }),
  values: async (ctx, { id, body }) => {
    const row = await mayChange(ctx, id);
    return {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.message !== undefined ? { message: body.message } : {}),
      ...(body.expiresAt !== undefined ? { expiresAt: expiry(ctx, row.date, row.timeZone, body.expiresAt) } : {}),
    };
  },
  from: open,
  conflict: notOpen,
  summary: "Change an open invitation's title, message or expiry",
  description:
    "Its creator or staff (a recipient: 403). The day, the children and the way home do not change: cancel and invite again.",
  errors: [422],
  examples: { 422: "expiresAt must be in the future" },
});

export const deleteInvitation = invitation.delete({
  access: permissions.write,
  check: async (ctx, { id }) => {
    const row = await mayChange(ctx, id);
    if (row.accepted > 0) {
      throw conflict(m`Invitation ${id} has accepted answers; cancel it instead (PATCH .../status), which keeps them`);
    }
  },
  summary: "Delete an invitation nobody accepted",
  description: "Its creator or staff (a recipient: 403). With an accepted answer it is a 409: cancel it instead.",
  errors: [409],
  examples: { 409: "Invitation 42 has accepted answers; cancel it instead (PATCH .../status), which keeps them" },
});

const StatusBody = z
  .object({
    status: z.enum(["closed", "cancelled"]).openapi({
      example: "closed",
      description:
        "closed: takes no more answers, keeps them; cancelled: called off (accepted go_home permissions are cancelled)",
    }),
  })
  .strict();

const statusRoute = defineRoute({
  method: "patch",
  path: "/api/v1/invitation/{id}/status",
  tag: "Communication",
  operationId: "changeInvitationStatus",
  summary: "Close or cancel an open invitation (update status)",
  description:
    "Its creator or staff (a recipient: 403). Closed: no more answers, what was answered stands. Cancelled: no more " +
    "answers, and the exit permissions accepted answers made stay as they are (the families change them as any " +
    "other). An invitation no longer open is a 409.",
  access: permissions.write,
  module: "invitations",
  audit: "invitation",
  context: actingContext,
  errors: [409],
  examples: { 409: "Invitation 42 is cancelled; only an open invitation can be changed" },
  request: { params: IdParams, body: jsonBody(StatusBody, "InvitationStatus") },
  responses: { 200: json(InvitationRecord, "The invitation, changed") },
});

export async function changeInvitationStatus(ctx: SchoolCtx, { params, body }: InputOf<typeof statusRoute>) {
  await mayChange(ctx, params.id);
  const changed = await invitation.changeAndRead(ctx, params.id, {
    action: "status",
    set: { status: body.status },
    from: open,
    conflict: notOpen({ id: params.id }),
  });
  // Notifications (module to come): tell the families who accepted that the invitation was closed or cancelled.
  return changed;
}
export const changeInvitationStatusOperation = operation(statusRoute, changeInvitationStatus);
