/**
 * Events (`/api/v1/event`): staff create, change and delete them; teachers and parents read the
 * events of their audience (./common.ts). Creating one tells its audience (unless `notify: false`);
 * a change tells it when asked (`notify: true`). The list of a parent is one D1 round trip.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import {
  EVENT_STATUSES,
  EventAudiences,
  EventReminders,
  Events,
  eventAudiences,
  eventReminders,
  events,
} from "../../db/schema/event";
import { Groups, groups } from "../../db/schema/group";
import { and, eq, gte, lt, type SQL, sql } from "../../db/sql";
import { inList, type Statement } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { schoolDate, schoolDateTime } from "../../lib/dates";
import { type FieldError, invalidBody, notFound } from "../../lib/errors";
import { LEVELS, type Level } from "../../lib/levels";
import { m, zodMessage } from "../../lib/message";
import { stateName } from "../../lib/names";
import { Listing, type OrderKey, orderTerms, PageQuery, pageOf, sortOrder, sortParam } from "../../lib/pagination";
import { idFilter, idList } from "../../lib/params";
import { defineResource, type Filters, filterConditions } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { paragraphs, text } from "../../lib/text";
import { addDays, zonedInstant } from "../../lib/zoned-time";
import { actedForBy, actingLoader, delegationsHere } from "../delegate/api";
import { notify, type Sending } from "../notification/api";
import { notOfferedMessage, readLevels } from "../school/api";
import {
  type AudienceOf,
  EventRecord,
  eventFields,
  eventNotice,
  LEADS,
  MAX_EVENT_DAYS,
  noticeAudience,
  partsOf,
  teachersOf,
  toEvent,
  visibleEvent,
} from "./common";
import { permissions } from "./permissions";

/** Whom a caller who does not manage events acts for (exact), for the reads of one event. */
const actingContext = actingLoader(permissions.manage);

export const event = defineResource({
  name: "event",
  plural: "events",
  label: m`Event`,
  path: "/api/v1/event",
  tag: "Communication",
  scope: "school",
  module: "events",
  data: Events,
  record: EventRecord,
  view: { fields: eventFields },
  toRecord: (_ctx, row) => toEvent(row),
  visibleTo: (ctx) => visibleEvent(ctx),
  context: actingContext,
});

// ---- The list -------------------------------------------------------------------------------------

export const filters = {
  status: {
    schema: z.enum(EVENT_STATUSES).optional().openapi({ description: "scheduled or cancelled" }),
    where: (_ctx: Ctx, v: (typeof EVENT_STATUSES)[number]) => eq(events.status, v),
    example: "scheduled",
  },
  from: {
    schema: schoolDate("Events not over before this day (ending on it or later)").optional(),
    where: (_ctx: Ctx, v: string) => gte(events.endLocal, v),
    example: "2026-12-01",
  },
  to: {
    schema: schoolDate("Events starting on this day or earlier", "2026-12-31").optional(),
    // Before the next day: a range of event_start_idx.
    where: (_ctx: Ctx, v: string) => lt(events.startLocal, addDays(v, 1)),
    example: "2026-12-31",
  },
  level: {
    schema: z.enum(LEVELS).optional().openapi({ description: "Events for this level" }),
    where: (ctx: SchoolCtx, v: Level) =>
      EventAudiences.exists(ctx, eq(eventAudiences.eventId, events.id), eq(eventAudiences.level, v)),
    example: "elementary",
  },
  groupId: {
    schema: idFilter("Events for this group"),
    where: (ctx: SchoolCtx, v: number) =>
      EventAudiences.exists(ctx, eq(eventAudiences.eventId, events.id), eq(eventAudiences.groupId, v)),
    example: "1",
  },
  title: {
    schema: searchTerm("Part of the title (case and accents ignored)"),
    where: (_ctx: Ctx, v: string) => contains(events.titleSearch, v),
    example: "festival",
  },
} satisfies Filters;

const SORT = { start: events.startLocal, createdAt: events.createdAt };
const START_ORDER: OrderKey[] = [{ by: events.startLocal }, { by: events.id }];

const ListQuery = z.strictObject({
  ...PageQuery.shape,
  status: filters.status.schema,
  from: filters.from.schema,
  to: filters.to.schema,
  level: filters.level.schema,
  groupId: filters.groupId.schema,
  title: filters.title.schema,
  sort: sortParam(SORT),
});

