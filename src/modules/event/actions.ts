/**
 * What staff do to an event beyond editing it — remind its audience now, delete it with a reason
 * (the audience is told; the event stays, cancelled), give it an image through a presigned URL —
 * and its public page by slug (no sign-in, no personal data).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import { EventReminders, Events, eventReminders, events } from "../../db/schema/event";
import { eq, gt, sql } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { ApiError, forbidden, notFound, say } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { limitPublicLookups, PUBLIC_LOOKUPS_PER_MINUTE } from "../../lib/rate-limit";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { imageUrlBody, signedUrlFields } from "../../lib/signed-url";
import { paragraphs } from "../../lib/text";
import { moduleOn } from "../application-module/api";
import { notify } from "../notification/api";
import { EventRecord, eventNotice, eventSays, LEADS, noticeAudience, teachersOfEvent, toEvent } from "./common";
import { permissions } from "./permissions";
import { event } from "./resource";

/** The event as its staff reader sees it, and the teachers its audience reaches, in one round trip. */
async function withTeachers(ctx: SchoolCtx, id: number) {
  const batch = new Batch(ctx);
  const row = batch.read(event.select(ctx).where(eq(events.id, id)));
  const teachers = batch.read(teachersOfEvent(ctx, id));
  const r = await batch.commit();
  const found = r.get(row)[0];
  if (!found) throw notFound(m`Event ${id} not found`);
  return { record: toEvent(found), teacherUsers: r.get(teachers).map((t) => t.userId) };
}

// ---- Remind now -----------------------------------------------------------------------------------

const remindRoute = defineRoute({
  method: "post",
  path: "/api/v1/event/{id}/remind",
  tag: "Communication",
  operationId: "remindEvent",
  summary: "Send a reminder of an event to its audience now",
  description:
    "Tells the event's audience (as it is now) of the event's time and place, in each person's language. A cancelled " +
    "event is a 409; one that has started a 422. Answers the event, with `remindedAt`.",
  access: permissions.manage,
  module: "events",
  audit: "event",
  errors: [409, 422],
  examples: { 409: eventSays.notReminded(42, "cancelled"), 422: eventSays.startedReminding(42) },
  request: { params: IdParams },
  responses: { 200: json(EventRecord, "The event, reminded") },
});

export async function remindEvent(ctx: SchoolCtx, { params }: InputOf<typeof remindRoute>) {
  const { record, teacherUsers } = await withTeachers(ctx, params.id);
  const now = ctx.deps.clock.now().toISOString();
  const sending = notify(ctx, {
    category: "events",
    ...eventNotice(LEADS.reminder, record),
    about: { entity: "event", id: params.id },
    audience: noticeAudience(record, teacherUsers),
  });
  const changed = await event.changeAndRead(ctx, params.id, {
    action: "remind",
    set: { remindedAt: now },
    from: { column: events.status, states: ["scheduled"] },
    conflict: (state) => eventSays.notReminded(params.id, state),
    rules: [{ when: gt(events.startsAt, now), message: eventSays.startedReminding(params.id) }],
    also: sending.statements,
  });
  await sending.dispatch();
  return changed;
}
export const remindEventOperation = operation(remindRoute, remindEvent);

// ---- Delete with a reason -------------------------------------------------------------------------

const ReasonBody = z
  .object({
    reason: paragraphs({ max: 1000 }).openapi({ example: "Rain is forecast; we will announce a new date." }),
  })
  .strict();

const deleteRoute = defineRoute({
  method: "post",
  path: "/api/v1/event/{id}/delete",
  tag: "Communication",
  operationId: "deleteEventWithReason",
  summary: "Delete an event with a reason: its audience is told",
  description:
    "The event is called off: it becomes `cancelled` with the reason, its scheduled reminders are skipped, and its " +
    "audience is told (the reason as staff wrote it). The event stays, so a notification's link and a subscribed " +
    "calendar show it cancelled. An event already cancelled is a 409.",
  access: permissions.manage,
  module: "events",
  audit: "event",
  errors: [409],
  examples: { 409: eventSays.cancelledAlready(42, "cancelled") },
  request: { params: IdParams, body: jsonBody(ReasonBody, "EventDeleteWithReason") },
  responses: { 200: json(EventRecord, "The event, cancelled") },
});

