/**
 * Sessions (`/api/v1/session`): a task's appointment session, its settings (slot length, break,
 * places per slot, bookings per family, the families' cancellation cut-off), its slots generated
 * from its days' windows (`PUT /{id}/slots`), and publishing (`PUT /{id}/publish`): bookable from
 * then on, its task sent if it was held, and its audience told.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import {
  SESSION_STATUSES,
  SessionDays,
  Sessions,
  sessionDays,
  sessions,
  TimeSlots,
  timeSlots,
} from "../../db/schema/appointment";
import { Schools, schools } from "../../db/schema/core";
import { Tasks, tasks } from "../../db/schema/task";
import { and, eq, lte, sql } from "../../db/sql";
import { GuardFailed, guardCount, inList, insertedId } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { m } from "../../lib/message";
import type { OrderKey } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineResource, type Filters, IdParams, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { paragraphs, text } from "../../lib/text";
import { deleteStatements, notifyAll, publishHeld, recipientsOf, toRecipients, whoOf } from "../task/api";
import { actingContext, SessionRecord, sessionCounts, visibleSession } from "./common";
import { plannedSlots, slotKey } from "./generate";
import { permissions } from "./permissions";
import { appointmentSays } from "./refusals";

const Title = text({ max: 200 }).openapi({ example: "Parent-teacher meetings, 3rd grade" });
const Description = paragraphs({ max: 4000 });
const Location = text({ max: 200 }).openapi({ example: "Room 12" });
const settings = {
  slotMinutes: z
    .number()
    .int()
    .min(5)
    .max(240)
    .openapi({ example: 15, description: "Length of each slot (5-240 minutes)" }),
  breakMinutes: z.number().int().min(0).max(120).openapi({ example: 5, description: "Pause after each slot (0-120)" }),
  capacity: z.number().int().min(1).max(50).openapi({ example: 1, description: "Families per slot (1-50)" }),
  bookingsPerFamily: z.number().int().min(1).max(10).openapi({
    example: 1,
    description: "Bookings one family may hold in the session (1-10); one booking may be several consecutive slots",
  }),
  cancelHours: z
    .number()
    .int()
    .min(0)
    .max(336)
    .openapi({ example: 24, description: "Families cancel up to this many hours before the slot (0-336)" }),
};

type SessionRow = typeof sessions.$inferSelect & { counts: string };

function toSession(row: SessionRow): z.output<typeof SessionRecord> {
  const counts = parseJson(SessionRecord.shape.counts, row.counts || "{}", { days: 0, slots: 0, places: 0, booked: 0 });
  return {
    ...timestamps(row),
    taskId: row.taskId,
    title: row.title,
    description: row.description,
    location: row.location,
    slotMinutes: row.slotMinutes,
    breakMinutes: row.breakMinutes,
    capacity: row.capacity,
    bookingsPerFamily: row.bookingsPerFamily,
    cancelHours: row.cancelHours,
    status: row.status,
    publishedAt: row.publishedAt,
    createdBy: row.createdBy,
    counts,
  };
}

export const session = defineResource({
  // Not "session": the sign-in's answer is the document's `Session` schema.
  name: "appointmentSession",
  plural: "appointmentSessions",
  label: m`Session`,
  path: "/api/v1/session",
  tag: "Permissions and tasks",
  scope: "school",
  module: "appointments",
  data: Sessions,
  record: SessionRecord,
  view: { fields: { ...columnsOf(sessions), counts: sessionCounts } },
  toRecord: (_ctx, row) => toSession(row),
  visibleTo: (ctx) => visibleSession(ctx),
  // Whom a family member acts for today: a delegate sees the sessions of the parent's children.
  context: actingContext,
  conflictMessage: m`This task already has a session`,
});

const filters = {
  status: {
    schema: z.enum(SESSION_STATUSES).optional().openapi({ description: "draft or published" }),
    where: (_ctx: Ctx, v: (typeof SESSION_STATUSES)[number]) => eq(sessions.status, v),
    example: "published",
  },
  taskId: {
    schema: idFilter("The session of this task"),
    where: (_ctx: Ctx, v: number) => eq(sessions.taskId, v),
    example: "1",
  },
  text: {
    schema: searchTerm("Part of the title, whatever its case and accents"),
    where: (_ctx: Ctx, v: string) => contains(sessions.titleSearch, v),
    example: "meetings",
  },
} satisfies Filters;

const ORDER: OrderKey[] = [
  { by: sessions.createdAt, desc: true },
  { by: sessions.id, desc: true },
];

export const listSessions = session.list({
  access: permissions.read,
  filters,
  defaultOrder: ORDER,
  summary: "List sessions (paginated), newest first",
  description:
    "appointment.manage: every session; anyone else the published ones that concern them (their task reached them or " +
    "the parent they act for today, or they have slots in it). Filters: status, taskId, text.",
});

export const getSession = session.get({ access: permissions.read });

export const createSession = session.create({
  access: permissions.manage,
  input: z.object({
    taskId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
    title: Title.optional().openapi({ description: "Default: the task's title" }),
    description: Description.optional(),
    location: Location.optional(),
    slotMinutes: settings.slotMinutes,
    breakMinutes: settings.breakMinutes.optional(),
    capacity: settings.capacity.optional(),
    bookingsPerFamily: settings.bookingsPerFamily.optional(),
    cancelHours: settings.cancelHours.optional(),
  }),
  values: async (ctx, { body }) => {
    const t = await Tasks.select(ctx, { title: tasks.title }).where(eq(tasks.id, body.taskId)).first();
    if (!t) throw notFound(m`Task ${body.taskId} not found`);
    return {
      taskId: body.taskId,
      title: body.title ?? t.title,
      description: body.description ?? null,
      location: body.location ?? null,
      slotMinutes: body.slotMinutes,
      breakMinutes: body.breakMinutes ?? 0,
      capacity: body.capacity ?? 1,
      bookingsPerFamily: body.bookingsPerFamily ?? 1,
      cancelHours: body.cancelHours ?? 24,
      status: "draft",
      createdBy: ctx.userId,
    };
  },
  summary: "Create a task's appointment session (a draft)",
  description:
    "One per task (a second: 409). Add its days (POST /api/v1/session-day), generate its slots (PUT /{id}/slots), then " +
    "publish it (PUT /{id}/publish): its task is sent then if it was held.",
});

export const updateSession = session.update({
  access: permissions.manage,
  input: z.object({
    title: Title.optional(),
    description: Description.nullable().optional(),
    location: Location.nullable().optional(),
    slotMinutes: settings.slotMinutes.optional(),
    breakMinutes: settings.breakMinutes.optional(),
    capacity: settings.capacity.optional(),
    bookingsPerFamily: settings.bookingsPerFamily.optional(),
    cancelHours: settings.cancelHours.optional(),
  }),
  summary: "Change a session's text and settings",
  description:
    "A new slot length, break or capacity shapes the slots the next PUT /{id}/slots generates; existing slots keep theirs until then.",
});

// ---- Delete -------------------------------------------------------------------------------------

/** No live booking in the session (the condition of every delete of one). */
const noBookings = sql`NOT EXISTS (SELECT 1 FROM appointment a WHERE a.session_id = ${sessions.id} AND a.status = 'booked')`;

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/session/{id}",
  tag: "Permissions and tasks",
  operationId: "deleteAppointmentSession",
  summary: "Delete a session without bookings",
  description:
    "Its days and slots go with it; its task stays (a held task stays held: give it another session, or delete it). " +
    "A session with live bookings is a 409: cancel them first.",
  access: permissions.manage,
  module: "appointments",
  audit: "session",
  errors: [409],
  examples: { 409: appointmentSays.sessionBooked(42) },
  request: { params: IdParams },
  responses: { 204: noContent },
});