const listRoute = defineRoute({
  method: "get",
  path: "/api/v1/event",
  tag: "Communication",
  operationId: "listEvents",
  summary: "List events (paginated), soonest start first",
  description:
    "event.manage (staff): every event of the school; a parent the events for the whole school and for their " +
    "children's levels and groups (a delegate: also those of the parent they act for today); a teacher those of " +
    "the groups they teach and their levels. Cancelled events are listed with their status. One D1 round trip.",
  access: permissions.read,
  module: "events",
  request: { query: ListQuery },
  responses: { 200: json(pageOf(EventRecord, "EventPage"), "A page of events") },
  extensions: {
    "x-filters": Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.example])),
    "x-sort": Object.keys(SORT),
  },
});

/**
 * A page of events. A caller who does not manage events sees their audience's: the page and its
 * count are read with the delegations that may be valid today (a superset by a day at most), in the
 * same round trip as those delegations; when one of them is not valid today in the school's zone
 * (the first or last day of a delegation, near midnight), the page is read again with the exact
 * list (a second round trip, rare).
 */
export async function listEvents(ctx: SchoolCtx, { query }: InputOf<typeof listRoute>) {
  const order = query.sort ? sortOrder(query.sort, events.id) : START_ORDER;
  const filtered = filterConditions(filters, query, ctx);
  const read = async (visible: ReturnType<typeof visibleEvent>, extra?: Batch) => {
    const batch = extra ?? new Batch(ctx);
    const where = and(...filtered, visible);
    const rows = batch.read(
      event
        .select(ctx)
        .where(where)
        .orderBy(...orderTerms(order))
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize),
    );
    const total = batch.read(Events.select(ctx, { id: events.id }).where(where).count());
    const results = await batch.commit();
    return { results, page: new Listing(results.get(rows).map(toEvent), results.get(total)[0]?.n ?? 0, query) };
  };
  const self = ctx.userId;
  if (ctx.can(permissions.manage) || self === null) return (await read(undefined)).page;
  const now = ctx.deps.clock.now();
  const batch = new Batch(ctx);
  const delegations = batch.read(delegationsHere(ctx, self, now));
  const first = await read(visibleEvent(ctx), batch);
  const found = first.results.get(delegations);
  const exact = actedForBy(self, found, now);
  // Every delegation the superset counted is valid today: the page is exact.
  if (exact.length === 1 + new Set(found.map((d) => d.parentUserId)).size) return first.page;
  return (await read(visibleEvent(ctx, exact))).page;
}
export const listEventsOperation = operation(listRoute, listEvents);

export const getEvent = event.get({
  access: permissions.read,
  summary: "Get an event by id",
  description: "For its audience and staff; another event is a 404.",
});

// ---- Create ---------------------------------------------------------------------------------------

const MAX_GROUPS = 50;

const audienceFields = {
  forSchool: z.boolean().optional().openapi({ description: "For every member of the school (no levels or groups)" }),
  levels: z
    .array(z.enum(LEVELS))
    .min(1)
    .max(LEVELS.length)
    .refine((v) => new Set(v).size === v.length, zodMessage(m`Each level at most once`))
    .optional()
    .openapi({ uniqueItems: true, example: ["elementary"], description: "Levels the school offers" }),
  groupIds: idList({ max: MAX_GROUPS, what: "Group" }).optional(),
};

const Title = text({ max: 200 }).openapi({ example: "Winter festival" });
const Description = paragraphs({ max: 5000 }).openapi({ example: "Songs, games and hot chocolate." });
const Place = text({ max: 200 }).openapi({ example: "Main yard" });
const Notify = z.boolean().optional();

const CreateBody = z.object({
  title: Title,
  description: Description.optional(),
  place: Place.optional(),
  start: schoolDateTime("School-local start"),
  end: schoolDateTime("School-local end, after the start", "2026-12-05T13:00"),
  ...audienceFields,
  notify: Notify.openapi({ description: "Tell the audience (default true)" }),
});

const created = event.create({
  access: permissions.manage,
  input: CreateBody,
  summary: "Create an event",
  description:
    "For the whole school (`forSchool`), or for levels the school offers and groups of the school. Start and end are " +
    `school-local; the end after the start, at most ${MAX_EVENT_DAYS} days later (else 400). A level the school does ` +
    "not offer is a 400; a group of another school a 404. The audience is told, unless `notify` is false.",
});

