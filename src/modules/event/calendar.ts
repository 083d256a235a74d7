/**
 * Calendar feeds (`/api/v1/event-calendar`): an iCalendar file (RFC 5545, src/lib/ical.ts) a phone
 * subscribes to without a bearer header, at `GET /api/v1/event-calendar/feed?token=`.
 *
 * - The school's feed (staff make it; for a page everyone may see): the events for the whole school
 *   and the school's holidays.
 * - A family's feed (one of its parents, or staff for them): the events for the whole school and
 *   for the levels and groups of the family's active children, and the holidays.
 *
 * Its events from 90 days back to a year ahead (at most 1,000): timed events in the school's zone
 * (TZID with its VTIMEZONE), cancelled ones as STATUS:CANCELLED, holidays as all-day events. The
 * token is `{id}.{mac}`, the mac an HMAC of the feed's id and nonce under the service's secret:
 * nothing that opens a feed is stored. Rotating changes the nonce (the old link stops working);
 * deleting the feed revokes it.
 */
import { createHmac } from "node:crypto";
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Schools, schools, Users, users } from "../../db/schema/core";
import { CalendarFeeds, calendarFeeds, EventAudiences, Events, eventAudiences, events } from "../../db/schema/event";
import { Families, families } from "../../db/schema/family";
import { GroupStudents, groupStudents } from "../../db/schema/group";
import { SchoolHolidayCycles, schoolHolidayCycles } from "../../db/schema/holiday-cycle";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import { asc, eq, gte, isNull, lt, lte, or, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { randomToken, timingSafeEqual } from "../../lib/crypto";
import { ApiError, forbidden, invalidBody, notFound, say, unprocessable } from "../../lib/errors";
import { type CalendarEvent, calendarText } from "../../lib/ical";
import { languageOf } from "../../lib/language";
import { type Message, m } from "../../lib/message";
import { currentRequest } from "../../lib/metrics";
import { addressKey, hit } from "../../lib/rate-limit";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, operation } from "../../lib/route";
import { addDays, dateIn } from "../../lib/zoned-time";
import { moduleOn } from "../application-module/api";
import { eventSays } from "./common";
import { permissions } from "./permissions";

const FEED_PATH = "/api/v1/event-calendar/feed";
const FEED_BACK_DAYS = 90;
const FEED_AHEAD_DAYS = 366;
const FEED_MAX_EVENTS = 1000;
/** Fetches of one feed per hour: a phone refreshes every few minutes at most. */
const FETCHES_PER_HOUR = 120;
/** Unknown tokens per client address and minute: a guesser is stopped (and would need 2^256 tries). */
const MISSES_PER_MINUTE = 30;
const REFRESH_MINUTES = 60;

/** The token of a feed: its id and an HMAC of its id, school and nonce under the service's secret. */
function tokenOf(secret: string, feed: { id: number; schoolId: number; nonce: string }): string {
  const mac = createHmac("sha256", secret)
    .update(`calendar-feed:v1:${feed.schoolId}:${feed.id}:${feed.nonce}`)
    .digest("base64url");
  return `${feed.id}.${mac}`;
}

const TOKEN = /^([1-9]\d{0,14})\.([A-Za-z0-9_-]{43})$/;

// ---- The feed records -----------------------------------------------------------------------------

/** What a feed's kind means (its record and its create). */
const FEED_KIND =
  "school: the school's feed (whole-school events and holidays: a page anyone may see); family: a family's (also " +
  "its children's levels and groups)";

const FeedRecord = RecordBase.extend({
  kind: z.enum(["school", "family"]).openapi({ example: "family", description: FEED_KIND }),
  familyId: z.number().int().nullable().openapi({ description: "The family whose feed it is; null for the school's" }),
  language: z.enum(["es", "en"]).openapi({ description: "The language of the texts the service writes in it" }),
  path: z.string().openapi({
    example: `${FEED_PATH}?token=12.3qYx9Zb0LmN4pR7sT1vW2AbCdEfGhIjKlMnOpQrStU`,
    description: "The feed's path and query (its token is the secret)",
  }),
  url: z.string().openapi({ description: "The feed's URL on the origin it was asked on" }),
  webcal: z.string().openapi({ description: "The same URL as webcal://, which phones open to subscribe" }),
  createdBy: z.number().int().nullable(),
});

