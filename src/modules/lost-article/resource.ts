/**
 * Lost articles (`/api/v1/lost-article`): staff record what was found (with a photo, a category, a
 * donation date); every member of the school browses them; a parent claims one (./actions.ts).
 *
 * Who sees what: every holder of `lost-article.read` sees every article of the school (a lost and
 * found board), its state included; who claimed it, for which child, who received it and which
 * staff member acted are shown to staff (`lost-article.manage`) and, for their own claims, to the
 * claimant: to anyone else they are null.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { Schools, schools } from "../../db/schema/core";
import {
  LOST_ARTICLE_CATEGORIES,
  LOST_ARTICLE_STATUSES,
  LOST_REMINDER_STATUSES,
  type LostArticleCategory,
  LostArticleReminders,
  type LostArticleStatus,
  LostArticles,
  lostArticleReminders,
  lostArticles,
} from "../../db/schema/lost-article";
import { desc, eq, gte, lte, sql } from "../../db/sql";
import type { Statement } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { type FieldError, invalidBody, notFound } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { currentLanguage } from "../../lib/language";
import { m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { defineResource, type Filters, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, json, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { paragraphs, text } from "../../lib/text";
import { addDays, dateIn, zonedInstant } from "../../lib/zoned-time";
import { permissions } from "./permissions";

// ---- Categories and statuses --------------------------------------------------------------------

export const CATEGORY_NAMES: Record<LostArticleCategory, { en: string; es: string }> = {
  clothing: { en: "Clothing", es: "Ropa" },
  backpack: { en: "Backpack", es: "Mochila" },
  lunchbox: { en: "Lunchbox", es: "Lonchera" },
  "water-bottle": { en: "Water bottle", es: "Botella de agua" },
  books: { en: "Books", es: "Libros" },
  "school-supplies": { en: "School supplies", es: "Útiles escolares" },
  electronics: { en: "Electronics", es: "Electrónicos" },
  sports: { en: "Sports gear", es: "Material deportivo" },
  toys: { en: "Toys", es: "Juguetes" },
  accessories: { en: "Accessories", es: "Accesorios" },
  other: { en: "Other", es: "Otro" },
};

export const STATUS_NAMES: Record<LostArticleStatus, { en: string; es: string }> = {
  found: { en: "Found", es: "Encontrado" },
  claimed: { en: "Claimed", es: "Reclamado" },
  delivered: { en: "Delivered", es: "Entregado" },
  donated: { en: "Donated", es: "Donado" },
};

/** Where each state may go, and by which action. */
export const NEXT: Record<LostArticleStatus, LostArticleStatus[]> = {
  found: ["claimed", "delivered", "donated"],
  claimed: ["found", "delivered"],
  delivered: [],
  donated: [],
};

const Names = z
  .object({
    en: z.string().openapi({ description: "In English" }),
    es: z.string().openapi({ description: "In Spanish" }),
  })
  .openapi({ description: "The name in each language the service speaks" });

/** An article's category, as bodies, filters and records name it. */
const Category = z.enum(LOST_ARTICLE_CATEGORIES).openapi({
  example: "clothing",
  description: "What kind of thing it is (GET /api/v1/lost-article/categories names each)",
});
/** What an article's status means. */
const STATUS_TEXT =
  "found: waiting for its owner; claimed: a member said it is theirs; delivered: handed over; donated: given away " +
  "after its donation date";

const categoriesRoute = defineRoute({
  method: "get",
  path: "/api/v1/lost-article/categories",
  tag: "Communication",
  operationId: "listLostArticleCategories",
  summary: "All categories of lost articles",
  description:
    "Each with its name in the request's language (Accept-Language, else the caller's, else the school's) and in both.",
  access: permissions.read,
  module: "lost-articles",
  database: false,
  responses: {
    200: json(
      z
        .object({
          data: z
            .array(
              z.object({
                key: z
                  .enum(LOST_ARTICLE_CATEGORIES)
                  .openapi({ description: "The category's key, as articles and filters name it" }),
                name: z.string().openapi({ description: "Its name in the request's language" }),
                names: Names,
              }),
            )
            .openapi({ description: "Every category, in a fixed order" }),
        })
        .openapi("LostArticleCategories"),
      "The categories",
    ),
  },
});
export const listLostArticleCategoriesOperation = operation(categoriesRoute, () => {
  const lang = currentLanguage();
  return {
    data: LOST_ARTICLE_CATEGORIES.map((key) => ({ key, name: CATEGORY_NAMES[key][lang], names: CATEGORY_NAMES[key] })),
  };
});

