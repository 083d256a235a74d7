/**
 * Cron sweeps. Cron Triggers are UTC, at-most-best-effort: every job is a sweep that is safe to run
 * twice, late, or not at all for a while. Each run writes its cron history row.
 */
import { eq } from "drizzle-orm";
import type { Deps } from "../deps";
import { purgeExpired } from "../modules/auth/service";
import { sweepBulkProcesses } from "../modules/bulk-process/service";
import { cronHistory } from "./schema";

type Job = { name: string; run: (deps: Deps) => Promise<string | undefined> };

/** Jobs per cron expression of wrangler.toml. */
export const SCHEDULE: Record<string, Job[]> = {
  "*/5 * * * *": [
    {
      name: "purge-expired-auth",
      run: async (deps) => {
        await purgeExpired(deps);
        return "expired codes and refresh tokens removed";
      },
    },
    { name: "sweep-bulk-processes", run: sweepBulkProcesses },
  ],
  "0 2 * * *": [],
};

export async function runScheduled(deps: Deps, cron: string): Promise<void> {
  const jobs = Object.hasOwn(SCHEDULE, cron) ? (SCHEDULE[cron] ?? []) : []; // own keys only: not "constructor"
  for (const job of jobs) {
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
      console.error(JSON.stringify({ level: "error", cron, job: job.name, message: detail }));
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