function toFeed(ctx: SchoolCtx, row: typeof calendarFeeds.$inferSelect) {
  // The token's characters (digits, base64url and a dot) need no escaping in a query.
  const path = `${FEED_PATH}?token=${tokenOf(ctx.deps.config.authSecret, row)}`;
  const origin = currentRequest()?.origin ?? "";
  const url = `${origin}${path}`;
  return {
    ...timestamps(row),
    kind: row.familyId === null ? ("school" as const) : ("family" as const),
    familyId: row.familyId,
    language: row.language,
    path,
    url,
    webcal: url.replace(/^https?:\/\//, "webcal://"),
    createdBy: row.createdBy,
  };
}

/** The families of the caller's parent profile here. */
const ownFamilies = (ctx: SchoolCtx) => Parents.pick(ctx, parents.familyId, eq(parents.userId, ctx.userId ?? 0));

export const calendarFeed = defineResource({
  name: "calendarFeed",
  plural: "calendarFeeds",
  label: m`Calendar feed`,
  path: "/api/v1/event-calendar",
  tag: "Communication",
  scope: "school",
  module: "events",
  data: CalendarFeeds,
  record: FeedRecord,
  toRecord: toFeed,
  // Staff: every feed of the school; a parent: their family's.
  visibleTo: (ctx) => (ctx.can(permissions.manage) ? undefined : inList(calendarFeeds.familyId, ownFamilies(ctx))),
  conflictMessage: m`This calendar feed exists: rotate it (PATCH .../rotate) or delete it`,
});

export const createCalendarFeedOperation = calendarFeed.create({
  access: permissions.read,
  input: z.object({
    kind: z.enum(["school", "family"]).openapi({ example: "family", description: FEED_KIND }),
    familyId: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: "family: default the caller's own family; staff name the family" }),
    language: z.enum(["es", "en"]).optional().openapi({ description: "Default: the caller's language" }),
  }),
  values: (ctx, { body }) => feedValues(ctx, body),
  summary: "Make the school's or a family's calendar feed",
  description:
    "school: staff (event.manage) only. family: a parent makes their own family's (`familyId` may be left out; " +
    "another family is a 404; a parent of no family a 422), staff any family's of the school. One feed per school " +
    "and per family: a second is a 409 (rotate or delete it). The answer's `url` (and `webcal`) is what a phone " +
    "subscribes to: keep it private.",
  errors: [422],
  examples: {
    422: [
      { name: "noFamily", summary: "A caller who is the parent of no family", detail: eventSays.noFamily },
      { name: "nameTheFamily", summary: "Staff, without familyId", detail: eventSays.nameTheFamily },
    ],
  },
});

/** Whose feed a create makes, read in one round trip: the caller's language and family, the family named. */
async function feedValues(
  ctx: SchoolCtx,
  body: { kind: "school" | "family"; familyId?: number; language?: "es" | "en" },
) {
  const staff = ctx.can(permissions.manage);
  const self = ctx.userId ?? 0;
  const batch = new Batch(ctx);
  const me = batch.read(Users.select(ctx, { language: users.language }).where(eq(users.id, self)));
  const mine = batch.read(Parents.select(ctx, { familyId: parents.familyId }).where(eq(parents.userId, self)));
  const named =
    body.familyId === undefined
      ? undefined
      : batch.read(Families.select(ctx, { id: families.id }).where(eq(families.id, body.familyId)));
  const r = await batch.commit();
  let familyId: number | null = null;
  if (body.kind === "school") {
    if (!staff) throw forbidden(say.missingPermission(permissions.manage.name, ctx.schoolId));
    if (body.familyId !== undefined) {
      throw invalidBody([{ path: "familyId", message: m`Only for a family's feed (kind family)` }]);
    }
  } else {
    const own = r.get(mine)[0]?.familyId ?? null;
    if (body.familyId !== undefined) {
      const exists = named ? r.get(named).length > 0 : false;
      // A family that is not the caller's is not there for a parent (404), as any other record.
      if (!exists || (!staff && own !== body.familyId)) throw notFound(m`Family ${body.familyId} not found`);
      familyId = body.familyId;
    } else if (own !== null) familyId = own;
    else {
      throw unprocessable(staff ? eventSays.nameTheFamily : eventSays.noFamily);
    }
  }
  return {
    familyId,
    nonce: randomToken(16),
    language: body.language ?? languageOf(ctx, r.get(me)[0]?.language),
    createdBy: ctx.userId,
  };
}

