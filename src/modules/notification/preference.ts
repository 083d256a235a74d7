/**
 * Notification preferences (`/api/v1/notification-preference`): each user's own, per school. Per
 * category (afternoon, tasks, events, lost and found, general, transport) push and inbox on or off, and quiet
 * hours (`HH:mm` to `HH:mm` in the school's time zone; past midnight allowed) during which pushes
 * wait until they end, unless urgent. Emergencies ignore all of it. Without a saved preference
 * everything is on and there are no quiet hours.
 *
 * A preference is its owner's alone: another user's id is a 404, for a school admin too (a
 * super-admin, the platform's support, may read any of the school's, never change it). `POST` creates
 * the caller's or updates it (201 or 200), `PUT` changes the fields sent, `DELETE` goes back to the
 * defaults. Changes apply to notifications fanned out after them.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { NotificationPreferences, notificationPreferences } from "../../db/schema/notification";
import { and, eq } from "../../db/sql";
import type { InsertValues } from "../../db/table";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { ApiError } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";

const p = notificationPreferences;
type Prefs = typeof p;

/** The categories a preference sets (an emergency has none), with their columns. */
const CATEGORIES = {
  afternoon: { push: "afternoonPush", inbox: "afternoonInbox" },
  tasks: { push: "tasksPush", inbox: "tasksInbox" },
  events: { push: "eventsPush", inbox: "eventsInbox" },
  lostAndFound: { push: "lostAndFoundPush", inbox: "lostAndFoundInbox" },
  general: { push: "generalPush", inbox: "generalInbox" },
  transport: { push: "transportPush", inbox: "transportInbox" },
} as const;
type CategoryKey = keyof typeof CATEGORIES;
const KEYS = [
  "afternoon",
  "tasks",
  "events",
  "lostAndFound",
  "general",
  "transport",
] as const satisfies readonly CategoryKey[];
type Channels = { push: boolean; inbox: boolean };

/** One schema (or value) per category, written out so the types know every key. */
function perCategory<V>(make: (k: CategoryKey) => V): Record<CategoryKey, V> {
  return {
    afternoon: make("afternoon"),
    tasks: make("tasks"),
    events: make("events"),
    lostAndFound: make("lostAndFound"),
    general: make("general"),
    transport: make("transport"),
  };
}

const Time = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, zodMessage(m`A time of day HH:mm`))
  .openapi({ example: "21:00" });
const QuietHours = z
  .strictObject({
    start: Time.openapi({ description: "When pushes start to wait: HH:mm, the school's time" }),
    end: Time.openapi({ example: "07:00", description: "When they go out: HH:mm, the school's time" }),
  })
  .refine((q) => q.start !== q.end, zodMessage(m`start and end must differ`))
  .openapi({ description: "Pushes wait from start until end (the school's time zone; past midnight allowed)" });

/** What each category covers, for the document. */
const COVERS: Record<CategoryKey, string> = {
  afternoon: "The afternoon: how children go home",
  tasks: "Tasks and appointments",
  events: "Events and their reminders",
  lostAndFound: "Lost and found",
  general: "Anything else staff send",
  transport: "The bus run: a child boarded or got off, the bus is five minutes away",
};

const ChannelsRecord = z.object({
  push: z.boolean().openapi({ description: "Pushed to the user's devices" }),
  inbox: z.boolean().openapi({ description: "Kept in the user's inbox" }),
});
const Settings = {
  categories: z
    .object(perCategory((k) => ChannelsRecord.openapi({ description: COVERS[k] })))
    .openapi({ description: "Push and inbox, on or off, per category (an emergency has none: always both)" }),
  quietHours: z
    .object({
      start: z
        .string()
        .openapi({ example: "21:00", description: "When pushes start to wait: HH:mm, the school's time" }),
      end: z.string().openapi({ example: "07:00", description: "When they go out: HH:mm, the school's time" }),
    })
    .nullable()
    .openapi({ description: "Pushes wait from start until end (past midnight allowed); null: no quiet hours" }),
};

export const NotificationPreference = RecordBase.extend(Settings).openapi("NotificationPreference", {
  description: "Your notification preferences in the school (an emergency ignores them)",
});

const ChannelsInput = z.strictObject({
  push: z.boolean().optional().openapi({ description: "Pushed to your devices (left out: unchanged)" }),
  inbox: z.boolean().optional().openapi({ description: "Kept in your inbox (left out: unchanged)" }),
});
const PreferenceInput = z.strictObject({
  categories: z
    .strictObject(perCategory((k) => ChannelsInput.optional().openapi({ description: COVERS[k] })))
    .optional()
    .openapi({
      description: "The channels to change, per category (the others stay)",
      example: { events: { push: false } },
    }),
  quietHours: QuietHours.nullable().optional().openapi({ description: "null: none" }),
});
type PreferenceInput = z.output<typeof PreferenceInput>;

type Row = Prefs["$inferSelect"];

function toRecord(_ctx: Ctx, row: Row) {
  return {
    ...timestamps(row),
    categories: perCategory((k): Channels => ({ push: row[CATEGORIES[k].push], inbox: row[CATEGORIES[k].inbox] })),
    quietHours: row.quietStart && row.quietEnd ? { start: row.quietStart, end: row.quietEnd } : null,
  };
}

