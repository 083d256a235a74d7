/**
 * Cron history: one row per scheduled job run, written by the cron
 * dispatcher (src/jobs/scheduled.ts). Platform data: jobs sweep every school. Newest first.
 */
import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { CronHistory, cronHistory } from "../../db/schema/jobs";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
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
    cron: z.string().openapi({ example: "*/5 * * * *" }),
    job: z.string().openapi({ example: "sweep-bulk-processes" }),
    status: z.enum(cronHistory.status.enumValues),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
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
