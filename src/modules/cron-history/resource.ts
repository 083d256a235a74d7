/**
 * Cron history: one row per scheduled job run, written by the cron
 * dispatcher (src/jobs/scheduled.ts). Platform data: jobs sweep every school. Newest first.
 *
 * The super-admin may also record a run by hand (a job run outside the dispatcher), correct one
 * and delete one: never a row whose job is running (409), which only the dispatcher finishes, and
 * never as running (a hand-made row records a run that ended).
 */
import { z } from "@hono/zod-openapi";
import { CronHistory, cronHistory } from "../../db/schema/jobs";
import { eq } from "../../db/sql";
import { dateTime } from "../../lib/dates";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { text } from "../../lib/text";
import { permissions } from "./permissions";

const resource = defineResource({
  name: "cronHistory",
  plural: "cronHistories",
  label: m`Cron run`,
  path: "/api/v1/cron-history",
  tag: "Operations",
  scope: "platform",
  data: CronHistory,
  record: RecordBase.extend({
    cron: z.string().openapi({ example: "*/5 * * * *", description: "The cron expression that ran (UTC)" }),
    job: z.string().openapi({ example: "sweep-bulk-processes", description: "The job's name" }),
    status: z
      .enum(cronHistory.status.enumValues)
      .openapi({ description: "running, then completed or failed (detail says why)" }),
    startedAt: z.iso.datetime().openapi({ description: "When the run started" }),
    finishedAt: z.iso.datetime().nullable().openapi({ description: "When it ended; null while running" }),
    detail: z.string().nullable().openapi({ description: "What the run did, or why it failed" }),
  }),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    cron: row.cron,
    job: row.job,
    status: row.status,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    detail: row.detail,
  }),
});

export const listCronHistories = resource.list({
  access: permissions.read,
  filters: {
    job: {
      schema: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,60}$/, zodMessage(m`Expected a job name like sweep-bulk-processes`))
        .optional()
        .openapi({ description: "Only runs of this job" }),
      where: (_ctx, v: string) => eq(cronHistory.job, v),
      example: "sweep-bulk-processes",
    },
  },
  defaultOrder: [
    { by: cronHistory.startedAt, desc: true },
    { by: cronHistory.id, desc: true },
  ],
  summary: "List scheduled runs, newest first",
});

export const getCronHistory = resource.get({ access: permissions.read, summary: "Get a scheduled run by id" });

const Ended = z
  .enum(["completed", "failed"])
  .openapi({ description: "A run that ended (running is the dispatcher's alone)" });
const JobName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,60}$/, zodMessage(m`Expected a job name like sweep-bulk-processes`))
  .openapi({ example: "sweep-bulk-processes", description: "The job's name, as the dispatcher records it" });
const Cron = z
  .string()
  .regex(/^[0-9*,/ -]{9,60}$/, zodMessage(m`Expected a cron expression like */5 * * * *`))
  .openapi({ example: "*/5 * * * *", description: "The cron expression the run was for (UTC)" });
/** Not running: the dispatcher owns a running row until it ends. */
const ended = { column: cronHistory.status, states: ["completed", "failed"] } as const;
const whileRunning =
  ({ id }: { id: number }) =>
  () =>
    m`Cron run ${id} is running; only the dispatcher ends it`;

export const createCronHistory = resource.create({
  access: permissions.write,
  input: z.object({
    cron: Cron,
    job: JobName,
    status: Ended,
    startedAt: dateTime("When the run started", "2026-11-23T12:00:00Z"),
    finishedAt: dateTime("When it ended; default: startedAt", "2026-11-23T12:00:05Z").optional(),
    detail: text({ max: 2000 }).optional(),
  }),
  values: (_ctx, { body }) => ({ ...body, finishedAt: body.finishedAt ?? body.startedAt, detail: body.detail ?? null }),
  summary: "Record a scheduled run by hand (super-admin)",
});

export const updateCronHistory = resource.update({
  access: permissions.write,
  input: z.object({
    status: Ended.optional(),
    finishedAt: dateTime("When it ended", "2026-11-23T12:00:05Z").optional(),
    detail: text({ max: 2000 }).nullable().optional(),
  }),
  from: ended,
  conflict: whileRunning,
  summary: "Correct a scheduled run that is not running (super-admin)",
});

export const deleteCronHistory = resource.delete({
  access: permissions.write,
  from: ended,
  conflict: whileRunning,
  errors: [409],
  summary: "Delete a scheduled run that is not running (super-admin)",
});
