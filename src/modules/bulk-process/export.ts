/**
 * Exports, written by the bulk consumer (consumer.ts) once it has claimed the process:
 *
 * - `school-export`: every record of the school, the school's own row first, then every table
 *   with a `school_id` (src/db/dump.ts), then the object-storage keys its rows name;
 * - `user-export`: one person's own data in the school (a privacy request): their user row and
 *   the rows that are theirs (`personRows` in src/db/dump.ts), never another family's.
 *
 * The file is JSON lines, gzipped (`.jsonl.gz`): a first line saying what it is
 * (`{"export":"school","school":1,"at":"...","format":1}`), one line per row
 * (`{"table":"student","row":{"id":1,"school_id":1,...}}`, the row's SQL columns, secret ones
 * null), and one per object key (`{"object":"1/documents/report.pdf"}`: what to copy from R2 with
 * it). It is compressed as it is written, so memory holds the compressed file, not the text.
 * Written to the process's document key; a run taken up again writes the same key again.
 */
import { type DumpTable, dumpTables, ofSchool, personRows, readRows, schoolTables } from "../../db/dump";
import { schools } from "../../db/schema/core";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";

/** Columns whose values are object keys (documents, logos, photos, images, attachments). */
const OBJECT_COLUMNS: Record<string, readonly string[]> = {
  document: ["slug"],
  school: ["logo"],
  event: ["image"],
  school_group: ["image"],
  lost_article: ["photo"],
  student: ["photo"],
  task: ["attachment_key"],
  trusted_person: ["photo"],
};

/** The format of the lines, for whoever reads a file later. */
export const EXPORT_FORMAT = 1;

/** JSON lines through gzip, as they are written. */
class GzipLines {
  private readonly writer: ReturnType<CompressionStream["writable"]["getWriter"]>;
  private readonly bytes: Promise<ArrayBuffer>;
  private readonly encoder = new TextEncoder();
  lines = 0;

  constructor() {
    const gzip = new CompressionStream("gzip");
    this.writer = gzip.writable.getWriter();
    // Read as it is written: the compressed bytes are all that is kept.
    this.bytes = new Response(gzip.readable).arrayBuffer();
  }

  async write(values: readonly unknown[]) {
    if (values.length === 0) return;
    await this.writer.write(this.encoder.encode(values.map((v) => `${JSON.stringify(v)}\n`).join("")));
    this.lines += values.length;
  }

  async close(): Promise<ArrayBuffer> {
    await this.writer.close();
    return this.bytes;
  }
}

type ExportProcess = { id: number; entity: "school-export" | "user-export"; createdBy: number | null };

/** Writes the export's file to `slug`; the process is completed with its line count. */
export async function writeExport(ctx: SchoolCtx, process: ExportProcess, slug: string) {
  const { db, clock, storage } = ctx.deps;
  const school = ctx.schoolId;
  const out = new GzipLines();
  const objects = new Set<string>();
  const prefix = `${school}/`;
  /** Writes a table's rows that `where` selects, noting the object keys they name. */
  const dump = async (t: DumpTable, where: Parameters<typeof readRows>[2]) => {
    const keyColumns = OBJECT_COLUMNS[t.name] ?? [];
    await readRows(db, t, where, async (rows) => {
      for (const row of rows) {
        for (const column of keyColumns) {
          const key = row[column];
          if (typeof key === "string" && key.startsWith(prefix)) objects.add(key);
        }
      }
      await out.write(rows.map((row) => ({ table: t.name, row })));
    });
  };
  const at = clock.now().toISOString();
  const schoolTable = dumpTables().find((t) => t.name === "school");
  if (process.entity === "school-export") {
    await out.write([{ export: "school", school, at, format: EXPORT_FORMAT }]);
    if (schoolTable) await dump(schoolTable, eq(schools.id, school));
    for (const t of schoolTables()) await dump(t, ofSchool(t, school));
  } else {
    const userId = process.createdBy;
    // The person was deleted since they asked: nothing of theirs is left to write.
    await out.write([{ export: "user", school, user: userId, at, format: EXPORT_FORMAT }]);
    if (userId !== null) {
      for (const t of dumpTables()) {
        const where = personRows(t, school, userId);
        if (where) await dump(t, where);
      }
    }
  }
  await out.write([...objects].sort().map((object) => ({ object })));
  const lines = out.lines;
  await storage.put(slug, await out.close(), { httpMetadata: { contentType: EXPORT_CONTENT_TYPE } });
  return { errors: [], fatal: false, totalRows: lines, processedRows: lines };
}

export const EXPORT_CONTENT_TYPE = "application/gzip";
