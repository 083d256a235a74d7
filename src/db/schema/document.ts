/** Documents in object storage. */
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

/** A document in object storage; `slug` is its key: `{schoolId}/documents/{name}`. */
export const documents = searchable(
  sqliteTable(
    "document",
    {
      ...record,
      schoolId: schoolId(),
      name: text("name").notNull(),
      slug: text("slug").notNull(),
      /** What the document belongs to (the signed-url `entity`): documents, students, tasks, ... */
      entity: text("entity").notNull().default("documents"),
      contentType: text("content_type"),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      uniqueIndex("document_slug_uq").on(t.schoolId, t.slug),
      index("document_name_idx").on(t.schoolId, t.name),
      index("document_created_idx").on(t.schoolId, t.createdAt),
    ],
  ),
  { name: "nameSearch" },
);

export const Documents = dataTable(documents, { entity: "document" });
