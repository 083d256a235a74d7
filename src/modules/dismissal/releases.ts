/**
 * The releases recorded: `GET /api/v1/dismissal/release?date=&studentId=` (paginated, the latest
 * first) and its Excel download `GET /api/v1/dismissal/release/export`, for holders of
 * `dismissal.read`.
 */

import { DismissalReleases, dismissalReleases } from "../../db/schema/dismissal";
import { eq } from "../../db/sql";
import type { Ctx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { m } from "../../lib/message";
import { idFilter } from "../../lib/params";
import { defineResource, type Filters, RecordBase } from "../../lib/resource";
import { permissions } from "./permissions";
import { ReleaseRecord, releaseRecord } from "./release";

const releases = defineResource({
  name: "dismissalRelease",
  plural: "dismissalReleases",
  label: m`Release`,
  path: "/api/v1/dismissal/release",
  tag: "Transport",
  scope: "school",
  module: "dismissal",
  data: DismissalReleases,
  record: RecordBase.pick({ id: true }).extend(ReleaseRecord.shape).openapi("DismissalReleaseListed"),
  toRecord: (_ctx, row) => releaseRecord(row),
});

const LATEST = [
  { by: dismissalReleases.releasedAt, desc: true },
  { by: dismissalReleases.id, desc: true },
];

export const listReleases = releases.list({
  access: permissions.read,
  filters: {
    date: {
      schema: schoolDate("Only the releases of this school-local date", "2026-11-23").optional(),
      where: (_ctx: Ctx, v: string) => eq(dismissalReleases.date, v),
      example: "2026-11-23",
    },
    studentId: {
      schema: idFilter("Only this child's releases"),
      where: (_ctx: Ctx, v: number) => eq(dismissalReleases.studentId, v),
      example: "1",
    },
  } satisfies Filters,
  defaultOrder: LATEST,
  summary: "The releases recorded (paginated), the latest first",
});

export const exportReleases = releases.export({
  access: permissions.read,
  list: listReleases,
  filename: m`releases.xlsx`,
  sheet: m`Releases`,
  file: "An .xlsx of the releases the list's filters keep",
  columns: [
    m`Id`,
    m`Date`,
    m`Student id`,
    m`Collected by`,
    m`Collector kind`,
    m`How`,
    m`Gate`,
    m`Released at`,
    m`Device time`,
    m`Reason`,
    m`Identity check`,
    m`Flagged`,
  ],
  cells: (_ctx, r) => [
    r.id,
    r.date,
    r.studentId,
    r.collectorName,
    r.collectorKind,
    r.method,
    r.gate ?? "",
    r.releasedAt,
    r.deviceReleasedAt ?? "",
    r.reason ?? r.flagReason ?? "",
    r.identityCheck ?? "",
    r.flagged ? "yes" : "",
  ],
});