export async function deleteSession(ctx: SchoolCtx, { params }: InputOf<typeof deleteRoute>) {
  try {
    await new Batch(ctx).add(...Sessions.deleteOne(ctx, params.id, { where: noBookings })).commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    if (await Sessions.find(ctx, params.id, { id: sessions.id })) {
      throw conflict(appointmentSays.sessionBooked(params.id));
    }
    throw notFound(m`Session ${params.id} not found`);
  }
}
export const deleteSessionOperation = operation(deleteRoute, deleteSession);

const DeletePendingBody = z
  .object({ taskId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }) })
  .strict();

const deletePendingRoute = defineRoute({
  method: "post",
  path: "/api/v1/session/delete-pending",
  tag: "Permissions and tasks",
  operationId: "deletePendingSession",
  summary: "Delete a task's unpublished session together with its held task",
  description:
    "What an abandoned set-up leaves: a task that requires an appointment and was never sent (draft), and its draft " +
    "session if it has one. A task already sent is a 409 (delete it with a reason: POST /api/v1/pending/{id}/delete).",
  access: permissions.manage,
  module: "appointments",
  audit: "session",
  errors: [409],
  examples: {
    409: [
      { name: "sent", summary: "The task was sent already", detail: appointmentSays.taskSent(7) },
      { name: "changed", summary: "The task was sent or deleted meanwhile", detail: appointmentSays.taskChanged(7) },
    ],
  },
  request: { body: jsonBody(DeletePendingBody, "SessionDeletePending") },
  responses: { 204: noContent },
});

