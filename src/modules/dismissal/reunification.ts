/**
 * Reunification (an emergency): `POST /api/v1/dismissal/reunification {reason}` switches the
 * school's day into it (every guardian is told at once, whatever their preferences and quiet
 * hours); from then on each release needs an identity check recorded; `GET
 * .../reunification/report` accounts for every child (released to whom and when, still at school,
 * absent); `DELETE /api/v1/dismissal/reunification` ends it.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { DismissalReunifications, dismissalReunifications } from "../../db/schema/dismissal";
import { desc, eq, isNull } from "../../db/sql";
import { GuardFailed, guard } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { notify } from "../notification/api";
import { schoolToday } from "../transport/api";
import { eventOf } from "./events";
import { permissions } from "./permissions";
import { readDay } from "./plan";

const PATH = "/api/v1/dismissal/reunification";

const Reunification = z
  .object({
    id: z.number().int().openapi({ description: "The reunification's id" }),
    date: z.iso.date().openapi({ description: "The school-local date it started" }),
    reason: z.string().openapi({ description: "Why" }),
    startedAt: z.string().openapi({ description: "When it started (ISO 8601)" }),
    startedBy: z.number().int().nullable().openapi({ description: "Who started it" }),
    endedAt: z.string().nullable().openapi({ description: "When it ended (ISO 8601); null while open" }),
  })
  .openapi("DismissalReunification");

const startRoute = defineRoute({
  method: "post",
  path: PATH,
  tag: "Transport",
  operationId: "startDismissalReunification",
  summary: "Start a reunification (emergency): every guardian is told; each release then needs an identity check",
  access: permissions.manage,
  module: "dismissal",
  audit: "dismissal-reunification",
  errors: [409],
  examples: { 409: "The school is already in a reunification (12)" },
  request: {
    body: jsonBody(
      z.strictObject({
        reason: text({ max: 500 }).openapi({ example: "Gas leak: evacuation to the sports field", description: "Why" }),
      }),
      "DismissalReunificationBody",
    ),
  },
  responses: { 201: json(Reunification, "The reunification") },
});

const endRoute = defineRoute({
  method: "delete",
  path: PATH,
  tag: "Transport",
  operationId: "endDismissalReunification",
  summary: "End the school's reunification",
  access: permissions.manage,
  module: "dismissal",
  audit: "dismissal-reunification",
  errors: [404],
  examples: { 404: "The school is in no reunification" },
  responses: { 204: noContent },
});

const ReportChild = z
  .object({
    studentId: z.number().int().openapi({ description: "The child's id" }),
    firstName: z.string().openapi({ description: "The child's first name" }),
    lastName: z.string().openapi({ description: "The child's last name" }),
    accounted: z.enum(["released", "at-school", "absent", "not-at-school"]).openapi({
      description:
        "released (to whom and when below); at-school (still here); absent; not-at-school (no school for them that day)",
    }),
    release: z
      .object({
        collector: z.string().openapi({ description: "Who took the child" }),
        releasedAt: z.string().openapi({ description: "When (ISO 8601)" }),
        identityCheck: z.string().nullable().openapi({ description: "The identity check recorded" }),
        gate: z.string().nullable().openapi({ description: "Where" }),
      })
      .nullable()
      .openapi({ description: "The release, if released" }),
  })
  .openapi("DismissalReunificationChild");

const Report = z
  .object({
    reunification: orNull(Reunification).openapi({ description: "The open reunification, or the day's last" }),
    date: z.iso.date().openapi({ description: "The school-local date reported" }),
    counts: z
      .object({
        released: z.number().int().openapi({ description: "Children released" }),
        atSchool: z.number().int().openapi({ description: "Children still at school" }),
        absent: z.number().int().openapi({ description: "Children absent" }),
        notAtSchool: z.number().int().openapi({ description: "Children without school that day" }),
      })
      .openapi({ description: "How many of each" }),
    children: z.array(ReportChild).openapi({ description: "Every child, by last name" }),
  })
  .openapi("DismissalReunificationReport");

const reportRoute = defineRoute({
  method: "get",
  path: `${PATH}/report`,
  tag: "Transport",
  operationId: "getDismissalReunificationReport",
  summary: "Every child accounted for: released to whom and when, still at school, absent",
  access: permissions.read,
  module: "dismissal",
  responses: { 200: json(Report, "The report") },
});

type Row = typeof dismissalReunifications.$inferSelect;
const recordOf = (r: Row) => ({
  id: r.id,
  date: r.date,
  reason: r.reason,
  startedAt: r.createdAt,
  startedBy: r.startedBy,
  endedAt: r.endedAt,
});

export async function startReunification(ctx: SchoolCtx, { body }: InputOf<typeof startRoute>) {
  const date = await schoolToday(ctx);
  const sending = notify(ctx, {
    category: "emergency",
    urgent: true,
    title: { en: "Emergency: reunification", es: "Emergencia: reunificación" },
    body: body.reason,
    audience: { roles: [BUILTIN_ROLES.parent.id] },
  });
  const batch = new Batch(ctx).add(
    ...DismissalReunifications.insert(ctx, { date, reason: body.reason, startedBy: ctx.userId }),
    eventOf(ctx, date, "reunification-started", null, { reason: body.reason }),
    ...sending.statements,
  );
  const made = batch.read(
    DismissalReunifications.select(ctx).where(eq(dismissalReunifications.id, DismissalReunifications.insertedId())),
  );
  const open = await DismissalReunifications.select(ctx).where(isNull(dismissalReunifications.endedAt)).first();
  if (open) throw conflictOpen(open.id);
  const [row] = (await batch.commit({ conflict: m`The school is already in a reunification` })).get(made);
  await sending.dispatch();
  if (!row) throw new Error("a reunification was not read back");
  return recordOf(row);
}

const conflictOpen = (id: number) => conflict(m`The school is already in a reunification (${id})`);

export async function endReunification(ctx: SchoolCtx): Promise<void> {
  const open = await DismissalReunifications.select(ctx).where(isNull(dismissalReunifications.endedAt)).first();
  if (!open) throw notFound(m`The school is in no reunification`);
  const now = ctx.deps.clock.now().toISOString();
  try {
    await new Batch(ctx)
      .add(
        ...DismissalReunifications.update(
          ctx,
          eq(dismissalReunifications.id, open.id),
          { endedAt: now, endedBy: ctx.userId },
          "end",
        ),
        guard(ctx.deps.db),
        eventOf(ctx, await schoolToday(ctx), "reunification-ended", null, {}),
      )
      .commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`The school is in no reunification`);
    throw err;
  }
}

export async function getReport(ctx: SchoolCtx) {
  const last = await DismissalReunifications.select(ctx)
    .orderBy(desc(dismissalReunifications.date), desc(dismissalReunifications.id))
    .limit(1)
    .first();
  const date = last && last.endedAt === null ? last.date : await schoolToday(ctx);
  const day = await readDay(ctx, date, { school: true });
  const counts = { released: 0, atSchool: 0, absent: 0, notAtSchool: 0 };
  const children = day.entries.map((e) => {
    const accounted = e.release
      ? ("released" as const)
      : e.status === "absent"
        ? ("absent" as const)
        : e.status === "no-school"
          ? ("not-at-school" as const)
          : ("at-school" as const);
    if (accounted === "released") counts.released++;
    else if (accounted === "absent") counts.absent++;
    else if (accounted === "not-at-school") counts.notAtSchool++;
    else counts.atSchool++;
    return {
      studentId: e.studentId,
      firstName: e.firstName,
      lastName: e.lastName,
      accounted,
      release: e.release
        ? {
            collector: e.release.collectorName,
            releasedAt: e.release.releasedAt,
            identityCheck: e.release.identityCheck,
            gate: e.release.gate,
          }
        : null,
    };
  });
  return { reunification: last ? recordOf(last) : null, date, counts, children };
}

export const startReunificationOperation = operation(startRoute, startReunification);
export const endReunificationOperation = operation(endRoute, endReunification);
export const getReportOperation = operation(reportRoute, getReport);
