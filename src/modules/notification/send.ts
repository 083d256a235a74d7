/**
 * Sending: `POST /api/v1/notification` (staff, to users, roles, groups' guardians, levels'
 * guardians, students' guardians or the whole school, any of them together) and
 * `POST /api/v1/group/{id}/notification` (the guardians of one group's students: staff, or a
 * teacher of the group). Both answer at once with the notification's id and how many people it
 * reaches; the fan-out runs on the push queue (./fan-out.ts).
 *
 * Everything the audience names must be the school's: another school's (or no) group, role,
 * student or member is a 404 naming it, and nothing is sent.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools } from "../../db/schema/core";
import { Groups, groups } from "../../db/schema/group";
import { type Audience, Notifications, notifications } from "../../db/schema/notification";
import { Students, students } from "../../db/schema/student";
import { eq, isNull, type SQL, sql } from "../../db/sql";
import { jsonValues } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { LEVELS } from "../../lib/levels";
import { type Message as MessageText, m, zodMessage } from "../../lib/message";
import { idList, recordId } from "../../lib/params";
import { IdParams, RecordBase } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { teaches } from "../group/api";
import { Category } from "./inbox";
import { notify } from "./notify";
import { permissions } from "./permissions";

const About = z
  .strictObject({
    entity: z
      .string()
      .regex(/^[a-z][a-z-]{0,39}$/, zodMessage(m`An entity name like event or lost-article`))
      .openapi({
        example: "event",
        description: "The kind of record, as the app's deep links name it: event, task, ...",
      }),
    id: recordId().openapi({ type: "integer", example: 3, description: "The record's id" }),
  })
  .openapi({ description: "The record it is about: the app opens it from the notification" });

const Message = {
  category: Category.default("general").openapi({
    description: "Filed under it, and what the recipients' preferences decide by; an emergency no preference silences",
  }),
  urgent: z.boolean().default(false).openapi({ description: "Pushed at once even during quiet hours" }),
  title: text({ max: 120 }).openapi({ example: "Early dismissal on Friday" }),
  body: text({ max: 2000 }).openapi({ example: "School closes at 12:00 this Friday." }),
  about: About.optional(),
};

const SendBody = z
  .strictObject({
    ...Message,
    users: idList({ max: 1000, what: "Member (user)" }).optional(),
    roles: idList({ max: 50, what: "Role" }).optional(),
    groups: idList({ max: 200, what: "Group" }).optional().openapi({ description: "The guardians of their students" }),
    levels: z
      .array(z.enum(LEVELS))
      .min(1)
      .max(LEVELS.length)
      .refine((l) => new Set(l).size === l.length, zodMessage(m`Each level at most once`))
      .optional()
      .openapi({
        uniqueItems: true,
        description: "The guardians of the school's students of these levels",
        example: ["elementary"],
      }),
    guardiansOf: idList({ max: 1000, what: "Student" })
      .optional()
      .openapi({ description: "The guardians of these students" }),
    school: z.literal(true).optional().openapi({ description: "Everyone with a role in the school" }),
  })
  .refine(
    (b) => b.users || b.roles || b.groups || b.levels || b.guardiansOf || b.school,
    zodMessage(m`Name who it is for: users, roles, groups, levels, guardiansOf or school`),
  );

export const SentNotification = RecordBase.extend({
  category: Category,
  urgent: z.boolean().openapi({ description: "Pushed at once even during quiet hours" }),
  title: z.string().openapi({ description: "The title, as sent" }),
  body: z.string().openapi({ description: "The message, as sent" }),
  about: z
    .object({
      entity: z.string().openapi({ description: "The kind of record: event, lost-article, task, ..." }),
      id: z.number().int().openapi({ description: "The record's id" }),
    })
    .nullable()
    .openapi({ description: "The record it is about (the app's deep link); null if none" }),
  audience: z
    .object({
      users: z.array(z.number().int()).optional().openapi({ description: "Members named one by one (user ids)" }),
      roles: z.array(z.number().int()).optional().openapi({ description: "The holders of these roles (role ids)" }),
      groups: z
        .array(z.number().int())
        .optional()
        .openapi({ description: "The guardians of these groups' students (group ids)" }),
      levels: z
        .array(z.enum(LEVELS))
        .optional()
        .openapi({ description: "The guardians of the school's students of these levels" }),
      guardiansOf: z
        .array(z.number().int())
        .optional()
        .openapi({ description: "The guardians of these students (student ids)" }),
      school: z.literal(true).optional().openapi({ description: "true: everyone with a role in the school" }),
      except: z
        .array(z.number().int())
        .optional()
        .openapi({ description: "Users left out (a notice the API sent about what one of them did: a booking)" }),
    })
    .openapi({ description: "Who it is for, as sent" }),
  recipients: z.number().int().openapi({ description: "How many people it reaches (each once)" }),
}).openapi("SentNotification", { description: "A notification as sent; its copies reach the recipients' inboxes" });

type Message = {
  category: z.output<typeof Category>;
  urgent: boolean;
  title: string;
  body: string;
  about?: { entity: string; id: number };
};

/** The first id of `ids` that `known` (a subquery of ids) does not list, or none. */
const firstUnknown = (ids: readonly number[], known: { getSQL(): SQL }) =>
  sql<number | null>`(SELECT min(value) FROM ${jsonValues(ids)} WHERE value NOT IN ${known})`;