export async function deletePendingSession(ctx: SchoolCtx, { body }: InputOf<typeof deletePendingRoute>) {
  const batch = new Batch(ctx);
  const t = batch.read(Tasks.select(ctx, { status: tasks.status }).where(eq(tasks.id, body.taskId)));
  const s = batch.read(
    Sessions.select(ctx, { id: sessions.id, status: sessions.status }).where(eq(sessions.taskId, body.taskId)),
  );
  const results = await batch.commit();
  const [found] = results.get(t);
  const [own] = results.get(s);
  if (!found) throw notFound(m`Task ${body.taskId} not found`);
  if (found.status !== "draft" || own?.status === "published") {
    throw conflict(appointmentSays.taskSent(body.taskId));
  }
  const write = new Batch(ctx);
  // The session goes by cascade with its task; its own audit row is written first.
  if (own) write.add(Sessions.auditRemoved(ctx, and(eq(sessions.id, own.id), eq(sessions.status, "draft"))));
  write.add(...deleteStatements(ctx, body.taskId, null, eq(tasks.status, "draft")));
  try {
    await write.commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(appointmentSays.taskChanged(body.taskId));
    throw err;
  }
}
export const deletePendingSessionOperation = operation(deletePendingRoute, deletePendingSession);

// ---- Slots --------------------------------------------------------------------------------------

const SlotsBody = z
  .object({
    slotMinutes: settings.slotMinutes.optional(),
    breakMinutes: settings.breakMinutes.optional(),
    capacity: settings.capacity.optional(),
  })
  .strict();

const Generated = z
  .object({
    sessionId: z.number().int(),
    total: z.number().int().openapi({ example: 48, description: "Slots the session has now" }),
    created: z.number().int().openapi({ description: "Slots this call added" }),
    kept: z.number().int().openapi({ description: "Slots already there (their bookings stay)" }),
    removed: z
      .number()
      .int()
      .openapi({ description: "Slots the days' windows no longer hold, removed (never a booked one: that is a 409)" }),
  })
  .openapi("SessionSlotsGenerated");

const slotsRoute = defineRoute({
  method: "put",
  path: "/api/v1/session/{id}/slots",
  tag: "Permissions and tasks",
  operationId: "updateSessionSlots",
  summary: "Generate the session's time slots from its days' windows",
  description:
    "Each window is cut into slots of slotMinutes with breakMinutes after each (given here, they become the session's " +
    "settings), in the school's time zone: on a day the clocks change the window holds the real time it spans. Slots " +
    "already there are kept with their bookings; slots the windows no longer hold are removed, unless booked: then a " +
    "409 naming them, and nothing changes. Each slot has the session's capacity (a lower capacity than a slot's " +
    "bookings: 409).",
  access: permissions.manage,
  module: "appointments",
  audit: "session",
  errors: [409],
  examples: {
    409: [
      {
        name: "bookedRemoved",
        summary: "Windows that no longer hold booked slots",
        detail: appointmentSays.bookedSlotsRemoved([{ id: 118, date: "2027-03-12", start: "16:30" }]),
      },
      {
        name: "overCapacity",
        summary: "A capacity below a slot's bookings",
        detail: appointmentSays.overCapacity(1, [{ id: 118, booked: 2 }]),
      },
      { name: "raced", summary: "A booking came in meanwhile", detail: appointmentSays.slotsChanged(42) },
    ],
  },
  request: { params: IdParams, body: jsonBody(SlotsBody, "SessionSlots") },
  responses: { 200: json(Generated, "What changed") },
});

