/**
 * Legal documents (docs/domain.md): versioned platform texts — terms
 * of service and privacy policy — the same for every school, written by the platform super-admin
 * (`legal-document.write`). A version is created as a draft (its number is the kind's next one),
 * edited while a draft, then published (`PATCH /{id}/publish`); a published version never changes
 * and is never deleted, because users have accepted exactly that text. Readers without
 * `legal-document.write` see published versions only.
 */
import { z } from "@hono/zod-openapi";
import { LEGAL_KINDS, LegalDocuments, type LegalKind, legalDocuments } from "../../db/schema/legal-document";
import { eq, gt, notExists, sql } from "../../db/sql";
import type { Ctx } from "../../lib/context";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { text } from "../../lib/text";
import { permissions } from "./permissions";

export const MAX_TITLE = 200;
/** Characters of markdown: a long terms of service is 10-20k words; the audit row keeps old + new. */
export const MAX_BODY = 100_000;

export const Kind = z.enum(LEGAL_KINDS).openapi({ example: "terms", description: "terms or privacy" });

/** C0 controls but tab, line feed and carriage return; DEL; C1; bidi formatting (as src/lib/text.ts). */
const REFUSED =
  "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069\\u200e\\u200f\\u061c";
/** Markdown: line breaks and tabs allowed; other control and bidi formatting characters are not. */
const MARKDOWN = new RegExp(`^[^${REFUSED}]*$`);

export const Body = z
  .string()
  .max(MAX_BODY)
  .regex(
    MARKDOWN,
    zodMessage(
      m`Must not contain control characters or bidirectional formatting characters (line breaks and tabs are fine)`,
    ),
  )
  .refine((v) => v.trim().length > 0, zodMessage(m`Must not be blank`))
  .openapi({
    description: `The text, in Markdown: 1 to ${MAX_BODY} characters`,
    example: "# Terms of service\n\nBy using the app you agree to...",
  });

export const Title = text({ max: MAX_TITLE }).openapi({ example: "Terms of service" });

const STATUSES = legalDocuments.status.enumValues;

export const LegalDocumentRecord = RecordBase.extend({
  kind: Kind,
  version: z.number().int().min(1).openapi({ example: 2, description: "1, 2, 3... per kind, assigned at creation" }),
  title: z.string().openapi({ example: "Terms of service", description: "Its title" }),
  body: z.string().openapi({ description: "Markdown" }),
  status: z.enum(STATUSES).openapi({ description: "draft -> published (then immutable)" }),
  publishedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ example: "2026-11-21T08:00:00.000Z", description: "When it was published; null for a draft" }),
});

export type LegalDocument = z.infer<typeof LegalDocumentRecord>;

export const toLegalDocument = (row: typeof legalDocuments.$inferSelect): LegalDocument => ({
  ...timestamps(row),
  kind: row.kind,
  version: row.version,
  title: row.title,
  body: row.body,
  status: row.status,
  publishedAt: row.publishedAt,
});

/** Drafts are the super-admin's work in progress: everyone else reads published versions only. */
function visibleTo(ctx: Ctx, access: "read" | "write") {
  return access === "read" && !ctx.can(permissions.write) ? eq(legalDocuments.status, "published") : undefined;
}

export const legalDocumentResource = defineResource({
  name: "legalDocument",
  plural: "legalDocuments",
  label: m`Legal document`,
  path: "/api/v1/legal-document",
  tag: "Documents",
  scope: "platform",
  data: LegalDocuments,
  record: LegalDocumentRecord,
  toRecord: (_ctx, row) => toLegalDocument(row),
  visibleTo,
  conflictMessage: m`Another version of this kind was created at the same time; try again`,
});

export const listLegalDocuments = legalDocumentResource.list({
  access: permissions.read,
  filters: {
    kind: {
      schema: Kind.optional().openapi({ description: "Only versions of this kind" }),
      where: (_ctx, v: LegalKind) => eq(legalDocuments.kind, v),
      example: "terms",
    },
    status: {
      schema: z.enum(STATUSES).optional().openapi({ description: "Only drafts, or only published versions" }),
      where: (_ctx, v: (typeof STATUSES)[number]) => eq(legalDocuments.status, v),
      example: "published",
    },
  },
  // Newest first: the versions' history.
  defaultOrder: [
    { by: legalDocuments.createdAt, desc: true },
    { by: legalDocuments.id, desc: true },
  ],
  summary: "List legal document versions, newest first (drafts only with legal-document.write)",
});

export const getLegalDocument = legalDocumentResource.get({ access: permissions.read });

/** The kind's next version number: one more than its highest, drafts included. */
async function nextVersion(ctx: Ctx, kind: LegalKind): Promise<number> {
  const row = await LegalDocuments.select(ctx, { max: sql<number | null>`max(${legalDocuments.version})` })
    .where(eq(legalDocuments.kind, kind))
    .first();
  return (row?.max ?? 0) + 1;
}

export const createLegalDocument = legalDocumentResource.create({
  access: permissions.write,
  input: z.object({ kind: Kind, title: Title, body: Body }),
  // Two creates of one kind at the same instant: the unique (kind, version) index refuses the
  // second (409, try again) rather than giving both the same number.
  values: async (ctx, { body }) => ({ ...body, version: await nextVersion(ctx, body.kind), status: "draft" }),
  summary: "Create a draft version of a legal document (its number is the kind's next)",
});

export const LegalDocumentUpdate = z.object({ title: Title.optional(), body: Body.optional() });

/** No published version of the same kind has a higher number (publishing this one would go back). */
const Newer = LegalDocuments.alias("newer");
const newer = Newer.table;
const noNewerPublished = (ctx: Ctx) =>
  notExists(
    Newer.select(ctx, { one: sql`1` }).where(
      eq(newer.kind, legalDocuments.kind),
      eq(newer.status, "published"),
      gt(newer.version, legalDocuments.version),
    ),
  );

export const publishLegalDocument = legalDocumentResource.action({
  name: "publish",
  access: permissions.write,
  from: { column: legalDocuments.status, states: ["draft"] },
  rules: (ctx) => [
    {
      when: noNewerPublished(ctx),
      message: m`A newer version of this kind is already published; create a new version instead`,
    },
  ],
  set: (ctx) => ({ status: "published", publishedAt: ctx.deps.clock.now().toISOString() }),
  examples: { 422: "A newer version of this kind is already published; create a new version instead" },
  summary: "Publish a draft: it becomes the kind's latest version and never changes again",
  description:
    "From draft only (a published version answers 409). A draft older than the kind's latest published version " +
    "answers 422. Signed-in users who have not accepted it see it in `GET /api/v1/user/me` `legal.mustAccept`.",
});