/** The columns an input sets. */
function valuesOf(body: PreferenceInput): Partial<InsertValues<Prefs>> {
  const values: Partial<InsertValues<Prefs>> = {};
  for (const k of KEYS) {
    const given = body.categories?.[k];
    if (given?.push !== undefined) values[CATEGORIES[k].push] = given.push;
    if (given?.inbox !== undefined) values[CATEGORIES[k].inbox] = given.inbox;
  }
  if (body.quietHours !== undefined) {
    values.quietStart = body.quietHours?.start ?? null;
    values.quietEnd = body.quietHours?.end ?? null;
  }
  return values;
}

const own = (ctx: SchoolCtx) => eq(p.userId, ctx.userId ?? 0);

const resource = defineResource({
  name: "notificationPreference",
  plural: "notificationPreferences",
  label: m`Notification preference`,
  path: "/api/v1/notification-preference",
  tag: "Communication",
  scope: "school",
  module: "notifications",
  data: NotificationPreferences,
  record: NotificationPreference,
  toRecord,
  // Writes: the caller's own. Reads too, but a super-admin (platform support) reads any of the school's.
  visibleTo: (ctx, access) => (access === "read" && ctx.isSuperAdmin ? undefined : own(ctx)),
  conflictMessage: m`You have notification preferences in this school already; update them`,
});

/**
 * Your preferences, or the defaults while you have saved none: then `id`, `createdAt` and
 * `updatedAt` are null (there is no record yet). Written out field by field, not as an extension of
 * `NotificationPreference`: an extension is an `allOf` in the document, and an `allOf` cannot
 * loosen the record's non-null `id` (both branches must hold).
 */
const MyNotificationPreference = z
  .object({
    id: z
      .number()
      .int()
      .min(1)
      .nullable()
      .openapi({ example: 1, description: "The record's id; null while you have saved none (the defaults)" }),
    createdAt: z.iso.datetime().nullable().openapi({ description: "When you first saved them (UTC); null: never" }),
    updatedAt: z.iso.datetime().nullable().openapi({ description: "When they last changed (UTC); null: never saved" }),
    ...Settings,
  })
  .openapi("MyNotificationPreference", {
    description:
      "Your notification preferences in the school, or the defaults (every channel on, no quiet hours) with id null",
  });

const mineRoute = defineRoute({
  method: "get",
  path: "/api/v1/notification-preference/mine",
  tag: "Communication",
  operationId: "getMyNotificationPreference",
  summary: "Your notification preferences in the school (the defaults, id null, until you save some)",
  access: "member",
  module: "notifications",
  responses: {
    200: json(MyNotificationPreference, "Your preferences, or the defaults"),
  },
});

/** The defaults: every channel on, no quiet hours. */
const DEFAULTS = {
  categories: perCategory((): Channels => ({ push: true, inbox: true })),
  quietHours: null,
};

export async function getMyNotificationPreference(ctx: SchoolCtx) {
  const row = await NotificationPreferences.select(ctx).where(own(ctx)).first();
  return row ? toRecord(ctx, row) : { id: null, createdAt: null, updatedAt: null, ...DEFAULTS };
}

const saveRoute = defineRoute({
  method: "post",
  path: "/api/v1/notification-preference",
  tag: "Communication",
  operationId: "saveNotificationPreference",
  summary: "Save your notification preferences (created, or the fields sent changed)",
  access: "member",
  module: "notifications",
  audit: "notification-preference",
  request: { body: jsonBody(PreferenceInput, "NotificationPreferenceSave") },
  responses: {
    201: json(NotificationPreference, "Your preferences, created"),
    200: json(NotificationPreference, "Your preferences, changed"),
  },
});

/** Creates the caller's preferences or changes the fields sent (a concurrent create: changed). */
export async function saveNotificationPreference(ctx: SchoolCtx, { body }: InputOf<typeof saveRoute>) {
  const values = valuesOf(body);
  for (let attempt = 0; ; attempt++) {
    const held = await NotificationPreferences.select(ctx, { id: p.id }).where(own(ctx)).first();
    const batch = new Batch(ctx);
    if (held) batch.add(...NotificationPreferences.update(ctx, and(own(ctx), eq(p.id, held.id)), values));
    else batch.add(...NotificationPreferences.insert(ctx, { userId: ctx.userId ?? 0, ...values }));
    const saved = batch.read(NotificationPreferences.select(ctx).where(own(ctx)).limit(1));
    try {
      const [row] = (await batch.commit()).get(saved);
      if (!row) throw new Error("the saved preference was not read back");
      const record = toRecord(ctx, row);
      return Response.json(record, { status: held ? 200 : 201 });
    } catch (err) {
      // Another request of the caller's created them in between: change them instead.
      if (attempt === 0 && !held && err instanceof ApiError && err.status === 409) continue;
      throw err;
    }
  }
}

export const getNotificationPreference = resource.get({
  access: "member",
  summary: "Get your notification preferences by id",
});
export const updateNotificationPreference = resource.update({
  access: "member",
  input: PreferenceInput,
  values: (_ctx, { body }) => valuesOf(body),
  summary: "Change your notification preferences (the fields sent)",
});
export const deleteNotificationPreference = resource.delete({
  access: "member",
  summary: "Delete your notification preferences (back to the defaults)",
});
export const getMyNotificationPreferenceOperation = operation(mineRoute, getMyNotificationPreference);
export const saveNotificationPreferenceOperation = operation(saveRoute, saveNotificationPreference);