export async function updateSessionSlots(ctx: SchoolCtx, { params, body }: InputOf<typeof slotsRoute>) {
  const read = new Batch(ctx);
  const s = read.read(Sessions.select(ctx).where(eq(sessions.id, params.id)));
  const days = read.read(
    SessionDays.select(ctx, { id: sessionDays.id, date: sessionDays.date, windows: sessionDays.windows }).where(
      eq(sessionDays.sessionId, params.id),
    ),
  );
  const slots = read.read(
    TimeSlots.select(ctx, {
      id: timeSlots.id,
      dayId: timeSlots.dayId,
      teacherId: timeSlots.teacherId,
      startsAt: timeSlots.startsAt,
      endsAt: timeSlots.endsAt,
      start: timeSlots.start,
      date: timeSlots.date,
      capacity: timeSlots.capacity,
      booked: timeSlots.booked,
    }).where(eq(timeSlots.sessionId, params.id)),
  );
  const school = read.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)));
  const results = await read.commit();
  const [found] = results.get(s);
  if (!found) throw notFound(m`Session ${params.id} not found`);
  const plan = {
    slotMinutes: body.slotMinutes ?? found.slotMinutes,
    breakMinutes: body.breakMinutes ?? found.breakMinutes,
    capacity: body.capacity ?? found.capacity,
  };
  const planned = plannedSlots(results.get(days), plan, results.get(school)[0]?.timeZone ?? "UTC");
  const existing = results.get(slots);
  const wanted = new Set(planned.map(slotKey));
  const have = new Map(existing.map((e) => [slotKey(e), e]));
  const removed = existing.filter((e) => !wanted.has(slotKey(e)));
  const created = planned.filter((p) => !have.has(slotKey(p)));
  const kept = existing.filter((e) => wanted.has(slotKey(e)));
  const booked = removed.filter((e) => e.booked > 0);
  if (booked.length) {
    throw conflict(appointmentSays.bookedSlotsRemoved(booked));
  }
  const over = kept.filter((k) => k.booked > plan.capacity);
  if (over.length) {
    throw conflict(appointmentSays.overCapacity(plan.capacity, over));
  }
  const now = ctx.deps.clock.now().toISOString();
  const given = (["slotMinutes", "breakMinutes", "capacity"] as const).filter((k) => body[k] !== undefined);
  const changes = {
    slots: { old: existing.length, new: planned.length },
    ...Object.fromEntries(given.map((k) => [k, { old: sessions[k], new: body[k] }])),
  };
  const batch = new Batch(ctx).add(
    ...Sessions.updateOne(ctx, params.id, Object.fromEntries(given.map((k) => [k, body[k]])), {
      action: "generate-slots",
      changes,
    }),
  );
  if (removed.length) {
    const ids = removed.map((r) => r.id);
    batch.add(
      ...TimeSlots.delete(ctx, and(inList(timeSlots.id, ids), eq(timeSlots.booked, 0))),
      // A booking that came in meanwhile keeps its slot: the whole generation is refused.
      guardCount(ctx.deps.db, ids.length),
    );
  }
  if (created.length) {
    const rows = created.map((c) => [c.dayId, c.teacherId, c.date, c.start, c.end, c.startsAt, c.endsAt]);
    batch.add(
      ...TimeSlots.insertMany(
        ctx,
        TimeSlots.insertFrom(
          ctx,
          (row) =>
            sql`SELECT ${row({
              sessionId: params.id,
              dayId: sql`j.value->>0`,
              teacherId: sql`j.value->>1`,
              date: sql`j.value->>2`,
              start: sql`j.value->>3`,
              end: sql`j.value->>4`,
              startsAt: sql`j.value->>5`,
              endsAt: sql`j.value->>6`,
              capacity: plan.capacity,
              booked: 0,
            })} FROM json_each(${JSON.stringify(rows)}) j ORDER BY j.key`,
          now,
        ),
        sql`${timeSlots.id} > ${insertedId(timeSlots)} - changes()`,
        ["sessionId", "startsAt", "endsAt", "teacherId", "capacity"],
      ),
    );
  }
  const resized = kept.filter((k) => k.capacity !== plan.capacity).map((k) => k.id);
  if (resized.length) {
    batch.add(
      ...TimeSlots.update(
        ctx,
        and(inList(timeSlots.id, resized), lte(timeSlots.booked, plan.capacity)),
        { capacity: plan.capacity },
        "capacity",
      ),
    );
  }
  try {
    await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(appointmentSays.slotsChanged(params.id));
    throw err;
  }
  return {
    sessionId: params.id,
    total: planned.length,
    created: created.length,
    kept: kept.length,
    removed: removed.length,
  };
}
export const updateSessionSlotsOperation = operation(slotsRoute, updateSessionSlots);

