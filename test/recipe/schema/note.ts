import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { record, schoolId } from "../../../src/db/schema/core";
import { dataTable } from "../../../src/db/table";

/** A note a school's staff keep: a title and some text. */
export const notes = sqliteTable(
  "note",
  { ...record, schoolId: schoolId(), title: text("title").notNull(), body: text("body") },
  (t) => [index("note_school_idx").on(t.schoolId, t.createdAt)],
);
export const Notes = dataTable(notes, { entity: "note" });
