/**
 * The bulk queue consumer: runs one bulk process per message.
 *
 * Delivery is at least once, so the message receipt (`queue_receipt`, keyed by the message id)
 * and the claim of the process (queued -> processing, a conditional UPDATE) are written in one
 * batch, which is one transaction, before anything else happens. The claim is the guard: a
 * redelivered message, a second message for the same process, a deleted process or another
 * school's id all find no queued row and do nothing.
 *
 * The importers (spreadsheet parsers per entity) do not exist yet, so a process whose file is in
 * storage ends `failed` with "No importer for <entity> yet": nobody should believe an import
 * happened when it did not.
 */
import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import type { Consumer } from "../../jobs/queue";
import { queueReceipts } from "../../jobs/schema";
import { documents } from "../document/schema";
import { bulkProcesses } from "./schema";
import { BulkMessage, type RowError } from "./service";

export const BULK_QUEUE = "school-bulk";

type Claimed = { id: number; schoolId: number; entity: string; documentId: number };

export const consumeBulkProcess: Consumer = async (deps, message) => {
  const parsed = BulkMessage.safeParse(message.body);
  if (!parsed.success) {
    // Acked: no retry can make a malformed message valid.
    log("error", "malformed bulk message", { id: message.id, body: message.body });
    return;
  }
  const { bulkProcessId, schoolId } = parsed.data;
  const { db } = deps;
  const now = deps.clock.now().toISOString();
  const ofProcess = and(eq(bulkProcesses.id, bulkProcessId), eq(bulkProcesses.schoolId, schoolId));
  const [receipt, claimed, files] = await db.batch([
    db
      .insert(queueReceipts)
      .values({ key: message.id, queue: BULK_QUEUE, createdAt: now })
      .onConflictDoNothing()
      .returning({ key: queueReceipts.key }),
    db
      .update(bulkProcesses)
      .set({ status: "processing", startedAt: now, updatedAt: now })
      .where(and(ofProcess, eq(bulkProcesses.status, "queued")))
      .returning({
        id: bulkProcesses.id,
        schoolId: bulkProcesses.schoolId,
        entity: bulkProcesses.entity,
        documentId: bulkProcesses.documentId,
      }),
    db
      .select({ slug: documents.slug })
      .from(bulkProcesses)
      .innerJoin(documents, and(eq(documents.id, bulkProcesses.documentId), eq(documents.schoolId, schoolId)))
      .where(ofProcess)
      .limit(1),
  ]);
  const process = claimed[0];
  if (!process) {
    log("info", "bulk message ignored: the process is not queued", {
      id: message.id,
      bulkProcessId,
      schoolId,
      redelivered: receipt.length === 0,
    });
    return;
  }
  let errors: RowError[];
  try {
    errors = await runImport(deps, process, files[0]?.slug);
  } catch (err) {
    // Recorded as a failure the user can see and queue again, rather than a process left
    // "processing" that no redelivery would ever pick up.
    log("error", "bulk process stopped", {
      id: message.id,
      bulkProcessId,
      error: err instanceof Error ? err.message : String(err),
    });
    errors = [{ row: 0, message: "The import stopped unexpectedly; queue it again" }];
  }
  await finish(deps, process, errors);
};

/** Checks the uploaded file, then imports it; returns the row errors (none when it all worked). */
async function runImport(deps: Deps, process: Claimed, slug: string | undefined): Promise<RowError[]> {
  if (slug === undefined) return [{ row: 0, message: `Document ${process.documentId} not found` }];
  // R2 has no POST-policy uploads: the object may never have been uploaded under its key.
  const object = await deps.storage.head(slug);
  if (!object) return [{ row: 0, message: `Uploaded file ${slug} not found in storage` }];
  return [{ row: 0, message: `No importer for ${process.entity} yet` }];
}

/** processing -> completed (no errors) or failed. */
async function finish(deps: Deps, process: Claimed, errors: RowError[]) {
  const now = deps.clock.now().toISOString();
  await deps.db
    .update(bulkProcesses)
    .set({
      status: errors.length === 0 ? "completed" : "failed",
      errors: JSON.stringify(errors),
      finishedAt: now,
      updatedAt: now,
    })
    .where(
      and(
        eq(bulkProcesses.id, process.id),
        eq(bulkProcesses.schoolId, process.schoolId),
        eq(bulkProcesses.status, "processing"),
      ),
    );
}

function log(level: "info" | "error", message: string, fields: Record<string, unknown>) {
  const line = JSON.stringify({ level, queue: BULK_QUEUE, message, ...fields });
  if (level === "error") console.error(line);
  else console.log(line);
}
