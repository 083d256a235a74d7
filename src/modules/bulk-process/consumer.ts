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
import { queueReceipts } from "../../jobs/schema";
import { auditUpdate } from "../../lib/audit";
import { type Ctx, importCtx, tenant } from "../../lib/context";
import { errorFields, log } from "../../lib/log";
import type { Consumer } from "../../lib/module";
import { commit } from "../../lib/write";
import { documents } from "../document/schema";
import { bulkProcessResource } from "./resource";
import { bulkProcesses } from "./schema";
import { BulkMessage, type RowError } from "./service";

export { BULK_QUEUE } from "./queue";

import { BULK_QUEUE } from "./queue";

type Claimed = { id: number; schoolId: number; entity: string; documentId: number };

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
  const ofProcess = and(eq(bulkProcesses.id, bulkProcessId), tenant(ctx, bulkProcesses));
  const queued = and(ofProcess, eq(bulkProcesses.status, "queued"));
  const start = { status: "processing" as const, startedAt: now, updatedAt: now };
  const [receipt, , claimed, files] = await commit(ctx, [
    db
      .insert(queueReceipts)
      .values({ key: message.id, queue: BULK_QUEUE, createdAt: now })
      .onConflictDoNothing()
      .returning({ key: queueReceipts.key }),
    auditUpdate(ctx, bulkProcessResource.audit, queued, start, "start"),
    db.update(bulkProcesses).set(start).where(queued).returning({
      id: bulkProcesses.id,
      schoolId: bulkProcesses.schoolId,
      entity: bulkProcesses.entity,
      documentId: bulkProcesses.documentId,
    }),
    db
      .select({ slug: documents.slug })
      .from(bulkProcesses)
      .innerJoin(documents, and(eq(documents.id, bulkProcesses.documentId), tenant(ctx, documents)))
      .where(ofProcess)
      .limit(1),
  ]);
  const process = claimed[0];
  if (!process) {
    log.info("bulk message ignored: the process is not queued", {
      queue: BULK_QUEUE,
      messageId: message.id,
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
    log.error("bulk process stopped", { queue: BULK_QUEUE, messageId: message.id, bulkProcessId, ...errorFields(err) });
    errors = [{ row: 0, message: "The import stopped unexpectedly; queue it again" }];
  }
  await finish(ctx, process, errors);
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
async function finish(ctx: Ctx, process: Claimed, errors: RowError[]) {
  const now = ctx.deps.clock.now().toISOString();
  const set = {
    status: errors.length === 0 ? ("completed" as const) : ("failed" as const),
    errors: JSON.stringify(errors),
    finishedAt: now,
    updatedAt: now,
  };
  const running = and(
    eq(bulkProcesses.id, process.id),
    tenant(ctx, bulkProcesses),
    eq(bulkProcesses.status, "processing"),
  );
  await commit(ctx, [
    auditUpdate(ctx, bulkProcessResource.audit, running, set, set.status === "completed" ? "complete" : "fail"),
    ctx.deps.db.update(bulkProcesses).set(set).where(running),
  ]);
}
