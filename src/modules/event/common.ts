/**
 * What the event operations share: the record and its schemas, the school-local times, who sees an
 * event (its audience), who is told about it (the notification's audience), and the texts the
 * service writes itself (in English and Spanish: each recipient reads their own).
 *
 * Who sees an event: `event.manage` (staff) every event of the school; anyone else the events for
 * the whole school, and those for a level or group of theirs: a parent's (or the parent they act for
 * as a delegate) active children's levels and groups, a teacher's groups and those groups' levels.
 */
import { z } from "@hono/zod-openapi";
import { columnsOf } from "../../db/query";
import { Users, users } from "../../db/schema/core";
import { Delegates, delegates, delegationsAround } from "../../db/schema/delegate";
import {
  EVENT_STATUSES,
  EventAudiences,
  eventAudiences,
  eventReminders,
  events,
  REMINDER_STATUSES,
} from "../../db/schema/event";
import { GroupStudents, Groups, GroupTeachers, groupStudents, groups, groupTeachers } from "../../db/schema/group";
import type { Audience, Localized } from "../../db/schema/notification";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { eq, isNull, or, type SQL, sql } from "../../db/sql";
import { inList, jsonValues } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { parseJson } from "../../lib/json";
import { LEVELS, type Level } from "../../lib/levels";
import { m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { RecordBase, timestamps } from "../../lib/resource";
import { isoWeekday } from "../../lib/zoned-time";
import { permissions } from "./permissions";

// ---- School-local date-times ----------------------------------------------------------------------

// An event's start and end are `schoolDateTime`s (src/lib/dates.ts): `YYYY-MM-DDTHH:mm`, no offset.

/** The date and the time of a local date-time. */
export const partsOf = (local: string) => ({ date: local.slice(0, 10), time: local.slice(11, 16) });

/** How long an event may last. */
export const MAX_EVENT_DAYS = 31;

// ---- The record -----------------------------------------------------------------------------------

/** What a reminder's status means (its record and the event's list of reminders). */
export const REMINDER_STATUS_TEXT =
  "scheduled: waiting for its time; sent: the audience was told; skipped: the event was cancelled or had started " +
  "when it came due";

export const Reminder = z.object({
  id: z.number().int(),
  minutesBefore: z.number().int().openapi({ example: 1440, description: "Minutes before the event's start" }),
  sendAt: z.iso.datetime().openapi({ description: "When it goes out (UTC): the start less minutesBefore" }),
  status: z.enum(REMINDER_STATUSES).openapi({ description: REMINDER_STATUS_TEXT }),
  sentAt: z.iso.datetime().nullable(),
});

export const EventRecord = RecordBase.extend({
  title: z.string().openapi({ example: "Winter festival", description: "What the event is, as its audience reads it" }),
  description: z.string().nullable().openapi({ description: "The details, line breaks kept; null if none" }),
  place: z.string().nullable().openapi({ example: "Main yard", description: "Where it happens; null if not said" }),
  start: z.string().openapi({ example: "2026-12-05T10:00", description: "School-local start" }),
  end: z.string().openapi({ example: "2026-12-05T13:00", description: "School-local end" }),
  timeZone: z.string().openapi({ example: "America/Mexico_City", description: "The zone of start and end" }),
  startsAt: z.iso.datetime().openapi({ description: "The start as an instant (UTC)" }),
  endsAt: z.iso.datetime().openapi({ description: "The end as an instant (UTC)" }),
  forSchool: z.boolean().openapi({ description: "For every member of the school" }),
  levels: z.array(z.enum(LEVELS)).openapi({ example: ["elementary"], description: "Levels it is for" }),
  groupIds: z.array(z.number().int()).openapi({ example: [3], description: "Groups it is for" }),
  slug: z.string().openapi({ description: "The public page's key: GET /api/v1/event/public?slug=" }),
  image: z.string().nullable().openapi({ description: "The image's object key (download it with the signed URL)" }),
  status: z.enum(EVENT_STATUSES).openapi({
    example: "scheduled",
    description: "scheduled, or cancelled (deleted with a reason: it stays, so links and calendars show it called off)",
  }),
  sequence: z.number().int().openapi({ description: "One more on every change (iCalendar SEQUENCE)" }),
  createdBy: z.number().int().nullable(),
  remindedAt: z.iso.datetime().nullable().openapi({ description: "When the audience was last reminded now" }),
  cancelledAt: z.iso.datetime().nullable(),
  cancelledBy: z.number().int().nullable(),
  cancelReason: z.string().nullable().openapi({ description: "Why it was cancelled (deleted with a reason)" }),
  reminders: z.array(Reminder).openapi({ description: "Its scheduled and sent reminders, soonest first" }),
});
export type EventRecordOf = z.output<typeof EventRecord>;

// Correlated sub-selects of the event read ("event"."id": drizzle writes a one-table read's columns
// unqualified, so the outer row is named by hand); event_audience_event_idx and event_reminder_uq serve them.
const levelsJson = sql<string>`(SELECT json_group_array(a.level) FROM ${eventAudiences} a WHERE a.event_id = "event"."id" AND a.level IS NOT NULL)`;
const groupsJson = sql<string>`(SELECT json_group_array(a.group_id) FROM ${eventAudiences} a WHERE a.event_id = "event"."id" AND a.group_id IS NOT NULL)`;
const remindersJson = sql<string>`(SELECT json_group_array(json_object('id', r.id, 'minutesBefore', r.minutes_before, 'sendAt', r.send_at, 'status', r.status, 'sentAt', r.sent_at)) FROM ${eventReminders} r WHERE r.event_id = "event"."id")`;

/** What an event read selects: its columns, its audience and its reminders. */
export const eventFields = {
  ...columnsOf(events),
  levels: levelsJson,
  groupIds: groupsJson,
  reminders: remindersJson,
};

type EventRow = typeof events.$inferSelect & { levels: string; groupIds: string; reminders: string };

const ReminderList = z.array(Reminder);

export function toEvent(row: EventRow): EventRecordOf {
  const levels = parseJson(z.array(z.enum(LEVELS)), row.levels || "[]", []);
  const groupIds = parseJson(z.array(z.number().int()), row.groupIds || "[]", []);
  const reminders = parseJson(ReminderList, row.reminders || "[]", []);
  return {
    ...timestamps(row),
    title: row.title,
    description: row.description,
    place: row.place,
    start: row.startLocal,
    end: row.endLocal,
    timeZone: row.timeZone,
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    forSchool: row.forSchool,
    levels: LEVELS.filter((l) => levels.includes(l)),
    groupIds: [...groupIds].sort((a, b) => a - b),
    slug: row.slug,
    image: row.image,
    status: row.status,
    sequence: row.sequence,
    createdBy: row.createdBy,
    remindedAt: row.remindedAt,
    cancelledAt: row.cancelledAt,
    cancelledBy: row.cancelledBy,
    cancelReason: row.cancelReason,
    reminders: reminders.sort((a, b) => a.sendAt.localeCompare(b.sendAt) || a.id - b.id),
  };
}

// ---- What the operations refuse with -------------------------------------------------------------

/**
 * The details the event operations refuse with: the verbs throw these and the routes show them as
 * their examples, so the document says what the API answers (docs/decisions.md, "The document
 * teaches by example").
 */
export const eventSays = {
  notReminded: (id: number, state: string) => m`Event ${id} is ${stateName(state)}; only a scheduled event is reminded`,
  startedReminding: (id: number) => m`Event ${id} has started: it is too late to remind`,
  cancelledAlready: (id: number, state: string) => m`Event ${id} is ${stateName(state)} already`,
  nobodyReminded: (id: number, state: string) => m`Event ${id} is ${stateName(state)}: nobody is reminded of it`,
  reminderPast: (minutesBefore: number, sendAt: string) =>
    m`${minutesBefore} minutes before the start is already past (${sendAt})`,
  reminderTwice: m`The event already has a reminder at that time before its start`,
  tooManyLookups: m`Too many event lookups; try again later`,
  tooManyFeedMisses: m`Too many unknown calendar links; try again later`,
  tooManyFeedFetches: m`Too many fetches of this calendar; try again later`,
  nameTheFamily: m`Name the family (familyId) whose feed to make`,
  noFamily: m`A family's feed is for the parents of a family`,
} as const;

// ---- Who sees an event ----------------------------------------------------------------------------

/**
 * The users whose children count as the caller's, as a list for `IN`: the exact list when known
 * (`ctx.actingFor`, or `exact`), else the caller and the parents of their delegations that may be
 * valid today somewhere (`delegationsAround`: a superset by a day at most, which the list checks
 * against the exact one in the same round trip; docs/domain.md#events).
 */
export function actingUsers(ctx: SchoolCtx, exact?: readonly number[]): SQL {
  const known = exact ?? ctx.actingFor;
  if (known) return jsonValues(known);
  const self = ctx.userId ?? 0;
  const delegated = Delegates.select(ctx, { userId: parents.userId })
    .join(Parents, eq(parents.id, delegates.parentId))
    .join(Users, eq(users.id, parents.userId))
    .where(delegationsAround(self, ctx.deps.clock.now()));
  // UNION ALL: IN needs no distinct rows (a UNION would sort them).
  return sql`(SELECT ${self} UNION ALL ${delegated.getSQL()})`;
}

/** The active, not deleted students of the users `who` (a guardian's children), as a sub-select of ids. */
function childrenOf(ctx: SchoolCtx, who: SQL) {
  return Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .join(Students, eq(students.id, guardians.studentId))
    .where(sql`${parents.userId} IN ${who}`, isNull(students.deletedAt), eq(students.status, "active"));
}

/** The groups the caller teaches (through their teacher profile here), as a sub-select of ids. */
function taughtGroups(ctx: SchoolCtx) {
  return GroupTeachers.select(ctx, { id: groupTeachers.groupId })
    .join(Teachers, eq(teachers.id, groupTeachers.teacherId))
    .where(eq(teachers.userId, ctx.userId ?? 0));
}

/**
 * Whether the event row is for the caller: for the whole school, or for a level or group of theirs.
 * `event.manage` sees every event (undefined: no condition).
 */
export function visibleEvent(ctx: SchoolCtx, exact?: readonly number[]): SQL | undefined {
  if (ctx.can(permissions.manage)) return undefined;
  const kids = childrenOf(ctx, actingUsers(ctx, exact));
  const taught = taughtGroups(ctx);
  const theirs = or(
    inList(
      eventAudiences.groupId,
      GroupStudents.pick(ctx, groupStudents.groupId, inList(groupStudents.studentId, kids)),
    ),
    inList(eventAudiences.groupId, taught),
    inList(eventAudiences.level, Students.pick(ctx, students.level, inList(students.id, kids))),
    inList(eventAudiences.level, Groups.pick(ctx, groups.level, inList(groups.id, taught))),
  );
  return or(eq(events.forSchool, true), EventAudiences.exists(ctx, eq(eventAudiences.eventId, events.id), theirs));
}

// ---- Who is told ----------------------------------------------------------------------------------

export interface AudienceOf {
  forSchool: boolean;
  levels: readonly Level[];
  groupIds: readonly number[];
}

/** The teachers (their users) of the audience's groups and of the groups at its levels: they see the event too. */
export function teachersOf(ctx: SchoolCtx, audience: AudienceOf) {
  return Teachers.select(ctx, { userId: teachers.userId })
    .join(GroupTeachers, eq(groupTeachers.teacherId, teachers.id))
    .join(Groups, eq(groups.id, groupTeachers.groupId))
    .where(or(inList(groups.id, [...audience.groupIds]), inList(groups.level, [...audience.levels])))
    .groupBy(teachers.userId);
}

/** The teachers (their users) an event's audience reaches, read by its id. */
export function teachersOfEvent(ctx: SchoolCtx, id: number) {
  return Teachers.select(ctx, { userId: teachers.userId })
    .join(GroupTeachers, eq(groupTeachers.teacherId, teachers.id))
    .join(Groups, eq(groups.id, groupTeachers.groupId))
    .where(
      or(
        inList(groups.id, EventAudiences.pick(ctx, eventAudiences.groupId, eq(eventAudiences.eventId, id))),
        inList(groups.level, EventAudiences.pick(ctx, eventAudiences.level, eq(eventAudiences.eventId, id))),
      ),
    )
    .groupBy(teachers.userId);
}

/** The notification's audience: every member, or the guardians of the levels' and groups' students and their teachers. */
export function noticeAudience(audience: AudienceOf, teacherUsers: readonly number[]): Audience {
  if (audience.forSchool) return { school: true };
  return {
    ...(audience.levels.length ? { levels: [...audience.levels] } : {}),
    ...(audience.groupIds.length ? { groups: [...audience.groupIds] } : {}),
    ...(teacherUsers.length ? { users: [...teacherUsers] } : {}),
  };
}

// ---- Texts the service writes -----------------------------------------------------------------------

const DAYS = {
  en: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
  es: ["lun", "mar", "mié", "jue", "vie", "sáb", "dom"],
};
const MONTHS = {
  en: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
  es: ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"],
};

/** "Sat 5 Dec 2026" / "sáb 5 dic 2026" of a `YYYY-MM-DD`. */
function dayText(lang: "en" | "es", date: string): string {
  const weekday = DAYS[lang][isoWeekday(date) - 1] ?? "";
  const month = MONTHS[lang][Number(date.slice(5, 7)) - 1] ?? "";
  return `${weekday} ${Number(date.slice(8, 10))} ${month} ${date.slice(0, 4)}`;
}

/** When and where, in one language: "Sat 5 Dec 2026, 10:00–13:00 · Main yard". */
export function whenText(lang: "en" | "es", event: { start: string; end: string; place: string | null }): string {
  const s = partsOf(event.start);
  const e = partsOf(event.end);
  const when =
    s.date === e.date
      ? `${dayText(lang, s.date)}, ${s.time}–${e.time}`
      : `${dayText(lang, s.date)} ${s.time} – ${dayText(lang, e.date)} ${e.time}`;
  return event.place ? `${when} · ${event.place}` : when;
}

/** Both languages of a text about an event: `lead` before its title, the time and place as the body. */
export function eventNotice(
  lead: Localized,
  event: { title: string; start: string; end: string; place: string | null },
  after?: Localized,
): { title: Localized; body: Localized } {
  return {
    title: { en: `${lead.en}: ${event.title}`, es: `${lead.es}: ${event.title}` },
    body: {
      en: `${whenText("en", event)}${after ? `\n${after.en}` : ""}`,
      es: `${whenText("es", event)}${after ? `\n${after.es}` : ""}`,
    },
  };
}

export const LEADS = {
  created: { en: "New event", es: "Nuevo evento" },
  changed: { en: "Event changed", es: "Evento modificado" },
  reminder: { en: "Reminder", es: "Recordatorio" },
  cancelled: { en: "Cancelled", es: "Cancelado" },
} satisfies Record<string, Localized>;