export async function deleteEventWithReason(ctx: SchoolCtx, { params, body }: InputOf<typeof deleteRoute>) {
  const { record, teacherUsers } = await withTeachers(ctx, params.id);
  const now = ctx.deps.clock.now().toISOString();
  const sending = notify(ctx, {
    category: "events",
    ...eventNotice(LEADS.cancelled, record, { en: `Reason: ${body.reason}`, es: `Motivo: ${body.reason}` }),
    about: { entity: "event", id: params.id },
    audience: noticeAudience(record, teacherUsers),
  });
  const changed = await event.changeAndRead(ctx, params.id, {
    action: "delete-with-reason",
    set: {
      status: "cancelled",
      cancelledAt: now,
      cancelledBy: ctx.userId,
      cancelReason: body.reason,
      sequence: sql`${events.sequence} + 1`,
    },
    from: { column: events.status, states: ["scheduled"] },
    conflict: (state) => eventSays.cancelledAlready(params.id, state),
    also: [
      ...EventReminders.update(
        ctx,
        sql`${eventReminders.eventId} = ${params.id} AND ${eventReminders.status} = 'scheduled'`,
        { status: "skipped" },
        "skip",
      ),
      ...sending.statements,
    ],
  });
  await sending.dispatch();
  return changed;
}
export const deleteEventWithReasonOperation = operation(deleteRoute, deleteEventWithReason);

// ---- Image ----------------------------------------------------------------------------------------

export const IMAGE_URL_SECONDS = 5 * 60;
const IMAGE_TYPES = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" } as const;
type ImageType = keyof typeof IMAGE_TYPES;
const IMAGE_TYPE_NAMES: [ImageType, ...ImageType[]] = ["image/png", "image/jpeg", "image/webp"];
const ImageUrlBody = imageUrlBody(IMAGE_TYPE_NAMES, "image");

const ImageUrl = z
  .object({
    image: z.string().openapi({ example: "1/events/7/image-2f1c.png", description: "The image's object key" }),
    ...signedUrlFields(IMAGE_URL_SECONDS),
  })
  .openapi("EventImageUrl");

const signedUrlRoute = defineRoute({
  method: "put",
  path: "/api/v1/event/{id}/signed-url",
  tag: "Communication",
  operationId: "createEventSignedUrl",
  summary: "Get a presigned URL to upload (PUT: sets a new image) or download (GET) an event's image",
  description:
    "PUT needs event.manage: the event's image becomes a new key `{schoolId}/events/{id}/image-{uuid}.{ext}` and the " +
    "URL uploads to it (image/png, image/jpeg or image/webp: send the returned `headers`). GET signs a download of " +
    `the current image (404 if none) for anyone who sees the event. URLs expire after ${IMAGE_URL_SECONDS} s.`,
  access: permissions.read,
  module: "events",
  audit: "event",
  context: event.config.context,
  request: { params: IdParams, body: jsonBody(ImageUrlBody, "EventImageUrlRequest") },
  responses: { 200: json(ImageUrl, "The image's key and its presigned URL") },
});

export async function createEventSignedUrl(ctx: SchoolCtx, { params, body }: InputOf<typeof signedUrlRoute>) {
  const { id } = params;
  let key: string;
  if (body.method === "PUT") {
    if (!ctx.can(permissions.manage)) {
      throw forbidden(say.missingPermission(permissions.manage.name, ctx.schoolId));
    }
    const contentType = body.contentType ?? "image/png";
    key = `${ctx.schoolId}/events/${id}/image-${crypto.randomUUID()}.${IMAGE_TYPES[contentType]}`;
    await event.commit(ctx, id, new Batch(ctx).add(...event.writes.update(ctx, id, { image: key }, "image")));
  } else {
    const found = await event.find(ctx, id);
    if (found.image === null) throw new ApiError(404, m`Event ${id} has no image; upload one with method PUT`);
    key = found.image;
  }
  const signed = await ctx.deps.signer.sign({
    key,
    method: body.method,
    contentType: body.method === "PUT" ? body.contentType : undefined,
    expiresIn: IMAGE_URL_SECONDS,
    now: ctx.deps.clock.now(),
  });
  return { image: key, ...signed };
}
export const createEventSignedUrlOperation = operation(signedUrlRoute, createEventSignedUrl);

