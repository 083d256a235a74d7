/**
 * The states of a lost article: claim and cancel a claim (a parent; staff cancel any claim),
 * deliver (staff, recording who received it), donate (staff, once the donation date has come),
 * remind the claimant (staff), and its photo through a presigned URL.
 *
 * Each is one guarded UPDATE (the article here, in a state the action takes, meeting its rules) with
 * its audit row: of two parents claiming one article at once exactly one wins, the other gets a 409.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { LostArticleReminders, lostArticleReminders, lostArticles } from "../../db/schema/lost-article";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { and, eq, lte } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, forbidden, notFound, say } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { imageUrlBody, signedUrlFields } from "../../lib/signed-url";
import { text } from "../../lib/text";
import { dateIn } from "../../lib/zoned-time";
import { actingFor } from "../delegate/api";
import { notify } from "../notification/api";
import { schoolZone } from "../school/api";
import { permissions } from "./permissions";
import { LostArticleRecord, lostArticle, lostArticleSays } from "./resource";

/** The 409 of an action on an article in another state, in the resource block's `conflict` shape. */
const refusing =
  (says: (id: number, state: string) => Message) =>
  ({ id }: { id: number }) =>
  (state: string) =>
    says(id, state);

/** The scheduled reminders of an article, skipped: it left the states they were for. */
const skipReminders = (ctx: SchoolCtx, id: number) =>
  LostArticleReminders.update(
    ctx,
    and(eq(lostArticleReminders.lostArticleId, id), eq(lostArticleReminders.status, "scheduled")),
    { status: "skipped" },
    "skip",
  );

// ---- Claim --------------------------------------------------------------------------------------

const ClaimBody = z
  .object({
    studentId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().openapi({
      description: "The child it belongs to: one the caller is a guardian of, or a delegate of a guardian today",
    }),
  })
  .strict();

/**
 * The child is the caller's, or the child of a parent they act for today as a delegate, as
 * everywhere a parent acts (else 404: another family's child is not there for them).
 */
async function ownChild(ctx: SchoolCtx, studentId: number | undefined) {
  if (studentId === undefined) return;
  const row = await Guardians.select(ctx, { id: guardians.id })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(eq(guardians.studentId, studentId), inList(parents.userId, await actingFor(ctx)))
    .first();
  if (!row) throw notFound(m`Student ${studentId} not found`);
}

export const claimLostArticle = lostArticle.action({
  name: "claim",
  access: permissions.claim,
  input: ClaimBody,
  from: { column: lostArticles.status, states: ["found"] },
  conflict: refusing(lostArticleSays.notClaimable),
  summary: "Claim a found article (a parent)",
  description:
    "The caller says it is theirs (optionally which child's: a child of another family is a 404). Only a found " +
    "article: claimed, delivered or donated is a 409. Of two parents claiming at once, one wins, the other gets a 409.",
  set: async (ctx, { body }) => {
    await ownChild(ctx, body.studentId);
    return {
      status: "claimed",
      claimedBy: ctx.userId,
      claimedAt: ctx.deps.clock.now().toISOString(),
      claimedForStudentId: body.studentId ?? null,
    };
  },
});

export const cancelLostArticleClaim = lostArticle.action({
  name: "cancel-claim",
  access: permissions.read,
  from: { column: lostArticles.status, states: ["claimed"] },
  conflict: refusing(lostArticleSays.notCancellable),
  summary: "Cancel a claim: the article is found again",
  description: "The claimant, or staff for any claim (anyone else: 422). An article not claimed is a 409.",
  examples: { 422: lostArticleSays.onlyClaimant },
  rules: (ctx) =>
    ctx.can(permissions.manage)
      ? []
      : [
          {
            when: eq(lostArticles.claimedBy, ctx.userId ?? 0),
            message: lostArticleSays.onlyClaimant,
          },
        ],
  set: () => ({ status: "found", claimedBy: null, claimedAt: null, claimedForStudentId: null }),
});

// ---- Deliver, donate ------------------------------------------------------------------------------

