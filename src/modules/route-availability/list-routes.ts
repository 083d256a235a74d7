/**
 * The final list's operations: a route's changes, its final status on a date (JSON, with what
 * changed since a version), and the PDFs of one route and of every running route of the school.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routes,
} from "../../db/schema/transport";
import { desc, eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { notFound } from "../../lib/errors";
import { m, verbatim } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { recordId } from "../../lib/params";
import { loadPdfData } from "../../lib/pdf-lib/binary-trie";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { RouteOffReason, routeOffMessage } from "../school-schedule/api";
import { changes } from "./changes";
import { drivenBy, schoolToday } from "./day";
import { readFinalLists } from "./final-list";
import { permissions } from "./permissions";

const RouteParams = z.object({
  routeId: recordId().openapi({
    param: { name: "routeId", in: "path" },
    example: 1,
    description: "A route of the school",
  }),
});
const DateQuery = { date: schoolDate("The date (default: the school's today)", "2027-03-01").optional() };

const ChangesPage = pageOf(changes.record, "RouteAvailabilityStudentByRoutePage");
const byRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-availability-student/route/{routeId}",
  tag: "Transport",
  operationId: "listRouteAvailabilityStudentsByRoute",
  summary: "A route's changes (students joining or away), newest date first, or on one date (paginated)",
  access: permissions.listRead,
  module: "transport",
  request: {
    params: RouteParams,
    query: z.strictObject({
      ...PageQuery.shape,
      date: schoolDate("Only this date's changes", "2027-03-01").optional(),
    }),
  },
  responses: { 200: json(ChangesPage, "A page of the route's changes") },
});

/**
 * A route's changes; a route the caller may not read (another school's, unknown, or for a driver one
 * they do not drive) is a 404, as it is on the route's other operations. One batch: the route, the
 * page and its count.
 */
