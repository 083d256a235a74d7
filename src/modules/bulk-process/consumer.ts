/**
 * The bulk queue consumer: runs one bulk process per message.
 *
 * Delivery is at least once, so the message receipt (`queue_receipt`, keyed by the message id)
 * and the claim of the process (queued -> processing, a conditional UPDATE) are written in one
 * batch, which is one transaction, before anything else happens. The claim is the guard: a second
 * message for the same process, a deleted process or another school's id find no queued row and do
 * nothing. The receipt is written only with a claim, and carries the claim's instant (the process's
 * `started_at`), so it says which message runs the process: when that message comes back while its
 * process is still processing (a database hiccup stopped it: the consumer threw, so the queue
 * retries it; or its answer was lost), it takes the run up again from the start, with the progress
 * counted anew. Importers write with upserts, so rows a stopped run wrote are updated, not doubled.
 * A finished process is never run again.
 *
 * An export (`school-export`, `user-export`: export.ts) runs the same way, claimed by the same
 * batch: it writes its file (the process's document) instead of reading one; a run taken up again
 * writes the same key again.
 *
 * Teachers and administrative staff (people-import.ts), families (family-import.ts), groups
 * (group-import.ts) and route students (route-student-import.ts) have importers. The other entities do not yet, so a process whose file is in storage ends `failed` with "No importer for <entity> yet":
 * nobody should believe an import happened when it did not.
 *
 * A process ends `completed` when the file was read to the end, with the rows it refused listed in
 * `errors` (the others imported), and `failed` when the file itself was refused (row 0 or a missing
 * column), when no row could be imported, or when the import stopped. The reader checks the whole
 * file (size once unzipped, CRC, row count) before it yields the first row, so a refused file
 * writes nothing.
 */
import { Batch } from "../../db/batch";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { Documents, documents } from "../../db/schema/document";
import { queueReceipts } from "../../db/schema/jobs";
import { and, eq, or, sql } from "../../db/sql";
import { unavailable } from "../../db/transient";
import { importCtx, type SchoolCtx } from "../../lib/context";
import { type Language, withLanguage } from "../../lib/language";
import { errorFields, log } from "../../lib/log";
import { type Message, m } from "../../lib/message";
import type { Consumer } from "../../lib/module";
import { BulkMessage, type RowError, storedErrors } from "./service";

/** Errors kept on the process: enough to fix a file, small enough for its row. */
const MAX_ERRORS = 200;

export { BULK_QUEUE } from "./queue";

import { BULK_QUEUE } from "./queue";

type Claimed = { id: number; entity: string; documentId: number; language: Language; createdBy: number | null };

export const consumeBulkProcess: Consumer = async (deps, message) => {
  const parsed = BulkMessage.safeParse(message.body);
  if (!parsed.success) {
    // Acked: no retry can make a malformed message valid.
    log.error("malformed bulk message", { queue: BULK_QUEUE, messageId: message.id, body: message.body });
    return;
  }
  const { bulkProcessId, schoolId } = parsed.data;
  const { db } = deps;
  const ctx = importCtx(deps, bulkProcessId, schoolId, null);
  const now = deps.clock.now().toISOString();
  const ofProcess = BulkProcesses.where(ctx, eq(bulkProcesses.id, bulkProcessId));
  const queued = and(ofProcess, eq(bulkProcesses.status, "queued"));
  // This message's run, stopped before it finished: its receipt has the run's start instant.
  const mine = and(
    ofProcess,
    eq(bulkProcesses.status, "processing"),
    sql`${bulkProcesses.startedAt} = (SELECT ${queueReceipts.createdAt} FROM ${queueReceipts} WHERE ${queueReceipts.key} = ${message.id})`,
  );
  const claimable = or(queued, mine);
  const start = {
    status: "processing" as const,
    startedAt: sql`CASE WHEN ${bulkProcesses.status} = 'queued' THEN ${now} ELSE ${bulkProcesses.startedAt} END`,
    processedRows: 0,
    updatedAt: now,
  };
  const batch = new Batch(ctx);
  const receipted = batch.result(
    db
      .insert(queueReceipts)
      .select(
        sql`SELECT ${message.id}, ${BULK_QUEUE}, ${now} WHERE EXISTS (SELECT 1 FROM ${bulkProcesses} WHERE ${queued})`,
      )
      .onConflictDoNothing()
      .returning({ key: queueReceipts.key }),
  );
  const [audit, update] = BulkProcesses.update(ctx, claimable, start, "start");
  batch.add(audit);
  const claim = batch.result(
    update.returning({
      id: bulkProcesses.id,
      entity: bulkProcesses.entity,
      documentId: bulkProcesses.documentId,
      language: bulkProcesses.language,
      createdBy: bulkProcesses.createdBy,
    }),
  );
  const file = batch.read(
    BulkProcesses.select(ctx, { slug: documents.slug })
      .join(Documents, eq(documents.id, bulkProcesses.documentId))
      .where(eq(bulkProcesses.id, bulkProcessId))
      .limit(1),
  );
  const results = await batch.commit();
  const [receipt, claimed, files] = [results.get(receipted), results.get(claim), results.get(file)];
  const process = claimed[0];
  if (!process) {
    log.info("bulk message ignored: the process is not queued", {
      queue: BULK_QUEUE,
      messageId: message.id,
      bulkProcessId,
      schoolId,
    });
    return;
  }
  if (receipt.length === 0)
    log.info("bulk process resumed", { queue: BULK_QUEUE, messageId: message.id, bulkProcessId });
  // The report is written in the language of whoever started the process (zod's messages too).
  await withLanguage(process.language, () => run(ctx, message.id, process, files[0]?.slug));
};