/** The audience a body names, or the field errors that refuse it. */
function audienceOfBody(body: { forSchool?: boolean; levels?: Level[]; groupIds?: number[] }): AudienceOf {
  const levels = body.levels ?? [];
  const groupIds = body.groupIds ?? [];
  const errors: FieldError[] = [];
  if (body.forSchool && (levels.length || groupIds.length)) {
    errors.push({
      path: "forSchool",
      message: m`The whole school includes every level and group: send one or the other`,
    });
  }
  if (!body.forSchool && !levels.length && !groupIds.length) {
    errors.push({ path: "forSchool", message: m`Name the audience: forSchool, levels or groupIds` });
  }
  if (errors.length) throw invalidBody(errors);
  return { forSchool: body.forSchool === true, levels, groupIds };
}

/** The end after the start, within the longest an event may last (a 400 naming `end`). */
function checkTimes(start: string, end: string, startsAt: Date, endsAt: Date) {
  const message =
    endsAt.getTime() <= startsAt.getTime()
      ? m`The end (${end}) must be after the start (${start})`
      : endsAt.getTime() - startsAt.getTime() > MAX_EVENT_DAYS * 86_400_000
        ? m`The end (${end}) must be at most ${MAX_EVENT_DAYS} days after the start`
        : undefined;
  if (message) throw invalidBody([{ path: "end", message }]);
}

/** The instant of a school-local date-time. */
export const instantOf = (local: string, timeZone: string) => {
  const { date, time } = partsOf(local);
  return zonedInstant(date, time, timeZone);
};

/**
 * What a write reads first, in one round trip: the school's zone and levels, the named groups (of
 * this school: another school's is a 404), and the teachers of the audience (they are told too).
 */
async function prepare(ctx: SchoolCtx, audience: AudienceOf | undefined) {
  const batch = new Batch(ctx);
  const school = batch.read(
    Schools.select(ctx, { timeZone: schools.timeZone, levels: schools.levels }).where(eq(schools.id, ctx.schoolId)),
  );
  const found = audience?.groupIds.length
    ? batch.read(Groups.select(ctx, { id: groups.id }).where(inList(groups.id, [...audience.groupIds])))
    : undefined;
  const teachers = audience && !audience.forSchool ? batch.read(teachersOf(ctx, audience)) : undefined;
  const r = await batch.commit();
  const row = r.get(school)[0];
  if (!row) throw notFound(m`School ${ctx.schoolId} not found`);
  if (audience && found) {
    const ids = new Set(r.get(found).map((g) => g.id));
    const missing = audience.groupIds.filter((id) => !ids.has(id));
    if (missing.length)
      throw notFound(
        missing.length > 1 ? m`Groups ${missing.join(", ")} not found` : m`Group ${missing.join(", ")} not found`,
      );
  }
  const offered = readLevels(row.levels);
  const refused = audience?.levels.filter((l) => !offered.includes(l)) ?? [];
  const [first] = refused;
  if (first) {
    const message = notOfferedMessage(first, offered);
    throw invalidBody([{ path: "levels", message }]);
  }
  return { timeZone: row.timeZone, teacherUsers: teachers ? r.get(teachers).map((t) => t.userId) : [] };
}

/** The audience rows of event `id` (an inserted id in a create), each with its audit row. */
function audienceRows(ctx: SchoolCtx, id: number | SQL<number>, audience: AudienceOf): Statement[] {
  if (audience.forSchool) return [];
  const rows = [
    ...audience.levels.map((level) => ({ eventId: id, level, groupId: null })),
    ...audience.groupIds.map((groupId) => ({ eventId: id, level: null, groupId })),
  ];
  return rows.flatMap((row) => EventAudiences.insert(ctx, row));
}

export async function createEvent(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  const audience = audienceOfBody(body);
  const read = await prepare(ctx, audience);
  const startsAt = instantOf(body.start, read.timeZone);
  const endsAt = instantOf(body.end, read.timeZone);
  checkTimes(body.start, body.end, startsAt, endsAt);
  const values = {
    title: body.title,
    description: body.description ?? null,
    place: body.place ?? null,
    startLocal: body.start,
    endLocal: body.end,
    timeZone: read.timeZone,
    startsAt: startsAt.toISOString(),
    endsAt: endsAt.toISOString(),
    forSchool: audience.forSchool,
    slug: randomToken(16),
    status: "scheduled" as const,
    createdBy: ctx.userId,
  };
  const id = Events.insertedId();
  const batch = new Batch(ctx).add(...Events.insert(ctx, values), ...audienceRows(ctx, id, audience));
  const sending =
    body.notify === false
      ? undefined
      : notify(ctx, {
          category: "events",
          ...eventNotice(LEADS.created, { title: body.title, start: body.start, end: body.end, place: values.place }),
          about: { entity: "event", id },
          audience: noticeAudience(audience, read.teacherUsers),
        });
  if (sending) batch.add(...sending.statements);
  const back = batch.read(event.readOne(ctx, id));
  const [row] = (await batch.commit(event.messages)).get(back);
  if (!row) throw new Error("event: the created row was not read back");
  await sending?.dispatch();
  return toEvent(row);
}
export const createEventOperation = operation(created.route, createEvent);