export async function listRouteAvailabilityStudentsByRoute(ctx: SchoolCtx, { params, query }: InputOf<typeof byRoute>) {
  const where = [
    eq(routeAvailabilities.routeId, params.routeId),
    query.date === undefined ? undefined : eq(routeAvailabilities.date, query.date),
  ];
  const batch = new Batch(ctx);
  const route = batch.read(
    Routes.select(ctx, { id: routes.id }).where(eq(routes.id, params.routeId), drivenBy(ctx, routes.id)).limit(1),
  );
  const rows = batch.read(
    changes
      .select(ctx)
      .where(...where)
      .orderBy(desc(routeAvailabilities.date), desc(routeAvailabilityStudents.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(
    RouteAvailabilityStudents.select(ctx)
      .join(RouteAvailabilities, eq(routeAvailabilities.id, routeAvailabilityStudents.routeAvailabilityId))
      .where(...where)
      .count(),
  );
  const results = await batch.commit();
  if (results.get(route).length === 0) throw notFound(m`Route ${params.routeId} not found`);
  return new Listing(
    results.get(rows).map((r) => changes.toRecord(ctx, r)),
    results.get(total)[0]?.n ?? 0,
    query,
  );
}
export const listRouteAvailabilityStudentsByRouteOperation = operation(byRoute, listRouteAvailabilityStudentsByRoute);

const Receiver = z.object({
  name: z.string().openapi({ description: "Their name" }),
  relationship: z.string(),
  kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian, or an approved trusted person" }),
});
const Student = z.object({
  studentId: z.number().int(),
  firstName: z.string(),
  lastName: z.string(),
  stopId: z.number().int().nullable(),
  stopName: z.string().nullable(),
  stopPosition: z.number().int().nullable(),
  stopTime: z.string().nullable().openapi({ description: "School-local HH:mm" }),
  status: z
    .enum(["riding", "away", "joining"])
    .openapi({ description: "riding (as usual), away (not that day) or joining (only that day)" }),
  reason: z.string().nullable().openapi({ description: "Why away or joining" }),
  receivers: z
    .array(Receiver)
    .optional()
    .openapi({ description: "On routes home: who may receive the child at the stop" }),
});
const FinalStatus = z
  .object({
    routeId: z.number().int(),
    routeName: z.string(),
    direction: z.enum(["to_school", "home"]),
    vehicle: z.string().openapi({ description: "The vehicle's name" }),
    driverName: z.string().nullable(),
    date: z.iso.date().openapi({ description: "The school-local day" }),
    weekday: z.number().int(),
    runs: z.boolean().openapi({
      description:
        "False on a day that is not a school day of the route's levels, or not one of its weekdays (then no students)",
    }),
    cancelled: z.boolean().openapi({
      description:
        "The school cancelled the route that day: it does not run; its riders are listed for the office to arrange their way home",
    }),
    holiday: z.boolean().openapi({ description: "A holiday cycle covers the date" }),
    reason: RouteOffReason,
    version: z.number().int().openapi({ description: "The list's version: it grows with each change after a print" }),
    printedVersion: z.number().int().nullable().openapi({ description: "The version last printed; null: never" }),
    seats: z.number().int().openapi({ description: "The day's seats (override or vehicle)" }),
    riders: z.number().int().openapi({ description: "Students riding that day" }),
    available: z.number().int().openapi({ description: "Seats left" }),
    students: z.array(Student).openapi({ description: "The riders, in stop order" }),
    changes: z
      .array(
        z.object({
          version: z.number().int().openapi({ description: "The version the change belongs to" }),
          studentId: z.number().int().nullable(),
          change: z.string().openapi({ description: "added, removed, stop, away, back" }),
          detail: z.string().nullable().openapi({ description: "What changed, in words" }),
          at: z.string().openapi({ description: "When (ISO 8601)" }),
        }),
      )
      .optional()
      .openapi({ description: "With sinceVersion: what changed after that version" }),
  })
  .openapi("RouteFinalStatus");

const finalStatus = defineRoute({
  method: "get",
  path: "/api/v1/route-availability-student/route/{routeId}/final-status",
  tag: "Transport",
  operationId: "getRouteFinalStatus",
  summary: "A route's final list on a date: riders by stop, who is away or joins and why, who may receive them",
  access: permissions.listRead,
  module: "transport",
  request: {
    params: RouteParams,
    query: z.strictObject({
      ...DateQuery,
      sinceVersion: z.coerce.number().int().min(0).max(1_000_000).optional().openapi({
        type: "integer",
        minimum: 0,
        maximum: 1_000_000,
        description: "Also answer what changed after this version",
      }),
      print: z
        .enum(["true", "false"])
        .optional()
        .openapi({ description: "true: this read is the printed copy (the next change starts a new version)" }),
    }),
  },
  responses: { 200: json(FinalStatus, "The route's final list") },
});

export async function getRouteFinalStatus(ctx: SchoolCtx, { params, query }: InputOf<typeof finalStatus>) {
  const date = query.date ?? (await schoolToday(ctx));
  const read = await readFinalLists(ctx, { routeId: params.routeId }, date, {
    print: query.print === "true",
    since: query.sinceVersion,
  });
  const [list] = read.lists;
  if (!list) throw notFound(m`Route ${params.routeId} not found`);
  return { ...list, ...(read.changes ? { changes: read.changes } : {}) };
}
export const getRouteFinalStatusOperation = operation(finalStatus, getRouteFinalStatus);

const PDF = { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } };

/**
 * The PDF writer (pdf-lib, fontkit) loads with the first PDF asked for, not with the module; the
 * Unicode data its shapers read first, from the static assets (src/lib/pdf-lib/binary-trie.ts).
 */
async function pdfWriter(ctx: SchoolCtx) {
  await loadPdfData(ctx.deps.assets);
  return import("./list-pdf");
}

const routePdf = defineRoute({
  method: "get",
  path: "/api/v1/route-availability-student/route/{routeId}/final-status/pdf",
  tag: "Transport",
  operationId: "downloadRouteFinalStatusPdf",
  summary: "Download a route's final list on a date as a PDF (the printed version)",
  access: permissions.listRead,
  module: "transport",
  request: { params: RouteParams, query: z.strictObject(DateQuery) },
  responses: { 200: { description: "The PDF", content: PDF } },
});

export async function downloadRouteFinalStatusPdf(ctx: SchoolCtx, { params, query }: InputOf<typeof routePdf>) {
  const date = query.date ?? (await schoolToday(ctx));
  const read = await readFinalLists(ctx, { routeId: params.routeId }, date, { print: true });
  const [list] = read.lists;
  if (!list) throw notFound(m`Route ${params.routeId} not found`);
  const empty = list.reason ? m`${routeOffMessage(list.reason, list.routeName, date)}.` : verbatim("");
  const { listsPdf, pdfResponse } = await pdfWriter(ctx);
  const bytes = await listsPdf(ctx, read.school, date, list.runs ? [list] : [], empty);
  return pdfResponse(bytes, m`route-${list.routeId}-${date}.pdf`);
}
export const downloadRouteFinalStatusPdfOperation = operation(routePdf, downloadRouteFinalStatusPdf);

const allPdf = defineRoute({
  method: "get",
  path: "/api/v1/route-availability-student/final-status/pdf",
  tag: "Transport",
  operationId: "downloadAllRoutesFinalStatusPdf",
  summary: "Download the final lists of every route running on a date as one PDF (a section per route)",
  access: permissions.listRead,
  module: "transport",
  request: { query: z.strictObject(DateQuery) },
  responses: { 200: { description: "The PDF", content: PDF } },
});

export async function downloadAllRoutesFinalStatusPdf(ctx: SchoolCtx, { query }: InputOf<typeof allPdf>) {
  const date = query.date ?? (await schoolToday(ctx));
  const read = await readFinalLists(ctx, { running: true }, date, { print: true });
  const empty =
    read.off === "holiday"
      ? m`${date} is a school holiday: no route runs.`
      : read.off
        ? m`${date} is not a school day: no route runs.`
        : m`No route runs on ${date}.`;
  const { listsPdf, pdfResponse } = await pdfWriter(ctx);
  const bytes = await listsPdf(ctx, read.school, date, read.lists, empty);
  return pdfResponse(bytes, m`routes-${date}.pdf`);
}
export const downloadAllRoutesFinalStatusPdfOperation = operation(allPdf, downloadAllRoutesFinalStatusPdf);