async function run(ctx: SchoolCtx, messageId: string, process: Claimed, slug: string | undefined) {
  const bulkProcessId = process.id;
  let result: Outcome;
  try {
    result = await runImport(ctx, process, slug);
  } catch (err) {
    // The database is briefly unavailable: thrown, so the queue retries the message, which takes
    // the run up again (above); the process stays processing, neither failed nor lost.
    if (unavailable(err)) throw err;
    // Recorded as a failure the user can see and queue again, rather than a process left
    // "processing" that no redelivery would ever pick up. The batches already written stay: a
    // second run updates them rather than duplicating them.
    log.error("bulk process stopped", { queue: BULK_QUEUE, messageId, bulkProcessId, ...errorFields(err) });
    result = { errors: [{ row: 0, message: m`The import stopped unexpectedly; queue it again` }], fatal: true };
  }
  await finish(ctx, process, result);
}

type Outcome = { errors: RowError[]; fatal: boolean; totalRows?: number; processedRows?: number };

const fileError = (message: Message): Outcome => ({ errors: [{ row: 0, message }], fatal: true });

/** Checks the uploaded file, then imports it. */
async function runImport(ctx: SchoolCtx, process: Claimed, slug: string | undefined): Promise<Outcome> {
  const { deps } = ctx;
  if (slug === undefined) return fileError(m`Document ${process.documentId} not found`);
  // An export writes its file rather than reading one (export.ts).
  if (process.entity === "school-export" || process.entity === "user-export") {
    return (await import("./export")).writeExport(ctx, { ...process, entity: process.entity }, slug);
  }
  // R2 has no POST-policy uploads: the object may never have been uploaded under its key.
  const head = await deps.storage.head(slug);
  if (!head) return fileError(m`Uploaded file ${slug} not found in storage`);
  const { IMPORTS, importPeople } = await import("./people-import");
  const entity = process.entity;
  const isPeopleImport = (e: string): e is keyof typeof IMPORTS => e in IMPORTS;
  if (!(entity in IMPORTS) && entity !== "families" && entity !== "groups" && entity !== "route-students") {
    return fileError(m`No importer for ${entity} yet`);
  }
  const { READ_LIMITS } = await import("../../lib/xlsx");
  const tooLarge = (size: number) =>
    fileError(m`The file is ${(size / 1048576).toFixed(1)} MB; at most ${READ_LIMITS.maxBytes / 1048576} MB`);
  if (head.size > READ_LIMITS.maxBytes) return tooLarge(head.size);
  const object = await deps.storage.get(slug);
  if (!object) return fileError(m`Uploaded file ${slug} not found in storage`);
  // The object read, not the one looked at: the key may have been written again in between.
  if (object.size > READ_LIMITS.maxBytes) {
    await object.body.cancel();
    return tooLarge(object.size);
  }
  const bytes = new Uint8Array(await new Response(object.body).arrayBuffer());
  if (entity === "families") return (await import("./family-import")).importFamilies(ctx, process.id, bytes);
  if (entity === "groups") return (await import("./group-import")).importGroups(ctx, process.id, bytes);
  if (entity === "route-students") {
    return (await import("./route-student-import")).importRouteStudents(ctx, process.id, bytes);
  }
  if (!isPeopleImport(entity)) return fileError(m`No importer for ${entity} yet`);
  return importPeople(ctx, process.id, entity, bytes);
}

/** processing -> completed (the file was read; refused rows listed) or failed. */
async function finish(ctx: SchoolCtx, process: Claimed, result: Outcome) {
  const now = ctx.deps.clock.now().toISOString();
  const { errors, fatal, totalRows, processedRows } = result;
  const failed = fatal || (errors.length > 0 && processedRows === 0);
  const listed = errors.length > MAX_ERRORS ? errors.slice(0, MAX_ERRORS) : errors;
  if (listed.length < errors.length) {
    listed.push({
      row: errors[MAX_ERRORS]?.row ?? 0,
      message: m`${errors.length - MAX_ERRORS} more errors not listed`,
    });
  }
  const set = {
    status: failed ? ("failed" as const) : ("completed" as const),
    errors: storedErrors(listed),
    ...(totalRows !== undefined ? { totalRows, processedRows: processedRows ?? 0 } : {}),
    finishedAt: now,
  };
  const running = and(eq(bulkProcesses.id, process.id), eq(bulkProcesses.status, "processing"));
  await new Batch(ctx)
    .add(...BulkProcesses.update(ctx, running, set, set.status === "completed" ? "complete" : "fail"))
    .commit();
}
