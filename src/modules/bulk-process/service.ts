/**
 * Bulk process verbs beyond the generic ones: queueing a process for the bulk consumer, queueing
 * a failed one again, deleting one that is not running, and the cron sweep of stuck ones. Each
 * state change is a guarded write with its audit row.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { queueReceipts } from "../../db/schema/jobs";
import { and, eq, lt, sql } from "../../db/sql";
import { commit } from "../../db/write";
import type { Deps } from "../../deps";
import { jobCtx, type SchoolCtx } from "../../lib/context";
import { ApiError } from "../../lib/errors";
import type { Language } from "../../lib/language";
import { errorFields, log } from "../../lib/log";
import { type Message, m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { bulkProcessResource } from "./resource";

/** The message the bulk queue carries: which process, and the school it must belong to. */
export const BulkMessage = z.strictObject({
  bulkProcessId: z.number().int().min(1),
  schoolId: z.number().int().min(1),
});
export type BulkMessage = z.infer<typeof BulkMessage>;

/** A problem with the file (row 0), or with one row and, where known, one column (its header in the file). */
export type RowError = { row: number; column?: string; message: Message };

/**
 * Row errors as the process keeps them: text in the language of whoever started it (the consumer
 * and the sweep run in that language, src/lib/language.ts), read back as written.
 */
export const storedErrors = (errors: readonly RowError[]) => errors.map((e) => ({ ...e, message: e.message.render() }));

/**
 * Sends the process to the bulk queue. The row is written first, so a failed send leaves it
 * `failed` with the reason (never a `queued` row no consumer will ever see) and answers 503.
 */
export async function enqueue(ctx: SchoolCtx, id: number): Promise<void> {
  const schoolId = ctx.schoolId;
  try {
    await ctx.deps.queues.bulk.send({ bulkProcessId: id, schoolId } satisfies BulkMessage);
  } catch (err) {
    log.error("bulk queue send failed", { bulkProcessId: id, schoolId, ...errorFields(err) });
    const now = ctx.deps.clock.now().toISOString();
    const errors = storedErrors([{ row: 0, message: m`Could not be queued: the bulk queue is unavailable` }]);
    await new Batch(ctx)
      .add(
        ...bulkProcessResource.writes.update(
          ctx,
          id,
          { status: "failed", errors, finishedAt: now },
          "fail",
          null,
          eq(bulkProcesses.status, "queued"),
        ),
      )
      .commit()
      .catch(() => undefined); // Already moved on (the consumer got it after all): nothing to mark.
    throw new ApiError(
      503,
      m`Bulk process ${id} could not be queued and is marked failed; queue it again later with PUT {"status":"queued"}`,
    );
  }
}

/** Queues a failed process again: only from `failed`, guarded by the conditional update. */
export async function requeue(ctx: SchoolCtx, id: number): Promise<void> {
  await bulkProcessResource.change(ctx, id, {
    action: "requeue",
    set: { status: "queued", errors: [], totalRows: 0, processedRows: 0, startedAt: null, finishedAt: null },
    from: { column: bulkProcesses.status, states: ["failed"] },
    conflict: (state) => m`Bulk process ${id} is ${stateName(state)}; only a failed process can be queued again`,
  });
  await enqueue(ctx, id);
}

/** Deletes a process unless the consumer is running it right now. */
export async function remove(ctx: SchoolCtx, id: number): Promise<void> {
  await bulkProcessResource.change(ctx, id, {
    action: "delete",
    remove: true,
    from: { column: bulkProcesses.status, states: ["queued", "completed", "failed"] },
    conflict: () => m`Bulk process ${id} is processing; delete it once it has finished`,
  });
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
  const ctx = jobCtx(deps, "sweep-bulk-processes");
  const now = deps.clock.now();
  const stuckBefore = new Date(now.getTime() - STUCK_AFTER_MINUTES * 60_000).toISOString();
  const receiptsBefore = new Date(now.getTime() - RECEIPTS_KEPT_DAYS * 86_400_000).toISOString();
  // The job has no request: the error is written in each process's own language.
  const stopped = m`Stopped without finishing within ${STUCK_AFTER_MINUTES} minutes; queue it again`;
  const errorsIn = (language: Language) => JSON.stringify([{ row: 0, message: stopped.render(language) }]);
  const errors = sql`CASE ${bulkProcesses.language} WHEN 'es' THEN ${errorsIn("es")} ELSE ${errorsIn("en")} END`;
  const stuck = and(eq(bulkProcesses.status, "processing"), lt(bulkProcesses.startedAt, stuckBefore));
  const set = {
    status: "failed" as const,
    errors,
    finishedAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  // Every school's processes: the job has no school, so the accessor's scope does not apply.
  const [audit, update] = BulkProcesses.updateEverySchool(ctx, stuck, set, "fail");
  const [, failed, pruned] = await commit(ctx, [
    audit,
    update.returning({ id: bulkProcesses.id }),
    deps.db
      .delete(queueReceipts)
      .where(lt(queueReceipts.createdAt, receiptsBefore))
      .returning({ key: queueReceipts.key }),
  ]);
  return `${failed.length} stuck bulk processes failed, ${pruned.length} queue receipts pruned`;
}