// ---- Publish ------------------------------------------------------------------------------------

const publishRoute = defineRoute({
  method: "put",
  path: "/api/v1/session/{id}/publish",
  tag: "Permissions and tasks",
  operationId: "publishSession",
  summary: "Publish a session: bookable from now, its audience told",
  description:
    "From draft only (else 409), with at least one slot still ahead (else 422). Its task is sent now if it was held, and " +
    "the task's recipients (their families' guardians, the named users) are told they can book. 200: the session.",
  access: permissions.manage,
  module: "appointments",
  audit: "session",
  errors: [409, 422],
  examples: {
    409: [
      { name: "published", summary: "Published already", detail: appointmentSays.publishedAlready(42, "published") },
      { name: "raced", summary: "Published meanwhile", detail: appointmentSays.publishedMeanwhile(42) },
    ],
    422: appointmentSays.noSlotAhead(42),
  },
  request: { params: IdParams },
  responses: { 200: json(SessionRecord, "The session, published") },
});

export async function publishSession(ctx: SchoolCtx, { params }: InputOf<typeof publishRoute>) {
  const now = ctx.deps.clock.now().toISOString();
  const read = new Batch(ctx);
  const s = read.read(
    Sessions.select(ctx, {
      status: sessions.status,
      title: sessions.title,
      taskId: sessions.taskId,
      ahead: sql<number>`(SELECT count(*) FROM appointment_slot x WHERE x.session_id = ${sessions.id} AND x.starts_at > ${now})`,
    }).where(eq(sessions.id, params.id)),
  );
  const results = await read.commit();
  const [found] = results.get(s);
  if (!found) throw notFound(m`Session ${params.id} not found`);
  if (found.status !== "draft") throw conflict(appointmentSays.publishedAlready(params.id, found.status));
  if (found.ahead === 0) throw unprocessable(appointmentSays.noSlotAhead(params.id));
  const who = whoOf(await recipientsOf(ctx, found.taskId).all());
  const sending = notifyAll(
    ctx,
    toRecipients(
      {
        category: "tasks",
        title: { en: "Book your appointment", es: "Reserve su cita" },
        body: found.title,
        about: { entity: "session", id: params.id },
      },
      who,
    ),
  );
  const batch = new Batch(ctx).add(
    ...Sessions.updateOne(
      ctx,
      params.id,
      { status: "published", publishedAt: now },
      { action: "publish", where: eq(sessions.status, "draft") },
    ),
    ...publishHeld(ctx, found.taskId),
    ...sending.statements,
  );
  const back = batch.read(session.readOne(ctx, params.id));
  let row: SessionRow | undefined;
  try {
    [row] = (await batch.commit()).get(back);
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(appointmentSays.publishedMeanwhile(params.id));
    throw err;
  }
  if (!row) throw notFound(m`Session ${params.id} not found`);
  await sending.dispatch();
  return toSession(row);
}
export const publishSessionOperation = operation(publishRoute, publishSession);
