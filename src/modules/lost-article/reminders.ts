/**
 * Lost article reminders (`/api/v1/lost-article-reminder`): `daysBefore` an article's donation date,
 * at a school-local time, the 5-minute sweep (`sendDueLostArticleReminders`) tells once:
 * - the claimant of a claimed article: pick it up before it is donated;
 * - the school's parents, for an article no one claimed: is it yours? It is donated on that date.
 * A reminder of an article delivered or donated by then is `skipped`.
 *
 * Once only, as the event reminders: the claim of the reminder (`scheduled` -> `sent`), a
 * conditional UPDATE with its guard, is in the notification's batch, after it: a second or
 * concurrent run that finds it taken aborts whole.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import {
  LOST_REMINDER_STATUSES,
  LostArticleReminders,
  LostArticles,
  lostArticleReminders,
  lostArticles,
} from "../../db/schema/lost-article";
import { Notifications, notifications } from "../../db/schema/notification";
import { and, eq, lte, sql } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { Deps } from "../../deps";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { stateName } from "../../lib/names";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { notify, sweepReminders } from "../notification/api";
import { pickUpNotice } from "./actions";
import { permissions } from "./permissions";
import { lostArticleSays, REMINDER_STATUS_TEXT, REMINDER_TIME, reminderInstant } from "./resource";

const Time = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, zodMessage(m`Expected HH:mm`))
  .openapi({ example: "08:00", description: "School-local HH:mm" });

const ReminderRecord = RecordBase.extend({
  lostArticleId: z.number().int(),
  daysBefore: z.number().int().openapi({ example: 3, description: "Days before the donation date: 0 is that day" }),
  time: z.string().openapi({ example: "08:00", description: "School-local HH:mm it goes out at" }),
  sendAt: z.iso.datetime().openapi({ description: "daysBefore the donation date at time (moves with that date)" }),
  status: z.enum(LOST_REMINDER_STATUSES).openapi({ example: "scheduled", description: REMINDER_STATUS_TEXT }),
  sentAt: z.iso.datetime().nullable(),
  recipientCount: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "People it was addressed to when sent; null until then" }),
  createdBy: z.number().int().nullable(),
});

export const lostArticleReminder = defineResource({
  name: "lostArticleReminder",
  plural: "lostArticleReminders",
  label: m`Lost article reminder`,
  path: "/api/v1/lost-article-reminder",
  tag: "Communication",
  scope: "school",
  module: "lost-articles",
  data: LostArticleReminders,
  record: ReminderRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    lostArticleId: row.lostArticleId,
    daysBefore: row.daysBefore,
    time: row.time,
    sendAt: row.sendAt,
    status: row.status,
    sentAt: row.sentAt,
    recipientCount: row.recipientCount,
    createdBy: row.createdBy,
  }),
  conflictMessage: lostArticleSays.reminderTwice,
});

const MAX_DAYS = 60;

export const createLostArticleReminderOperation = lostArticleReminder.create({
  access: permissions.manage,
  input: z.object({
    lostArticleId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
    daysBefore: z
      .number()
      .int()
      .min(0)
      .max(MAX_DAYS)
      .openapi({ example: 3, description: `Days before the donation date: 0 (that day) to ${MAX_DAYS}` }),
    time: Time.optional().openapi({ description: `School-local HH:mm (default ${REMINDER_TIME})` }),
  }),
  values: async (ctx, { body }) => {
    const batch = new Batch(ctx);
    const article = batch.read(
      LostArticles.select(ctx, { status: lostArticles.status, donateAfter: lostArticles.donateAfter }).where(
        eq(lostArticles.id, body.lostArticleId),
      ),
    );
    const school = batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)));
    const r = await batch.commit();
    const row = r.get(article)[0];
    if (!row) throw notFound(m`Lost article ${body.lostArticleId} not found`);
    if (row.status !== "found" && row.status !== "claimed") {
      throw conflict(lostArticleSays.nothingToRemind(body.lostArticleId, row.status));
    }
    const time = body.time ?? REMINDER_TIME;
    const sendAt = reminderInstant(row.donateAfter, body.daysBefore, time, r.get(school)[0]?.timeZone ?? "UTC");
    if (sendAt.getTime() <= ctx.deps.clock.now().getTime()) {
      throw unprocessable(lostArticleSays.reminderPast(body.daysBefore, row.donateAfter, time));
    }
    return {
      lostArticleId: body.lostArticleId,
      daysBefore: body.daysBefore,
      time,
      sendAt: sendAt.toISOString(),
      status: "scheduled" as const,
      createdBy: ctx.userId,
    };
  },
  summary: "Schedule a reminder before a lost article's donation date",
  description:
    "At the school-local `time` (default 08:00), `daysBefore` its donation date, the claimant of a claimed article " +
    "is told to pick it up; for an article no one claimed, the school's parents are asked whether it is theirs. " +
    "Sent once by the 5-minute sweep; skipped if the article was delivered or donated by then. An unknown article is " +
    "a 404, a delivered or donated one a 409, the same days twice a 409, a time already past a 422.",
  errors: [422],
  examples: {
    409: [
      { name: "twice", summary: "The same days before the donation date twice", detail: lostArticleSays.reminderTwice },
      {
        name: "closed",
        summary: "The article was delivered or donated",
        detail: lostArticleSays.nothingToRemind(7, "delivered"),
      },
    ],
    422: lostArticleSays.reminderPast(3, "2026-12-20", "08:00"),
  },
});

export const deleteLostArticleReminder = lostArticleReminder.delete({
  access: permissions.manage,
  from: { column: lostArticleReminders.status, states: ["scheduled"] },
  conflict:
    ({ id }) =>
    (state) =>
      m`Lost article reminder ${id} is ${stateName(state)}; only a scheduled reminder is removed`,
  summary: "Remove a scheduled lost article reminder",
  errors: [409],
});

// ---- The sweep ------------------------------------------------------------------------------------

const PER_RUN = 50;
const JOB = "send-lost-article-reminders";

export async function sendDueLostArticleReminders(deps: Deps): Promise<string> {
  const counts = await sweepReminders(deps, {
    job: JOB,
    module: "lost-articles",
    data: LostArticleReminders,
    about: lostArticleReminders.lostArticleId,
    perRun: PER_RUN,
    send: sendOne,
  });
  const taken = counts.get("taken") ?? 0;
  return `${counts.get("sent") ?? 0} lost article reminders sent, ${counts.get("skipped") ?? 0} skipped (delivered or donated)${taken ? `, ${taken} taken by another run` : ""}`;
}

/** "Is this yours?" to the school's parents, in both languages. */
function unclaimedNotice(article: { name: string; donateAfter: string; foundPlace: string | null }) {
  const { foundPlace, donateAfter } = article;
  return {
    title: { en: `Is it yours? ${article.name}`, es: `¿Es suyo? ${article.name}` },
    body: foundPlace
      ? {
          en: `Found in ${foundPlace} and not claimed yet: it will be donated on ${donateAfter}. Claim it in the app.`,
          es: `Se encontró en ${foundPlace} y nadie lo ha reclamado: se donará el ${donateAfter}. Reclámelo en la app.`,
        }
      : {
          en: `Found and not claimed yet: it will be donated on ${donateAfter}. Claim it in the app.`,
          es: `Se encontró y nadie lo ha reclamado: se donará el ${donateAfter}. Reclámelo en la app.`,
        },
  };
}