export const deliverLostArticle = lostArticle.action({
  name: "deliver",
  verb: "deliver",
  access: permissions.manage,
  input: z
    .object({
      receivedBy: text({ max: 200 }).openapi({
        example: "Ana García (mother)",
        description: "Who took it away: recorded on the article and in the audit trail",
      }),
    })
    .strict(),
  from: { column: lostArticles.status, states: ["found", "claimed"] },
  conflict: refusing(lostArticleSays.notDeliverable),
  summary: "Mark a lost article delivered, recording who received it",
  description: "From claimed (or found: a child recognised it at the desk). Delivered or donated already: 409.",
  set: (ctx, { body }) => ({
    status: "delivered",
    deliveredAt: ctx.deps.clock.now().toISOString(),
    deliveredBy: ctx.userId,
    receivedBy: body.receivedBy,
  }),
  also: (ctx, { id }) => (typeof id === "number" ? skipReminders(ctx, id) : []),
});

const donateRoute = defineRoute({
  method: "patch",
  path: "/api/v1/lost-article/{id}/donate",
  tag: "Communication",
  operationId: "donateLostArticle",
  summary: "Mark a lost article donated, once its donation date has come",
  description:
    "Only a found article (claimed, delivered or donated: 409), on or after its `donateAfter` day at the school " +
    "(before it: 422). Its scheduled reminders are skipped.",
  access: permissions.manage,
  module: "lost-articles",
  audit: "lost-article",
  errors: [409, 422],
  examples: {
    409: lostArticleSays.notDonatable(42, "claimed"),
    422: lostArticleSays.beforeDonationDate(42, "2026-11-27"),
  },
  request: { params: IdParams },
  responses: { 200: json(LostArticleRecord, "The article, donated") },
});

export async function donateLostArticle(ctx: SchoolCtx, { params }: InputOf<typeof donateRoute>) {
  const now = ctx.deps.clock.now();
  // The school's zone is kept a minute per isolate (src/modules/school/zone.ts).
  const today = dateIn(await schoolZone(ctx), now);
  return lostArticle.changeAndRead(ctx, params.id, {
    action: "donate",
    set: { status: "donated", donatedAt: now.toISOString(), donatedBy: ctx.userId },
    from: { column: lostArticles.status, states: ["found"] },
    conflict: (state) => lostArticleSays.notDonatable(params.id, state),
    rules: [
      {
        when: lte(lostArticles.donateAfter, today),
        message: lostArticleSays.beforeDonationDate(params.id, today),
      },
    ],
    also: skipReminders(ctx, params.id),
  });
}
export const donateLostArticleOperation = operation(donateRoute, donateLostArticle);

// ---- Remind the claimant --------------------------------------------------------------------------

const remindRoute = defineRoute({
  method: "patch",
  path: "/api/v1/lost-article/{id}/remind",
  tag: "Communication",
  operationId: "remindLostArticle",
  summary: "Remind the claimant to pick up their article",
  description:
    "Tells the claimant (in their language) that the article waits for them at the school. Only a claimed article " +
    "(else 409). Answers the article with `remindedAt`.",
  access: permissions.manage,
  module: "lost-articles",
  audit: "lost-article",
  errors: [409, 422],
  examples: {
    409: lostArticleSays.noClaimant(42, "found"),
    422: {
      name: "claimedByAnother",
      summary: "The claim was cancelled and another member claimed it meanwhile: read it again",
      detail: lostArticleSays.claimedByAnother,
    },
  },
  request: { params: IdParams },
  responses: { 200: json(LostArticleRecord, "The article, its claimant reminded") },
});

export async function remindLostArticle(ctx: SchoolCtx, { params }: InputOf<typeof remindRoute>) {
  const article = await lostArticle.find(ctx, params.id);
  const now = ctx.deps.clock.now().toISOString();
  const sending =
    article.status === "claimed" && article.claimedBy !== null
      ? notify(ctx, {
          category: "lost-and-found",
          ...pickUpNotice(article),
          about: { entity: "lost-article", id: params.id },
          audience: { users: [article.claimedBy] },
        })
      : undefined;
  const changed = await lostArticle.changeAndRead(ctx, params.id, {
    action: "remind",
    set: { remindedAt: now },
    from: { column: lostArticles.status, states: ["claimed"] },
    conflict: (state) => lostArticleSays.noClaimant(params.id, state),
    // The claimant told is the one read: a claim cancelled and made by another meanwhile is a 422 to retry.
    rules: [{ when: eq(lostArticles.claimedBy, article.claimedBy ?? 0), message: lostArticleSays.claimedByAnother }],
    also: sending?.statements ?? [],
  });
  await sending?.dispatch();
  return changed;
}
export const remindLostArticleOperation = operation(remindRoute, remindLostArticle);