/** 404 naming the first group, role, student or member of the audience the school does not have. */
async function checkAudience(ctx: SchoolCtx, audience: Audience) {
  const checks: [string, readonly number[] | undefined, { getSQL(): SQL }, (id: number) => MessageText][] = [
    ["Group", audience.groups, Groups.pick(ctx, groups.id), (id) => m`Group ${id} not found`],
    ["Role", audience.roles, Roles.pick(ctx, roles.id), (id) => m`Role ${id} not found`],
    [
      "Student",
      audience.guardiansOf,
      Students.pick(ctx, students.id, isNull(students.deletedAt)),
      (id) => m`Student ${id} not found`,
    ],
    ["User", audience.users, RoleUsers.pick(ctx, roleUsers.userId), (id) => m`User ${id} not found`],
  ];
  const asked = checks.filter(([, ids]) => ids && ids.length > 0);
  if (asked.length === 0) return;
  const fields = Object.fromEntries(asked.map(([what, ids, known]) => [what, firstUnknown(ids ?? [], known)]));
  // One row (the current school's) carrying every check: one round trip, on the school's database
  // (the checks read its rows; its `school` row there is the anchor: docs/scaling.md "Anchors").
  const batch = new Batch(ctx);
  const row = batch.read(Schools.select(ctx, fields).where(eq(schools.id, ctx.schoolId)).limit(1));
  const [found] = (await batch.commit()).get(row);
  for (const [what, , , notFoundMessage] of asked) {
    const missing = found?.[what];
    if (missing !== null && missing !== undefined) throw notFound(notFoundMessage(Number(missing)));
  }
}

/** Sends `message` to `audience` (checked first): the notification as sent. */
async function send(ctx: SchoolCtx, message: Message, audience: Audience) {
  await checkAudience(ctx, audience);
  const sending = notify(ctx, { ...message, audience });
  const batch = new Batch(ctx).add(...sending.statements);
  const sent = batch.read(Notifications.select(ctx).where(eq(notifications.id, sending.id)).limit(1));
  const [row] = (await batch.commit()).get(sent);
  if (!row) throw new Error("the sent notification was not read back");
  await sending.dispatch();
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    category: row.category,
    urgent: row.urgent,
    title: row.title.en,
    body: row.body.en,
    about: row.aboutEntity !== null && row.aboutId !== null ? { entity: row.aboutEntity, id: row.aboutId } : null,
    audience: row.audience,
    recipients: row.recipientCount,
  };
}

const sendRoute = defineRoute({
  method: "post",
  path: "/api/v1/notification",
  tag: "Communication",
  operationId: "sendNotification",
  summary: "Send a notification (answers at once; the recipients' copies and pushes follow)",
  access: permissions.send,
  module: "notifications",
  audit: "notification",
  request: { body: jsonBody(SendBody, "NotificationSend") },
  responses: { 201: json(SentNotification, "The notification, sent to this many people") },
});

export async function sendNotification(ctx: SchoolCtx, { body }: InputOf<typeof sendRoute>) {
  const { users, roles, groups, levels, guardiansOf, school, ...message } = body;
  const audience: Audience = Object.fromEntries(
    Object.entries({ users, roles, groups, levels, guardiansOf, school }).filter(([, v]) => v !== undefined),
  );
  return send(ctx, message, audience);
}

const GroupSendBody = z.strictObject(Message);

const groupSendRoute = defineRoute({
  method: "post",
  path: "/api/v1/group/{id}/notification",
  tag: "Groups",
  operationId: "sendGroupNotification",
  summary: "Send a notification to the guardians of a group's students (staff, or a teacher of the group)",
  access: permissions.sendGroup,
  module: "notifications",
  audit: "notification",
  request: { params: IdParams, body: jsonBody(GroupSendBody, "GroupNotificationSend") },
  responses: { 201: json(SentNotification, "The notification, sent to this many people") },
});

export async function sendGroupNotification(ctx: SchoolCtx, { params, body }: InputOf<typeof groupSendRoute>) {
  // Staff reach every group; a teacher, the groups they teach (another is a 404, as they cannot see it).
  const visible = ctx.can(permissions.send) ? undefined : teaches(ctx, groups.id);
  const group = await Groups.select(ctx, { id: groups.id }).where(eq(groups.id, params.id), visible).first();
  if (!group) throw notFound(m`Group ${params.id} not found`);
  return send(ctx, body, { groups: [params.id] });
}

export const sendNotificationOperation = operation(sendRoute, sendNotification);
export const sendGroupNotificationOperation = operation(groupSendRoute, sendGroupNotification);
