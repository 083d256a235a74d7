/**
 * Event reminders (`/api/v1/event-reminder`): staff pick how long before the start; the 5-minute
 * sweep (`sendDueEventReminders`) tells the event's audience once, at or after that instant, as
 * "remind now" does.
 *
 * Once only: each due reminder is claimed (`scheduled` -> `sent`) by a conditional UPDATE in the
 * same batch as its notification, followed by a guard, so a second run, a concurrent one, or a run
 * after a crash never sends it again: the batch that finds it already claimed aborts whole, its
 * notification with it. A reminder whose event was cancelled or has started by then is `skipped`.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  type EVENT_STATUSES,
  EventReminders,
  Events,
  eventReminders,
  events,
  REMINDER_STATUSES,
} from "../../db/schema/event";
import { Notifications, notifications } from "../../db/schema/notification";
import { and, eq, lte, sql } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { Deps } from "../../deps";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { notify, sweepReminders } from "../notification/api";
import {
  eventNotice,
  eventSays,
  LEADS,
  noticeAudience,
  REMINDER_STATUS_TEXT,
  teachersOfEvent,
  toEvent,
} from "./common";
import { permissions } from "./permissions";
import { event } from "./resource";

const ReminderRecord = RecordBase.extend({
  eventId: z.number().int(),
  minutesBefore: z.number().int().openapi({ example: 1440, description: "Minutes before the event's start" }),
  sendAt: z.iso.datetime().openapi({ description: "The event's start less minutesBefore (moves with the start)" }),
  status: z.enum(REMINDER_STATUSES).openapi({ example: "scheduled", description: REMINDER_STATUS_TEXT }),
  sentAt: z.iso.datetime().nullable(),
  recipientCount: z.number().int().nullable().openapi({ description: "People it was addressed to when sent" }),
  createdBy: z.number().int().nullable(),
});

export const eventReminder = defineResource({
  name: "eventReminder",
  plural: "eventReminders",
  label: m`Event reminder`,
  path: "/api/v1/event-reminder",
  tag: "Communication",
  scope: "school",
  module: "events",
  data: EventReminders,
  record: ReminderRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    eventId: row.eventId,
    minutesBefore: row.minutesBefore,
    sendAt: row.sendAt,
    status: row.status,
    sentAt: row.sentAt,
    recipientCount: row.recipientCount,
    createdBy: row.createdBy,
  }),
  conflictMessage: eventSays.reminderTwice,
});

/** At most 30 days before the start. */
const MAX_MINUTES = 30 * 24 * 60;

/** The reminder's values: the event is scheduled and the reminder's instant is still ahead. */
async function reminderValues(ctx: SchoolCtx, body: { eventId: number; minutesBefore: number }) {
  const row = await Events.select(ctx, { status: events.status, startsAt: events.startsAt })
    .where(eq(events.id, body.eventId))
    .first();
  if (!row) throw notFound(m`Event ${body.eventId} not found`);
  if (row.status !== "scheduled") throw conflict(eventSays.nobodyReminded(body.eventId, row.status));
  const sendAt = new Date(Date.parse(row.startsAt) - body.minutesBefore * 60_000);
  if (sendAt.getTime() <= ctx.deps.clock.now().getTime()) {
    throw unprocessable(eventSays.reminderPast(body.minutesBefore, sendAt.toISOString()));
  }
  return {
    eventId: body.eventId,
    minutesBefore: body.minutesBefore,
    sendAt: sendAt.toISOString(),
    status: "scheduled" as const,
    createdBy: ctx.userId,
  };
}

export const createEventReminderOperation = eventReminder.create({
  access: permissions.manage,
  input: z.object({
    eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
    minutesBefore: z
      .number()
      .int()
      .min(5)
      .max(MAX_MINUTES)
      .openapi({ example: 1440, description: `Minutes before the start: 5 to ${MAX_MINUTES} (30 days)` }),
  }),
  values: (ctx, { body }) => reminderValues(ctx, body),
  summary: "Schedule a reminder of an event, a time before its start",
  description:
    "At the event's start less `minutesBefore` (within the 5-minute sweep after it) the event's audience is told " +
    "once. It moves with the start. An unknown event is a 404, a cancelled one a 409, the same time twice a 409, a " +
    "time already past a 422.",
  errors: [422],
  examples: {
    409: [
      { name: "twice", summary: "The same time before the start twice", detail: eventSays.reminderTwice },
      { name: "cancelled", summary: "The event is cancelled", detail: eventSays.nobodyReminded(7, "cancelled") },
    ],
    422: eventSays.reminderPast(1440, "2026-12-04T16:00:00.000Z"),
  },
});

export const deleteEventReminder = eventReminder.delete({
  access: permissions.manage,
  from: { column: eventReminders.status, states: ["scheduled"] },
  conflict:
    ({ id }) =>
    (state) =>
      m`Event reminder ${id} is ${stateName(state)}; only a scheduled reminder is removed`,
  summary: "Remove a scheduled event reminder",
  errors: [409],
});

// ---- The sweep ------------------------------------------------------------------------------------

/** Reminders a run takes at most: the next run takes the rest. */
const PER_RUN = 50;
const JOB = "send-event-reminders";

/** Every school's due reminders, each claimed and sent in its own batch. */
export async function sendDueEventReminders(deps: Deps): Promise<string> {
  const counts = await sweepReminders(deps, {
    job: JOB,
    module: "events",
    data: EventReminders,
    about: eventReminders.eventId,
    perRun: PER_RUN,
    send: sendOne,
  });
  const taken = counts.get("taken") ?? 0;
  return `${counts.get("sent") ?? 0} event reminders sent, ${counts.get("skipped") ?? 0} skipped (event cancelled or started)${taken ? `, ${taken} taken by another run` : ""}`;
}

/** One reminder: read its event and whom it reaches, then claim it and send, in one batch. */
async function sendOne(ctx: SchoolCtx, id: number, eventId: number): Promise<"sent" | "skipped" | "taken"> {
  const read = new Batch(ctx);
  const row = read.read(event.select(ctx).where(eq(events.id, eventId)));
  const teachers = read.read(teachersOfEvent(ctx, eventId));
  const results = await read.commit();
  const found = results.get(row)[0];
  const record = found ? toEvent(found) : undefined;
  const now = ctx.deps.clock.now().toISOString();
  const due = and(eq(eventReminders.status, "scheduled"), lte(eventReminders.sendAt, now));
  const live = record?.status === ("scheduled" satisfies (typeof EVENT_STATUSES)[number]) && record.startsAt > now;
  const sending =
    record && live
      ? notify(ctx, {
          category: "events",
          ...eventNotice(LEADS.reminder, record),
          about: { entity: "event", id: eventId },
          audience: noticeAudience(
            record,
            results.get(teachers).map((t) => t.userId),
          ),
        })
      : undefined;
  const batch = new Batch(ctx);
  if (sending) batch.add(...sending.statements);
  // The claim comes last: when another run took the reminder, the guard aborts the notification too.
  batch.add(
    ...EventReminders.updateOne(
      ctx,
      id,
      sending
        ? {
            status: "sent",
            sentAt: now,
            recipientCount: sql`(${Notifications.pick(ctx, notifications.recipientCount, eq(notifications.key, sending.key))})`,
          }
        : { status: "skipped", sentAt: now },
      { action: sending ? "send" : "skip", where: due },
    ),
  );
  try {
    await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) return "taken";
    throw err;
  }
  await sending?.dispatch();
  return sending ? "sent" : "skipped";
}
