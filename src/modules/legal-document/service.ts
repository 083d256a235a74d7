/**
 * Legal document verbs beyond the generic ones: edits and deletes of drafts only, the latest
 * published version of a kind, and a user's acceptance of a version.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  LegalDocumentAcceptances,
  LegalDocuments,
  type LegalKind,
  legalDocumentAcceptances,
  legalDocuments,
} from "../../db/schema/legal-document";
import { and, desc, eq } from "../../db/sql";
import type { Ctx } from "../../lib/context";
import { ApiError, conflict, notFound } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { RecordBase, timestamps } from "../../lib/resource";
import { Kind, type LegalDocument, toLegalDocument } from "./resource";

const NONE_PUBLISHED: Record<LegalKind, Message> = {
  terms: m`No published terms of service yet`,
  privacy: m`No published privacy policy yet`,
};

/** The published version of `kind` with the highest number; 404 when none is published yet. */
export async function latest(ctx: Ctx, kind: LegalKind): Promise<LegalDocument> {
  const row = await LegalDocuments.select(ctx)
    .where(eq(legalDocuments.kind, kind), eq(legalDocuments.status, "published"))
    .orderBy(desc(legalDocuments.version))
    .first();
  if (!row) throw new ApiError(404, NONE_PUBLISHED[kind]);
  return toLegalDocument(row);
}

export const AcceptanceRecord = RecordBase.extend({
  userId: z.number().int().openapi({ description: "The user who accepted" }),
  legalDocumentId: z.number().int().openapi({ description: "The accepted version" }),
  kind: Kind,
  version: z.number().int().openapi({ example: 2, description: "The accepted version's number" }),
  acceptedAt: z.iso.datetime().openapi({ example: "2026-11-21T08:00:00.000Z", description: "When it was accepted" }),
}).openapi("LegalDocumentAcceptance");

type Acceptance = z.infer<typeof AcceptanceRecord>;

const toAcceptance = (
  row: typeof legalDocumentAcceptances.$inferSelect,
  doc: Pick<typeof legalDocuments.$inferSelect, "kind" | "version">,
): Acceptance => ({
  ...timestamps(row),
  userId: row.userId,
  legalDocumentId: row.legalDocumentId,
  kind: doc.kind,
  version: doc.version,
  acceptedAt: row.acceptedAt,
});

/**
 * Records that the signed-in user accepts published version `id`, once: accepting again answers
 * the first acceptance and writes nothing. A draft is a 409. Any published version may be
 * accepted; only the latest of its kind takes it off `mustAccept`.
 *
 * Read, decide, write: a published version never changes or goes away, so what the read saw
 * still holds at the write; two accepts at once meet at the unique (user, version) index, and the
 * one refused there answers the row the other wrote (its batch, audit row included, rolled back).
 */
export async function accept(ctx: Ctx, id: number): Promise<Acceptance> {
  const userId = ctx.userId;
  if (userId === null) throw new Error("accept needs a signed-in user");
  const mine = and(eq(legalDocumentAcceptances.userId, userId), eq(legalDocumentAcceptances.legalDocumentId, id));
  const readExisting = () => LegalDocumentAcceptances.select(ctx).where(mine).limit(1);
  const reads = new Batch(ctx);
  const docSlot = reads.read(
    LegalDocuments.select(ctx, {
      kind: legalDocuments.kind,
      version: legalDocuments.version,
      status: legalDocuments.status,
    })
      .where(eq(legalDocuments.id, id))
      .limit(1),
  );
  const existingSlot = reads.read(readExisting());
  const found = await reads.commit();
  const [doc] = found.get(docSlot);
  const [existing] = found.get(existingSlot);
  if (!doc) throw notFound(m`Legal document ${id} not found`);
  if (doc.status !== "published") {
    throw conflict(m`Legal document ${id} is a draft; only a published version can be accepted`);
  }
  if (existing) return toAcceptance(existing, doc);

  const now = ctx.deps.clock.now().toISOString();
  try {
    // Audited as its own record (the user who accepts is the actor).
    const [insert, audit] = LegalDocumentAcceptances.insert(ctx, { userId, legalDocumentId: id, acceptedAt: now });
    const batch = new Batch(ctx);
    const inserted = batch.result(insert);
    batch.add(audit);
    const [created] = (await batch.commit({ conflict: m`accepted by another request just now` })).get(inserted);
    if (!created) throw new Error("the acceptance was not returned");
    return toAcceptance(created, doc);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const again = await readExisting().first();
    if (!again) throw err;
    return toAcceptance(again, doc);
  }
}