const statusesRoute = defineRoute({
  method: "get",
  path: "/api/v1/lost-article/statuses",
  tag: "Communication",
  operationId: "listLostArticleStatuses",
  summary: "All statuses of lost articles, and where each may go",
  description:
    "found -> claimed (a parent claims) -> delivered (staff); claimed -> found (the claim cancelled); found -> " +
    "delivered (staff hand it over unclaimed); found -> donated (after its donation date).",
  access: permissions.read,
  module: "lost-articles",
  database: false,
  responses: {
    200: json(
      z
        .object({
          data: z
            .array(
              z.object({
                key: z
                  .enum(LOST_ARTICLE_STATUSES)
                  .openapi({ description: "The status's key, as articles and filters name it" }),
                name: z.string().openapi({ description: "Its name in the request's language" }),
                names: Names,
                next: z
                  .array(z.enum(LOST_ARTICLE_STATUSES))
                  .openapi({ description: "The statuses an article in this one may move to; none: final" }),
              }),
            )
            .openapi({ description: "Every status, in the order an article goes through them" }),
        })
        .openapi("LostArticleStatuses"),
      "The statuses",
    ),
  },
});
export const listLostArticleStatusesOperation = operation(statusesRoute, () => {
  const lang = currentLanguage();
  return {
    data: LOST_ARTICLE_STATUSES.map((key) => ({
      key,
      name: STATUS_NAMES[key][lang],
      names: STATUS_NAMES[key],
      next: NEXT[key],
    })),
  };
});

// ---- What the operations refuse with -----------------------------------------------------------

/**
 * The details the lost-and-found operations refuse with: the verbs throw these and the routes show
 * them as their examples (docs/decisions.md, "The document teaches by example").
 */
