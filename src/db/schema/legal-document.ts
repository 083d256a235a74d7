/**
 * Legal documents: versioned platform texts (terms of service, privacy policy), the same for every
 * school, and who accepted which version. Platform records: no `school_id`.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, users } from "./core";

/** The kinds of legal document; each kind has its own version sequence and its own "latest". */
export const LEGAL_KINDS = ["terms", "privacy"] as const;
export type LegalKind = (typeof LEGAL_KINDS)[number];

/** One version of a legal document. A published version never changes again. */
export const legalDocuments = sqliteTable(
  "legal_document",
  {
    ...record,
    kind: text("kind", { enum: LEGAL_KINDS }).notNull(),
    /** 1, 2, 3... per kind, assigned at creation. */
    version: integer("version").notNull(),
    title: text("title").notNull(),
    /** Markdown. */
    body: text("body").notNull(),
    status: text("status", { enum: ["draft", "published"] })
      .notNull()
      .default("draft"),
    /** When it was published (the clock of the publish request); null while a draft. */
    publishedAt: text("published_at"),
  },
  (t) => [
    // Versions are unique per kind; also "the latest published of a kind" (kind = ?, version DESC).
    uniqueIndex("legal_document_version_uq").on(t.kind, t.version),
    // The list: newest first, by kind, by status (readers without legal-document.write: published).
    index("legal_document_created_idx").on(t.createdAt),
    index("legal_document_kind_idx").on(t.kind, t.createdAt),
    index("legal_document_status_idx").on(t.status, t.createdAt),
    check("legal_document_published_ck", sql`(${t.status} = 'published') = (${t.publishedAt} IS NOT NULL)`),
  ],
);

/** A user's acceptance of one version: at most one per user and version. */
export const legalDocumentAcceptances = sqliteTable(
  "legal_document_acceptance",
  {
    ...record,
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    legalDocumentId: integer("legal_document_id")
      .notNull()
      .references(() => legalDocuments.id, { onDelete: "restrict" }),
    acceptedAt: text("accepted_at").notNull(),
  },
  (t) => [
    uniqueIndex("legal_document_acceptance_uq").on(t.userId, t.legalDocumentId),
    // Deleting a draft checks the foreign key: without this index that scans every acceptance.
    index("legal_document_acceptance_document_idx").on(t.legalDocumentId),
  ],
);

export const LegalDocuments = dataTable(legalDocuments, { entity: "legal-document" });
export const LegalDocumentAcceptances = dataTable(legalDocumentAcceptances, { entity: "legal-document-acceptance" });
