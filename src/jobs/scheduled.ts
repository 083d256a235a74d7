/**
 * The cron dispatcher. Cron Triggers are UTC and best-effort: every job is a sweep that is safe to
 * run twice, late, or not at all for a while. Jobs come from the module registry; each run writes
 * its cron history row.
 */
import { eq } from "drizzle-orm";
import type { Deps } from "../deps";
import { errorFields, log } from "../lib/log";
import type { Job } from "../lib/module";
import { MODULES } from "../modules";
import { cronHistory } from "./schema";

/** The jobs of a cron expression (an own-key lookup: the expression comes from the runtime). */
export function jobsFor(cron: string): Job[] {
  return MODULES.flatMap((m) => m.jobs ?? []).filter((job) => job.cron === cron);
}

export async function runScheduled(deps: Deps, cron: string): Promise<void> {
  for (const job of jobsFor(cron)) {
    const startedAt = deps.clock.now().toISOString();
    const [row] = await deps.db
      .insert(cronHistory)
      .values({ cron, job: job.name, status: "running", startedAt, createdAt: startedAt, updatedAt: startedAt })
      .returning({ id: cronHistory.id });
    let status: "completed" | "failed" = "completed";
    let detail: string | undefined;
    try {
      detail = (await job.run(deps)) || undefined;
    } catch (err) {
      status = "failed";
      detail = err instanceof Error ? err.message : String(err);
      log.error("cron job failed", { cron, job: job.name, ...errorFields(err) });
    }
    const finishedAt = deps.clock.now().toISOString();
    if (row) {
      await deps.db
        .update(cronHistory)
        .set({ status, detail, finishedAt, updatedAt: finishedAt })
        .where(eq(cronHistory.id, row.id));
    }
  }
}