export const lostArticleSays = {
  notClaimable: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}; only a found article (not claimed, delivered or donated) can be claimed`,
  notCancellable: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}; only a claimed article's claim can be cancelled`,
  notDeliverable: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}; only a found or claimed article can be delivered`,
  notDonatable: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}; only a found article can be donated (a claimed article waits for its owner)`,
  onlyClaimant: m`Only the claimant or staff cancel a claim`,
  beforeDonationDate: (id: number, today: string) =>
    m`Lost article ${id} may be donated from its donation date (donateAfter); today is ${today} at the school`,
  noClaimant: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}; only a claimed article has someone to remind`,
  claimedByAnother: m`Claimed by someone else meanwhile`,
  nothingToRemind: (id: number, state: string) =>
    m`Lost article ${id} is ${stateName(state)}: there is nothing to remind of`,
  reminderPast: (daysBefore: number, donateAfter: string, time: string) =>
    daysBefore === 1
      ? m`${daysBefore} day before the donation date (${donateAfter}) at ${time} is already past`
      : m`${daysBefore} days before the donation date (${donateAfter}) at ${time} is already past`,
  reminderTwice: m`The article already has a reminder that many days before its donation date`,
} as const;

// ---- The record ---------------------------------------------------------------------------------

const Day = z.iso.date().openapi({ example: "2026-11-20", description: "School-local YYYY-MM-DD" });

/** What a reminder's status means (its record and the article's list of reminders). */
export const REMINDER_STATUS_TEXT =
  "scheduled: waiting for its time; sent: the claimant or the parents were told; skipped: the article was delivered " +
  "or donated when it came due";

const ReminderSummary = z.object({
  id: z.number().int(),
  daysBefore: z.number().int().openapi({ description: "Days before the donation date: 0 is that day" }),
  time: z.string().openapi({ example: "08:00", description: "School-local HH:mm it goes out at" }),
  sendAt: z.iso.datetime().openapi({ description: "When it goes out (UTC)" }),
  status: z.enum(LOST_REMINDER_STATUSES).openapi({ description: REMINDER_STATUS_TEXT }),
  sentAt: z.iso.datetime().nullable(),
});

export const LostArticleRecord = RecordBase.extend({
  name: z.string().openapi({ example: "Blue jacket", description: "What was found" }),
  description: z.string().nullable().openapi({ description: "What helps its owner know it; null if none" }),
  category: Category,
  status: z.enum(LOST_ARTICLE_STATUSES).openapi({ example: "found", description: STATUS_TEXT }),
  foundOn: Day.openapi({ description: "The school-local day it was found" }),
  foundPlace: z.string().nullable().openapi({ example: "Gym", description: "Where it was found; null if not said" }),
  donateAfter: Day.openapi({ description: "From this day an unclaimed article may be donated" }),
  photo: z.string().nullable().openapi({ description: "The photo's object key (download it with the signed URL)" }),
  claimedAt: z.iso.datetime().nullable().openapi({ description: "When it was claimed (UTC); null unless claimed" }),
  mine: z.boolean().openapi({ description: "The caller claimed it" }),
  claimedBy: z.number().int().nullable().openapi({ description: "Staff and the claimant only" }),
  claimedForStudentId: z.number().int().nullable().openapi({ description: "Staff and the claimant only" }),
  deliveredAt: z.iso.datetime().nullable().openapi({ description: "When it was handed over (UTC); null until then" }),
  receivedBy: z.string().nullable().openapi({ description: "Who took it away (staff and the claimant only)" }),
  deliveredBy: z.number().int().nullable().openapi({ description: "Staff only" }),
  donatedAt: z.iso.datetime().nullable().openapi({ description: "When it was donated (UTC); null unless donated" }),
  donatedBy: z.number().int().nullable().openapi({ description: "Staff only" }),
  createdBy: z.number().int().nullable().openapi({ description: "Staff only" }),
  remindedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When staff last reminded its claimant to pick it up (UTC); null if never" }),
  reminders: z.array(ReminderSummary).openapi({ description: "Its reminders before the donation date (staff only)" }),
});
export type LostArticleRecordOf = z.output<typeof LostArticleRecord>;

// The article's reminders ("lost_article"."id": a one-table read's columns are written unqualified).
const remindersJson = sql<string>`(SELECT json_group_array(json_object('id', r.id, 'daysBefore', r.days_before, 'time', r.time, 'sendAt', r.send_at, 'status', r.status, 'sentAt', r.sent_at)) FROM ${lostArticleReminders} r WHERE r.lost_article_id = "lost_article"."id")`;

export const articleFields = { ...columnsOf(lostArticles), reminders: remindersJson };
type ArticleRow = typeof lostArticles.$inferSelect & { reminders: string };

const Reminders = z.array(ReminderSummary);

export function toArticle(ctx: SchoolCtx, row: ArticleRow): LostArticleRecordOf {
  const staff = ctx.can(permissions.manage);
  const mine = row.claimedBy !== null && row.claimedBy === ctx.userId;
  const theirs = staff || mine;
  // The reminders are staff's to see: parsed only for them.
  const reminders = staff ? parseJson(Reminders, row.reminders || "[]", []) : [];
  return {
    ...timestamps(row),
    name: row.name,
    description: row.description,
    category: row.category,
    status: row.status,
    foundOn: row.foundOn,
    foundPlace: row.foundPlace,
    donateAfter: row.donateAfter,
    photo: row.photo,
    claimedAt: row.claimedAt,
    mine,
    claimedBy: theirs ? row.claimedBy : null,
    claimedForStudentId: theirs ? row.claimedForStudentId : null,
    deliveredAt: row.deliveredAt,
    receivedBy: theirs ? row.receivedBy : null,
    deliveredBy: staff ? row.deliveredBy : null,
    donatedAt: row.donatedAt,
    donatedBy: staff ? row.donatedBy : null,
    createdBy: staff ? row.createdBy : null,
    remindedAt: row.remindedAt,
    reminders: reminders.sort((a, b) => a.sendAt.localeCompare(b.sendAt) || a.id - b.id),
  };
}

export const lostArticle = defineResource({
  name: "lostArticle",
  plural: "lostArticles",
  label: m`Lost article`,
  path: "/api/v1/lost-article",
  tag: "Communication",
  scope: "school",
  module: "lost-articles",
  data: LostArticles,
  record: LostArticleRecord,
  view: { fields: articleFields },
  toRecord: (ctx, row) => toArticle(ctx, row),
});

// ---- Lists --------------------------------------------------------------------------------------

const NEWEST = [
  { by: lostArticles.foundOn, desc: true },
  { by: lostArticles.id, desc: true },
];

export const listLostArticles = lostArticle.list({
  access: permissions.read,
  filters: {
    status: {
      schema: z.enum(LOST_ARTICLE_STATUSES).optional().openapi({ description: "found, claimed, delivered or donated" }),
      where: (_ctx: Ctx, v: LostArticleStatus) => eq(lostArticles.status, v),
      example: "found",
    },
    category: {
      schema: Category.optional().openapi({ description: "Only articles of this category" }),
      where: (_ctx: Ctx, v: LostArticleCategory) => eq(lostArticles.category, v),
      example: "clothing",
    },
    name: {
      schema: searchTerm("Part of the name (case and accents ignored)"),
      where: (_ctx: Ctx, v: string) => contains(lostArticles.nameSearch, v),
      example: "jacket",
    },
    from: {
      schema: schoolDate("Found on this day or later", "2026-11-20").optional(),
      where: (_ctx: Ctx, v: string) => gte(lostArticles.foundOn, v),
      example: "2026-11-01",
    },
    to: {
      schema: schoolDate("Found on this day or earlier", "2026-11-20").optional(),
      where: (_ctx: Ctx, v: string) => lte(lostArticles.foundOn, v),
      example: "2026-11-30",
    },
  } satisfies Filters,
  defaultOrder: NEWEST,
  summary: "List lost articles (paginated), the newest found first",
  description:
    "Every member with lost-article.read: the school's articles in every state (`status=found` for what may be " +
    "claimed); who claimed and received one only to staff and the claimant.",
});

export const getLostArticle = lostArticle.get({ access: permissions.read });

const mineRoute = defineRoute({
  method: "get",
  path: "/api/v1/lost-article/mine",
  tag: "Communication",
  operationId: "listMyLostArticles",
  summary: "The lost articles the caller claimed (paginated), the latest claim first",
  description: "Claimed, or delivered to them after their claim. One D1 round trip.",
  access: permissions.read,
  module: "lost-articles",
  request: { query: z.strictObject({ ...PageQuery.shape }) },
  responses: { 200: json(pageOf(LostArticleRecord, "LostArticleMinePage"), "A page of lost articles") },
});

export const listMyLostArticlesOperation = operation(mineRoute, async (ctx, { query }) => {
  // lost_article_claimant_idx: the claimant's rows by claim time.
  const mine = eq(lostArticles.claimedBy, ctx.userId ?? 0);
  const batch = new Batch(ctx);
  const rows = batch.read(
    lostArticle
      .select(ctx)
      .where(mine)
      .orderBy(desc(lostArticles.claimedAt), desc(lostArticles.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(LostArticles.select(ctx, { id: lostArticles.id }).where(mine).count());
  const r = await batch.commit();
  return new Listing(
    r.get(rows).map((row) => toArticle(ctx, row)),
    r.get(total)[0]?.n ?? 0,
    query,
  );
});

// ---- Create, update, delete ---------------------------------------------------------------------

/** An unclaimed article may be donated this many days after it was found, unless staff say otherwise. */
export const DEFAULT_KEEP_DAYS = 30;

const Name = text({ max: 100 }).openapi({ example: "Blue jacket" });
const Description = paragraphs({ max: 2000 }).openapi({ example: "Size 8, name tag cut off" });
const Place = text({ max: 200 }).openapi({ example: "Gym" });

/** The school's zone (and today in it), in one indexed read. */
export async function schoolToday(ctx: SchoolCtx) {
  const row = await Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)).first();
  const timeZone = row?.timeZone ?? "UTC";
  return { timeZone, today: dateIn(timeZone, ctx.deps.clock.now()) };
}

/** Found on or before today; the donation date not before the day it was found (400 naming the field). */
function checkDates(foundOn: string, donateAfter: string, today: string) {
  const errors: FieldError[] = [];
  if (foundOn > today) errors.push({ path: "foundOn", message: m`Must not be after today (${today})` });
  if (donateAfter < foundOn) errors.push({ path: "donateAfter", message: m`Must not be before foundOn (${foundOn})` });
  if (errors.length) throw invalidBody(errors);
}

const created = lostArticle.create({
  access: permissions.manage,
  input: z.object({
    name: Name,
    description: Description.optional(),
    category: Category,
    foundOn: schoolDate(
      "The school-local day it was found; default: today at the school; not after today",
      "2026-11-20",
    ).optional(),
    foundPlace: Place.optional(),
    donateAfter: schoolDate(
      `From this day an unclaimed article may be donated; default: ${DEFAULT_KEEP_DAYS} days after foundOn; not before foundOn`,
      "2026-12-20",
    ).optional(),
  }),
  values: async (ctx, { body }) => {
    const { today } = await schoolToday(ctx);
    const foundOn = body.foundOn ?? today;
    const donateAfter = body.donateAfter ?? addDays(foundOn, DEFAULT_KEEP_DAYS);
    checkDates(foundOn, donateAfter, today);
    return {
      name: body.name,
      description: body.description ?? null,
      category: body.category,
      status: "found",
      foundOn,
      foundPlace: body.foundPlace ?? null,
      donateAfter,
      createdBy: ctx.userId,
    };
  },
  summary: "Record a found article",
  description: "Dates are school-local; a found day after today or a donation date before it is a 400.",
});
export const createLostArticleOperation = created;

const closed = { column: lostArticles.status, states: ["found", "claimed"] };

/** The time of day reminders are sent at by default (school-local). */
export const REMINDER_TIME = "08:00";

/** A reminder's instant: `daysBefore` the donation date, at `time` in the school's zone. */
export const reminderInstant = (donateAfter: string, daysBefore: number, time: string, timeZone: string) =>
  zonedInstant(addDays(donateAfter, -daysBefore), time, timeZone);

/** What an update of the donation date moves: each scheduled reminder's instant (read first). */
const moved = new WeakMap<object, Statement[]>();

const updated = lostArticle.update({
  access: permissions.manage,
  input: z.object({
    name: Name.optional(),
    description: Description.nullable().optional(),
    category: Category.optional(),
    foundOn: schoolDate("The school-local day it was found; not after today", "2026-11-20").optional(),
    foundPlace: Place.nullable().optional(),
    donateAfter: schoolDate(
      "From this day an unclaimed article may be donated; not before foundOn",
      "2026-12-20",
    ).optional(),
  }),
  from: closed,
  conflict:
    ({ id }) =>
    (state) =>
      m`Lost article ${id} is ${stateName(state)}: its record is closed`,
  values: async (ctx, { id, body }) => {
    if (body.foundOn !== undefined || body.donateAfter !== undefined) {
      const batch = new Batch(ctx);
      const row = batch.read(
        LostArticles.select(ctx, { foundOn: lostArticles.foundOn, donateAfter: lostArticles.donateAfter }).where(
          eq(lostArticles.id, id),
        ),
      );
      const reminders = batch.read(
        LostArticleReminders.select(ctx, {
          id: lostArticleReminders.id,
          daysBefore: lostArticleReminders.daysBefore,
          time: lostArticleReminders.time,
        }).where(eq(lostArticleReminders.lostArticleId, id), eq(lostArticleReminders.status, "scheduled")),
      );
      const school = batch.read(
        Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)),
      );
      const r = await batch.commit();
      const current = r.get(row)[0];
      if (!current) throw notFound(m`Lost article ${id} not found`);
      const timeZone = r.get(school)[0]?.timeZone ?? "UTC";
      const donateAfter = body.donateAfter ?? current.donateAfter;
      checkDates(body.foundOn ?? current.foundOn, donateAfter, dateIn(timeZone, ctx.deps.clock.now()));
      if (body.donateAfter !== undefined) {
        moved.set(
          body,
          r
            .get(reminders)
            .flatMap((rem) =>
              LostArticleReminders.update(
                ctx,
                eq(lostArticleReminders.id, rem.id),
                { sendAt: reminderInstant(donateAfter, rem.daysBefore, rem.time, timeZone).toISOString() },
                "move",
              ),
            ),
        );
      }
    }
    return body;
  },
  also: (_ctx, { body }) => moved.get(body) ?? [],
  summary: "Change a lost article",
  description:
    "Its fields while it is found or claimed (delivered or donated: 409). The scheduled reminders move with the " +
    "donation date.",
});
export const updateLostArticleOperation = updated;

export const deleteLostArticle = lostArticle.delete({
  access: permissions.manage,
  summary: "Delete a lost article (its reminders go with it)",
});