async function sendOne(ctx: SchoolCtx, id: number, articleId: number): Promise<"sent" | "skipped" | "taken"> {
  const article = await LostArticles.select(ctx, {
    name: lostArticles.name,
    status: lostArticles.status,
    donateAfter: lostArticles.donateAfter,
    foundPlace: lostArticles.foundPlace,
    claimedBy: lostArticles.claimedBy,
  })
    .where(eq(lostArticles.id, articleId))
    .first();
  const now = ctx.deps.clock.now().toISOString();
  const sending =
    article?.status === "claimed" && article.claimedBy !== null
      ? notify(ctx, {
          category: "lost-and-found",
          ...pickUpNotice(article),
          about: { entity: "lost-article", id: articleId },
          audience: { users: [article.claimedBy] },
        })
      : article?.status === "found"
        ? notify(ctx, {
            category: "lost-and-found",
            ...unclaimedNotice(article),
            about: { entity: "lost-article", id: articleId },
            audience: { roles: [BUILTIN_ROLES.parent.id] },
          })
        : undefined;
  const batch = new Batch(ctx);
  if (sending) batch.add(...sending.statements);
  const due = and(eq(lostArticleReminders.status, "scheduled"), lte(lostArticleReminders.sendAt, now));
  // The claim comes last: when another run took the reminder, the guard aborts the notification too.
  batch.add(
    ...LostArticleReminders.updateOne(
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