/** "Your article waits for you" in both languages. */
export function pickUpNotice(article: { name: string; donateAfter: string }) {
  return {
    title: { en: `Lost and found: ${article.name}`, es: `Objetos perdidos: ${article.name}` },
    body: {
      en: `The article you claimed waits for you at the school. Please pick it up before ${article.donateAfter}.`,
      es: `El objeto que usted reclamó le espera en la escuela. Recójalo antes del ${article.donateAfter}.`,
    },
  };
}

// ---- Photo --------------------------------------------------------------------------------------

export const PHOTO_URL_SECONDS = 5 * 60;
const PHOTO_TYPES = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" } as const;
type PhotoType = keyof typeof PHOTO_TYPES;
const PHOTO_TYPE_NAMES: [PhotoType, ...PhotoType[]] = ["image/png", "image/jpeg", "image/webp"];
const PhotoUrlBody = imageUrlBody(PHOTO_TYPE_NAMES, "photo");

const PhotoUrl = z
  .object({
    photo: z.string().openapi({ example: "1/lost-articles/7/photo-2f1c.jpg", description: "The photo's object key" }),
    ...signedUrlFields(PHOTO_URL_SECONDS, "image/jpeg"),
  })
  .openapi("LostArticlePhotoUrl");

const signedUrlRoute = defineRoute({
  method: "put",
  path: "/api/v1/lost-article/{id}/signed-url",
  tag: "Communication",
  operationId: "createLostArticleSignedUrl",
  summary: "Get a presigned URL to upload (PUT: sets a new photo) or download (GET) a lost article's photo",
  description:
    "PUT needs lost-article.manage: the photo becomes a new key `{schoolId}/lost-articles/{id}/photo-{uuid}.{ext}` " +
    "and the URL uploads to it (image/png, image/jpeg or image/webp: send the returned `headers`). GET signs a " +
    `download of the current photo (404 if none) for any member who browses lost articles. URLs expire after ` +
    `${PHOTO_URL_SECONDS} s.`,
  access: permissions.read,
  module: "lost-articles",
  audit: "lost-article",
  request: { params: IdParams, body: jsonBody(PhotoUrlBody, "LostArticlePhotoUrlRequest") },
  responses: { 200: json(PhotoUrl, "The photo's key and its presigned URL") },
});

export async function createLostArticleSignedUrl(ctx: SchoolCtx, { params, body }: InputOf<typeof signedUrlRoute>) {
  const { id } = params;
  let key: string;
  if (body.method === "PUT") {
    if (!ctx.can(permissions.manage)) {
      throw forbidden(say.missingPermission(permissions.manage.name, ctx.schoolId));
    }
    const contentType = body.contentType ?? "image/jpeg";
    key = `${ctx.schoolId}/lost-articles/${id}/photo-${crypto.randomUUID()}.${PHOTO_TYPES[contentType]}`;
    await lostArticle.commit(
      ctx,
      id,
      new Batch(ctx).add(...lostArticle.writes.update(ctx, id, { photo: key }, "photo")),
    );
  } else {
    const found = await lostArticle.find(ctx, id);
    if (found.photo === null) throw new ApiError(404, m`Lost article ${id} has no photo; upload one with method PUT`);
    key = found.photo;
  }
  const signed = await ctx.deps.signer.sign({
    key,
    method: body.method,
    contentType: body.method === "PUT" ? body.contentType : undefined,
    expiresIn: PHOTO_URL_SECONDS,
    now: ctx.deps.clock.now(),
  });
  return { photo: key, ...signed };
}
export const createLostArticleSignedUrlOperation = operation(signedUrlRoute, createLostArticleSignedUrl);