// ---- Update ---------------------------------------------------------------------------------------

const UpdateBody = z.object({
  title: Title.optional(),
  description: Description.nullable().optional(),
  place: Place.nullable().optional(),
  start: schoolDateTime("School-local start").optional(),
  end: schoolDateTime("School-local end, after the start", "2026-12-05T13:00").optional(),
  ...audienceFields,
  notify: Notify.openapi({ description: "Tell the (new) audience of the change (default false)" }),
});

/** What an update prepared for its batch and for after it: the notice to send. */
const prepared = new WeakMap<object, { sending?: Sending }>();

const updated = event.update({
  access: permissions.manage,
  input: UpdateBody,
  from: { column: events.status, states: ["scheduled"] },
  conflict:
    ({ id }) =>
    (state) =>
      m`Event ${id} is ${stateName(state)}; a cancelled event does not change`,
  summary: "Change an event",
  description:
    "The fields sent. Start and end are checked together, the stored one with the one sent (the end after the " +
    "start: else 400). Sending any of forSchool, levels or groupIds replaces the audience. The scheduled reminders " +
    "move with the start. With `notify: true` the (new) audience is told. A cancelled event is a 409.",
  values: async (ctx, { id, body }) => {
    const given = body.forSchool !== undefined || body.levels !== undefined || body.groupIds !== undefined;
    const audience = given ? audienceOfBody(body) : undefined;
    const current = await event.find(ctx, id);
    const read = await prepare(ctx, audience ?? (body.notify ? current : undefined));
    const start = body.start ?? current.start;
    const end = body.end ?? current.end;
    const timed = body.start !== undefined || body.end !== undefined;
    // The zone the event was given in keeps its times (a school that moves zone changes new events).
    const startsAt = instantOf(start, current.timeZone);
    const endsAt = instantOf(end, current.timeZone);
    if (timed) checkTimes(start, end, startsAt, endsAt);
    const place = body.place === undefined ? current.place : body.place;
    const title = body.title ?? current.title;
    const sending = body.notify
      ? notify(ctx, {
          category: "events",
          ...eventNotice(LEADS.changed, { title, start, end, place }),
          about: { entity: "event", id },
          audience: noticeAudience(audience ?? current, read.teacherUsers),
        })
      : undefined;
    prepared.set(body, { sending });
    return {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.place !== undefined ? { place: body.place } : {}),
      ...(timed
        ? { startLocal: start, endLocal: end, startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString() }
        : {}),
      ...(audience ? { forSchool: audience.forSchool } : {}),
      sequence: sql`${events.sequence} + 1`,
    };
  },
  also: (ctx, { id, body }) => {
    const eventId = typeof id === "number" ? id : 0;
    const given = body.forSchool !== undefined || body.levels !== undefined || body.groupIds !== undefined;
    const statements: Statement[] = [];
    if (given) {
      statements.push(
        ...EventAudiences.delete(ctx, eq(eventAudiences.eventId, eventId)),
        ...audienceRows(ctx, eventId, audienceOfBody(body)),
      );
    }
    if (body.start !== undefined) {
      // The scheduled reminders keep their distance to the start (read from the row just updated).
      statements.push(
        ...EventReminders.update(
          ctx,
          and(eq(eventReminders.eventId, eventId), eq(eventReminders.status, "scheduled")),
          {
            sendAt: sql`strftime('%Y-%m-%dT%H:%M:%fZ', (${Events.pick(ctx, events.startsAt, eq(events.id, eventId))}), '-' || ${eventReminders.minutesBefore} || ' minutes')`,
          },
          "move",
        ),
      );
    }
    statements.push(...(prepared.get(body)?.sending?.statements ?? []));
    return statements;
  },
});

export const updateEventOperation = operation(updated.route, async (ctx, input) => {
  await updated.run(ctx, input);
  await prepared.get(input.body)?.sending?.dispatch();
});

export const deleteEvent = event.delete({
  access: permissions.manage,
  summary: "Delete an event (a mistake: nobody is told)",
  description:
    "Removes the event, its audience and its reminders. To call an event off and tell its audience, use " +
    "POST /api/v1/event/{id}/delete with a reason instead: the event stays, cancelled.",
});