export const listCalendarFeeds = calendarFeed.list({
  access: permissions.read,
  summary: "List calendar feeds (paginated): staff every feed of the school, a parent their family's",
});

export const getCalendarFeed = calendarFeed.get({ access: permissions.read });

export const rotateCalendarFeedOperation = calendarFeed.action({
  name: "rotate",
  access: permissions.read,
  summary: "Rotate a calendar feed's link: the old one stops working at once",
  description: "Staff any feed of the school; a parent their family's. Answers the feed with its new URL.",
  set: () => ({ nonce: randomToken(16) }),
});

export const deleteCalendarFeed = calendarFeed.delete({
  access: permissions.read,
  summary: "Delete (revoke) a calendar feed: its link stops working",
  description: "Staff any feed of the school; a parent their family's.",
});

// ---- The feed -------------------------------------------------------------------------------------

const feedRoute = defineRoute({
  method: "get",
  // The token is a query parameter: `/event-calendar/feed/{token}` would be ambiguous with `/event-calendar/{id}/rotate`.
  path: FEED_PATH,
  tag: "Communication",
  operationId: "getCalendarFeedFile",
  summary: "A calendar feed (iCalendar, text/calendar) by its secret link: no sign-in",
  description:
    "What a phone's calendar subscribes to (the feed record's `url` or `webcal`). The events from 90 days back to " +
    "a year ahead in the school's time zone (cancelled ones marked cancelled) and the school's holidays as all-day " +
    `events. An unknown or revoked link, or a school with the events module disabled: 404. ${FETCHES_PER_HOUR} ` +
    `fetches of a feed an hour, and ${MISSES_PER_MINUTE} unknown links per client address a minute, then 429.`,
  access: "public",
  errors: [404, 429],
  examples: {
    404: say.notFound("Calendar feed"),
    429: [
      { name: "misses", summary: "Too many unknown links from one address", detail: eventSays.tooManyFeedMisses },
      { name: "fetches", summary: "Too many fetches of one feed in an hour", detail: eventSays.tooManyFeedFetches },
    ],
  },
  request: {
    // Lenient, as every public route's query: a calendar app that adds a parameter of its own still gets the feed.
    query: z.object({
      token: z.string().max(80).openapi({
        example: "12.3qYx9Zb0LmN4pR7sT1vW2AbCdEfGhIjKlMnOpQrStU",
        description: "The feed's secret: as its record's `url` carries it",
      }),
    }),
  },
  responses: {
    200: {
      description: "The calendar (RFC 5545)",
      content: {
        "text/calendar": { schema: z.string().openapi({ example: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n..." }) },
      },
    },
  },
});

const tooMany = (retryAfter: number, message: Message) =>
  new ApiError(429, message, { headers: { "retry-after": String(retryAfter) } });

export async function getCalendarFeedFile(ctx: Ctx, { query }: InputOf<typeof feedRoute>): Promise<Response> {
  const now = ctx.deps.clock.now();
  const match = TOKEN.exec(query.token);
  const school = CalendarFeeds.schoolOf();
  const row = match
    ? await CalendarFeeds.everySchool(ctx, () => ({
        id: calendarFeeds.id,
        schoolId: school,
        familyId: calendarFeeds.familyId,
        nonce: calendarFeeds.nonce,
        language: calendarFeeds.language,
        schoolName: schools.name,
        timeZone: schools.timeZone,
        on: sql<number>`${moduleOn(ctx, "events", school)}`,
      }))
        .join(Schools, eq(schools.id, school))
        .where(eq(calendarFeeds.id, Number(match[1])))
        .first()
    : undefined;
  const valid = row && match && timingSafeEqual(tokenOf(ctx.deps.config.authSecret, row), query.token);
  if (!row || !valid) {
    const miss = await hit(
      ctx.deps.db,
      `calendar-miss-ip:${addressKey(currentRequest()?.clientAddress)}`,
      MISSES_PER_MINUTE,
      60,
      now,
    );
    if (!miss.allowed) throw tooMany(miss.retryAfter, eventSays.tooManyFeedMisses);
    throw notFound(m`Calendar feed not found`);
  }
  if (!row.on) throw notFound(m`Calendar feed not found`);
  const limited = await hit(ctx.deps.db, `calendar-feed:${row.id}`, FETCHES_PER_HOUR, 3600, now);
  if (!limited.allowed) throw tooMany(limited.retryAfter, eventSays.tooManyFeedFetches);

  // The feed's school is the current school of what follows: its accessors scope every read to it.
  const here: SchoolCtx = { ...ctx, schoolId: row.schoolId };
  const from = new Date(now.getTime() - FEED_BACK_DAYS * 86_400_000).toISOString();
  const to = new Date(now.getTime() + FEED_AHEAD_DAYS * 86_400_000).toISOString();
  const batch = new Batch(here);
  const rows = batch.read(
    Events.select(here, {
      id: events.id,
      title: events.title,
      description: events.description,
      place: events.place,
      startsAt: events.startsAt,
      endsAt: events.endsAt,
      status: events.status,
      sequence: events.sequence,
      updatedAt: events.updatedAt,
    })
      .where(gte(events.endsAt, from), lt(events.startsAt, to), audienceOf(here, row.familyId))
      .orderBy(asc(events.startsAt), asc(events.id))
      .limit(FEED_MAX_EVENTS),
  );
  const cycles = batch.read(
    SchoolHolidayCycles.select(here, {
      id: schoolHolidayCycles.id,
      start: schoolHolidayCycles.startHolidays,
      end: schoolHolidayCycles.endHolidays,
      updatedAt: schoolHolidayCycles.updatedAt,
    })
      .where(lte(schoolHolidayCycles.startHolidays, to), gte(schoolHolidayCycles.endHolidays, from))
      .orderBy(asc(schoolHolidayCycles.startHolidays)),
  );
  const r = await batch.commit();
  const lang = row.language;
  const uid = (kind: string, id: number) => `${kind}-${id}.school-${row.schoolId}@school-api`;
  const calendarEvents: CalendarEvent[] = [
    ...r.get(rows).map(
      (e): CalendarEvent => ({
        uid: uid("event", e.id),
        start: new Date(e.startsAt),
        end: new Date(e.endsAt),
        summary: e.status === "cancelled" ? m`Cancelled: ${e.title}`.render(lang) : e.title,
        description: e.description ?? undefined,
        location: e.place ?? undefined,
        status: e.status === "cancelled" ? "CANCELLED" : "CONFIRMED",
        sequence: e.sequence,
        lastModified: new Date(e.updatedAt),
      }),
    ),
    ...r.get(cycles).map((c): CalendarEvent => {
      const first = dateIn(row.timeZone, new Date(c.start));
      // The last local day the cycle covers: a cycle ending at midnight has ended (docs/domain.md, "A route's day").
      const last = dateIn(row.timeZone, new Date(Math.max(Date.parse(c.end) - 1, Date.parse(c.start))));
      return {
        uid: uid("holiday", c.id),
        allDay: { start: first, end: addDays(last, 1) },
        summary: m`No school (holidays)`.render(lang),
        lastModified: new Date(c.updatedAt),
      };
    }),
  ];
  const body = calendarText({
    prodId: "-//School API//Events//EN",
    method: "PUBLISH",
    timeZone: row.timeZone,
    stamp: now,
    name: row.familyId === null ? row.schoolName : m`${row.schoolName} (family)`.render(lang),
    refreshMinutes: REFRESH_MINUTES,
    events: calendarEvents,
  });
  return new Response(body, {
    headers: {
      "content-type": "text/calendar; charset=utf-8",
      "content-disposition": 'inline; filename="calendar.ics"',
      "cache-control": "private, max-age=300",
    },
  });
}
export const getCalendarFeedFileOperation = operation(feedRoute, getCalendarFeedFile);

/**
 * The events a feed shows: the school's feed the events for the whole school; a family's also those
 * for the levels and groups of its active children.
 */
function audienceOf(ctx: SchoolCtx, familyId: number | null): SQL | undefined {
  const whole = eq(events.forSchool, true);
  if (familyId === null) return whole;
  const kids = Students.pick(
    ctx,
    students.id,
    eq(students.familyId, familyId),
    isNull(students.deletedAt),
    eq(students.status, "active"),
  );
  return or(
    whole,
    EventAudiences.exists(
      ctx,
      eq(eventAudiences.eventId, events.id),
      or(
        inList(
          eventAudiences.groupId,
          GroupStudents.pick(ctx, groupStudents.groupId, inList(groupStudents.studentId, kids)),
        ),
        inList(eventAudiences.level, Students.pick(ctx, students.level, inList(students.id, kids))),
      ),
    ),
  );
}