// ---- The public page ------------------------------------------------------------------------------

/** Lookups of public pages per client address and minute (as the pickup pass): a share is read; a guesser is stopped. */

const Slug = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, zodMessage(m`An event's public key`))
  .openapi({ example: "q3Kx9Zb0LmN4pR7sT1vW2A", description: "The event's public key: its record's `slug`" });

const PublicEvent = z
  .object({
    title: z.string().openapi({ description: "What the event is" }),
    description: z.string().nullable().openapi({ description: "The details, line breaks kept; null if none" }),
    place: z.string().nullable().openapi({ description: "Where it happens; null if not said" }),
    start: z.string().openapi({ example: "2026-12-05T10:00", description: "School-local start" }),
    end: z.string().openapi({ example: "2026-12-05T13:00", description: "School-local end" }),
    timeZone: z
      .string()
      .openapi({ example: "America/Mexico_City", description: "The school's IANA zone of start and end" }),
    startsAt: z.iso.datetime().openapi({ description: "The start as an instant (UTC)" }),
    endsAt: z.iso.datetime().openapi({ description: "The end as an instant (UTC)" }),
    status: z.enum(["scheduled", "cancelled"]).openapi({ description: "scheduled, or cancelled (called off)" }),
    imageUrl: z
      .string()
      .nullable()
      .openapi({ description: `A presigned GET of the image (${IMAGE_URL_SECONDS} s), or null` }),
    school: z
      .object({ name: z.string().openapi({ description: "The school's name" }) })
      .openapi({ description: "The school that holds the event" }),
  })
  .openapi("PublicEvent", { description: "What anyone with the link may know of an event" });

const publicRoute = defineRoute({
  method: "get",
  // The slug is a query parameter: `/event/public/{slug}` would be ambiguous with `/event/{id}/remind`.
  path: "/api/v1/event/public",
  tag: "Communication",
  operationId: "getPublicEvent",
  summary: "An event's public page by its slug (no sign-in): what, when and where",
  description:
    "The title, description, place, times, status and image of an event, and its school's name: never its audience, " +
    "who made it or a cancellation's reason. An unknown slug or a school with the events module disabled: 404. " +
    `${PUBLIC_LOOKUPS_PER_MINUTE} lookups a minute per client address, then 429.`,
  access: "public",
  errors: [404, 429],
  examples: { 404: say.notFound("Event"), 429: eventSays.tooManyLookups },
  request: { query: z.object({ slug: Slug }) },
  responses: { 200: json(PublicEvent, "The event's public page") },
});

export async function getPublicEvent(ctx: Ctx, { query }: InputOf<typeof publicRoute>) {
  const now = ctx.deps.clock.now();
  await limitPublicLookups(ctx, "event-public", eventSays.tooManyLookups);
  const school = Events.schoolOf();
  const row = await Events.everySchool(ctx, () => ({
    title: events.title,
    description: events.description,
    place: events.place,
    start: events.startLocal,
    end: events.endLocal,
    timeZone: events.timeZone,
    startsAt: events.startsAt,
    endsAt: events.endsAt,
    status: events.status,
    image: events.image,
    schoolName: schools.name,
    on: sql<number>`${moduleOn(ctx, "events", school)}`,
  }))
    .join(Schools, eq(schools.id, school))
    .where(eq(events.slug, query.slug))
    .first();
  if (!row?.on) throw notFound(m`Event not found`);
  const image = row.image
    ? await ctx.deps.signer.sign({ key: row.image, method: "GET", expiresIn: IMAGE_URL_SECONDS, now })
    : null;
  return {
    title: row.title,
    description: row.description,
    place: row.place,
    start: row.start,
    end: row.end,
    timeZone: row.timeZone,
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    status: row.status,
    imageUrl: image?.url ?? null,
    school: { name: row.schoolName },
  };
}
export const getPublicEventOperation = operation(publicRoute, getPublicEvent);
