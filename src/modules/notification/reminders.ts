/**
 * The sweep every scheduled reminder shares (a task's, an event's, a lost article's): each run takes
 * at most `perRun` of the reminders due now in every school where the module is on, oldest first,
 * and hands each to the module's `send` in its own school's job context; `send` claims it in its own
 * batch (a claim that matched nothing was taken by another run) and says what became of it.
 */
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { asc, eq, lte, sql } from "../../db/sql";
import type { Data, RecordTable } from "../../db/table";
import type { Deps } from "../../deps";
import type { AppModuleKey } from "../../lib/app-modules";
import { forEachSchool, jobCtx, type SchoolCtx } from "../../lib/context";
import { moduleOn } from "../application-module/api";

/** A reminders table: a status (`scheduled` until sent), when it is due, the record it is about. */
export type ReminderTable = RecordTable & { status: SQLiteColumn; sendAt: SQLiteColumn };

export interface ReminderSweep<T extends ReminderTable, O extends string> {
  /** The job's name (its `cron_history` rows, the audit trail's actor). */
  job: string;
  /** The module whose reminders these are: a school that switched it off hears nothing. */
  module: AppModuleKey;
  data: Data<T, SchoolCtx>;
  /** The column naming the record a reminder is about (the task, the event). */
  about: SQLiteColumn;
  /** Claims and sends one reminder in its school; what became of it. */
  send: (ctx: SchoolCtx, id: number, aboutId: number) => Promise<O>;
  /** Reminders a run takes at most: the next run takes the rest. */
  perRun?: number;
}

/** Every school's due reminders (a due index serves it: status, send_at), each sent; counts by outcome. */
export async function sweepReminders<T extends ReminderTable, O extends string>(
  deps: Deps,
  spec: ReminderSweep<T, O>,
): Promise<Map<O, number>> {
  const now = deps.clock.now().toISOString();
  const all = jobCtx(deps, spec.job);
  const t = spec.data.table;
  const due = await spec.data
    .everySchool(all, (school) => ({
      id: sql<number>`${t.id}`,
      schoolId: sql<number>`${school}`,
      about: sql<number>`${spec.about}`,
    }))
    .where(eq(t.status, "scheduled"), lte(t.sendAt, now), moduleOn(all, spec.module, spec.data.schoolOf()))
    .orderBy(asc(t.sendAt), asc(t.id))
    .limit(spec.perRun ?? 50)
    .all();
  const counts = new Map<O, number>();
  await forEachSchool(deps, spec.job, due, async (ctx, r) => {
    const outcome = await spec.send(ctx, r.id, r.about);
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  });
  return counts;
}
