/**
 * The cron dispatcher. Cron Triggers are UTC and best-effort: every job is a sweep that is safe to
 * run twice, late, or not at all for a while. Jobs come from the module registry; each run writes
 * its cron history row.
 */
import { inSession } from "../db/client";
import { cronHistory } from "../db/schema/jobs";
import { databases, PLATFORM } from "../db/shards";
import { eq } from "../db/sql";
import { failureDetail, failureFields } from "../db/transient";
import type { Deps } from "../deps";
import { log } from "../lib/log";
import type { Job } from "../lib/module";
import { MODULES } from "../modules";

/** The jobs of a cron expression (an own-key lookup: the expression comes from the runtime). */
export function jobsFor(cron: string): Job[] {
  return MODULES.flatMap((m) => m.jobs ?? []).filter((job) => job.cron === cron);
}

/**
 * Runs each job of `cron` and records the run. A job's failure is recorded with its reason (a
 * database hiccup as the hiccup, never the failed query); a run whose start could not be recorded
 * still runs (every job is a sweep, safe to run), and is recorded once it ends; if even that cannot
 * be written, the log has it. One job's failure never keeps the others from running. The run's
 * queries are one D1 session from the primary (jobs write, then read what they wrote).
 */
export async function runScheduled(deps: Deps, cron: string): Promise<void> {
  // Once per database, over the schools it holds (docs/scaling.md "Shards"): the platform's first,
  // then each shard's, each run recorded in that database's cron history.
  for (const [name, db] of databases(deps)) {
    const over: Deps = name === PLATFORM ? deps : { ...deps, db, platform: deps.db };
    await inSession(db, "first-primary", () => runJobs(over, cron));
  }
}

async function runJobs(deps: Deps, cron: string): Promise<void> {
  for (const job of jobsFor(cron)) {
    const startedAt = deps.clock.now().toISOString();
    let id: number | undefined;
    try {
      const [row] = await deps.db
        .insert(cronHistory)
        .values({ cron, job: job.name, status: "running", startedAt, createdAt: startedAt, updatedAt: startedAt })
        .returning({ id: cronHistory.id });
      id = row?.id;
    } catch (err) {
      log.error("cron run not recorded at its start; running it anyway", {
        cron,
        job: job.name,
        ...failureFields(err),
      });
    }
    let status: "completed" | "failed" = "completed";
    let detail: string | undefined;
    try {
      detail = (await job.run(deps)) || undefined;
    } catch (err) {
      status = "failed";
      detail = failureDetail(err);
      log.error("cron job failed", { cron, job: job.name, ...failureFields(err) });
    }
    const finishedAt = deps.clock.now().toISOString();
    try {
      if (id !== undefined) {
        await deps.db
          .update(cronHistory)
          .set({ status, detail, finishedAt, updatedAt: finishedAt })
          .where(eq(cronHistory.id, id));
      } else {
        await deps.db.insert(cronHistory).values({
          cron,
          job: job.name,
          status,
          detail,
          startedAt,
          finishedAt,
          createdAt: startedAt,
          updatedAt: finishedAt,
        });
      }
    } catch (err) {
      log.error("cron run not recorded", { cron, job: job.name, status, detail, ...failureFields(err) });
    }
  }
}
