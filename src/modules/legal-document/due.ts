/**
 * What a user still has to accept: the latest published version of each kind that they have not
 * accepted. One statement, so `GET /api/v1/user/me` reads it in the batch of its other reads
 * (src/modules/user/routes.ts). Each kind's latest is one step down legal_document_version_uq.
 */
import { z } from "@hono/zod-openapi";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { LEGAL_KINDS, legalDocumentAcceptances, legalDocuments } from "../../db/schema/legal-document";
import { and, desc, eq, notExists, sql } from "../../db/sql";

export const MustAccept = z
  .object({
    mustAccept: z
      .array(
        z.object({
          kind: z.enum(LEGAL_KINDS).openapi({ description: "Which document: terms or privacy" }),
          id: z.number().int().openapi({ description: "The legal document version to accept" }),
          version: z.number().int().openapi({ description: "Its version number, from 1" }),
          title: z.string().openapi({ description: "Its title" }),
          publishedAt: z.iso.datetime().openapi({ description: "When that version was published" }),
        }),
      )
      .openapi({
        description:
          "The latest published version of each kind the user has not accepted (accept with " +
          "POST /api/v1/legal-document/{id}/accept); empty when nothing is due",
      }),
  })
  .openapi("LegalStatus", { description: "The legal documents the user must accept before going on" });

export type MustAccept = z.infer<typeof MustAccept>;

/** The statement (put it in a batch); its rows go through `toMustAccept`. */
export function mustAcceptQuery(db: Db, userId: number) {
  const latest = alias(legalDocuments, "latest");
  const latestIds = LEGAL_KINDS.map(
    (kind) =>
      sql`(${db
        .select({ id: latest.id })
        .from(latest)
        .where(and(eq(latest.kind, kind), eq(latest.status, "published")))
        .orderBy(desc(latest.version))
        .limit(1)})`,
  );
  const accepted = db
    .select({ one: sql`1` })
    .from(legalDocumentAcceptances)
    .where(
      and(eq(legalDocumentAcceptances.userId, userId), eq(legalDocumentAcceptances.legalDocumentId, legalDocuments.id)),
    );
  return db
    .select({
      // Distinct names: D1's batch keys rows by column name.
      legalId: sql<number>`${legalDocuments.id}`.as("legal_id"),
      legalKind: legalDocuments.kind,
      legalVersion: legalDocuments.version,
      legalTitle: legalDocuments.title,
      legalPublishedAt: legalDocuments.publishedAt,
    })
    .from(legalDocuments)
    .where(and(sql`${legalDocuments.id} IN (${sql.join(latestIds, sql`, `)})`, notExists(accepted)));
}

type Row = Awaited<ReturnType<typeof mustAcceptQuery>>[number];

export function toMustAccept(rows: Row[]): MustAccept {
  return {
    mustAccept: rows
      // Published rows always have publishedAt (legal_document_published_ck).
      .flatMap((r) =>
        r.legalPublishedAt === null
          ? []
          : [
              {
                kind: r.legalKind,
                id: r.legalId,
                version: r.legalVersion,
                title: r.legalTitle,
                publishedAt: r.legalPublishedAt,
              },
            ],
      )
      .sort((a, b) => LEGAL_KINDS.indexOf(a.kind) - LEGAL_KINDS.indexOf(b.kind)),
  };
}
