/**
 * Bulk process verbs beyond the generic ones: queueing a process for the bulk consumer, queueing a
 * failed one again, and deleting one that is not running.
 */
import { z } from "@hono/zod-openapi";
import { and, eq, lt, ne } from "drizzle-orm";
import type { Deps } from "../../deps";
import { queueReceipts } from "../../jobs/schema";
import { ApiError, conflict, notFound } from "../../lib/errors";
import { type Caller, schoolOf } from "../../lib/resource";
import { bulkProcessResource } from "./resource";
import { bulkProcesses } from "./schema";

/** The message the bulk queue carries: which process, and the school it must belong to. */
export const BulkMessage = z.strictObject({
  bulkProcessId: z.number().int().min(1),
  schoolId: z.number().int().min(1),
});
export type BulkMessage = z.infer<typeof BulkMessage>;

export type RowError = { row: number; message: string };

/** Keeps every query inside the caller's school (the resource's own scoping). */
const { scoped } = bulkProcessResource;

/**
 * Sends the process to the bulk queue. The row is written first, so a failed send leaves it
 * `failed` with the reason (never a `queued` row no consumer will ever see) and answers 503.
 */
export async function enqueue(caller: Caller, id: number): Promise<void> {
  const { deps } = caller;
  const schoolId = schoolOf(caller);
  try {
    await deps.queues.bulk.send({ bulkProcessId: id, schoolId } satisfies BulkMessage);
  } catch (err) {
    console.error(
      JSON.stringify({
        level: "error",
        message: "bulk queue send failed",
        bulkProcessId: id,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    const now = deps.clock.now().toISOString();
    const errors: RowError[] = [{ row: 0, message: "Could not be queued: the bulk queue is unavailable" }];
    await deps.db
      .update(bulkProcesses)
      .set({ status: "failed", errors: JSON.stringify(errors), finishedAt: now, updatedAt: now })
      .where(and(eq(bulkProcesses.id, id), eq(bulkProcesses.schoolId, schoolId), eq(bulkProcesses.status, "queued")));
    throw new ApiError(
      503,
      `Bulk process ${id} could not be queued and is marked failed; queue it again later with PUT {"status":"queued"}`,
    );
  }
}

/** Why a conditional write matched nothing: no such process here (404), or its status (409). */
async function refuse(caller: Caller, id: number, why: (status: string) => string): Promise<never> {
  const [row] = await caller.deps.db
    .select({ status: bulkProcesses.status })
    .from(bulkProcesses)
    .where(scoped(caller, eq(bulkProcesses.id, id)))
    .limit(1);
  if (!row) throw notFound("Bulk process", id);
  throw conflict(why(row.status));
}

/** Queues a failed process again: only from `failed`, guarded by the conditional update. */
export async function requeue(caller: Caller, id: number): Promise<void> {
  const now = caller.deps.clock.now().toISOString();
  const reset = await caller.deps.db
    .update(bulkProcesses)
    .set({
      status: "queued",
      errors: "[]",
      totalRows: 0,
      processedRows: 0,
      startedAt: null,
      finishedAt: null,
      updatedAt: now,
    })
    .where(scoped(caller, and(eq(bulkProcesses.id, id), eq(bulkProcesses.status, "failed"))))
    .returning({ id: bulkProcesses.id });
  if (reset.length === 0) {
    await refuse(caller, id, (s) => `Bulk process ${id} is ${s}; only a failed process can be queued again`);
  }
  await enqueue(caller, id);
}

/** Deletes a process unless the consumer is running it right now. */
export async function remove(caller: Caller, id: number): Promise<void> {
  const deleted = await caller.deps.db
    .delete(bulkProcesses)
    .where(scoped(caller, and(eq(bulkProcesses.id, id), ne(bulkProcesses.status, "processing"))))
    .returning({ id: bulkProcesses.id });
  if (deleted.length === 0) {
    await refuse(caller, id, () => `Bulk process ${id} is processing; delete it once it has finished`);
  }
}

/** A process "processing" for longer than this has lost its worker (the Worker's limit is minutes). */
export const STUCK_AFTER_MINUTES = 30;
/** Queue receipts outlive any redelivery by far after this long. */
export const RECEIPTS_KEPT_DAYS = 7;

/**
 * Cron sweep: marks processes stuck in "processing" as failed (the user can queue them again) and
 * prunes old queue receipts. Conditional on the status, so running it twice changes nothing more.
 */
export async function sweepBulkProcesses(deps: Deps): Promise<string> {
  const now = deps.clock.now();
  const stuckBefore = new Date(now.getTime() - STUCK_AFTER_MINUTES * 60_000).toISOString();
  const receiptsBefore = new Date(now.getTime() - RECEIPTS_KEPT_DAYS * 86_400_000).toISOString();
  const errors: RowError[] = [
    { row: 0, message: `Stopped without finishing within ${STUCK_AFTER_MINUTES} minutes; queue it again` },
  ];
  const [stuck, pruned] = await deps.db.batch([
    deps.db
      .update(bulkProcesses)
      .set({
        status: "failed",
        errors: JSON.stringify(errors),
        finishedAt: now.toISOString(),
        updatedAt: now.toISOString(),
      })
      .where(and(eq(bulkProcesses.status, "processing"), lt(bulkProcesses.startedAt, stuckBefore)))
      .returning({ id: bulkProcesses.id }),
    deps.db
      .delete(queueReceipts)
      .where(lt(queueReceipts.createdAt, receiptsBefore))
      .returning({ key: queueReceipts.key }),
  ]);
  return `${stuck.length} stuck bulk processes failed, ${pruned.length} queue receipts pruned`;
}
