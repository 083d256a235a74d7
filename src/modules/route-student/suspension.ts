/**
 * A rider's suspension: `PUT /api/v1/route-student/{id}/suspend` sets one (from, until, both
 * included, and a reason; a new one replaces the one there was), `PATCH .../cancel-suspension`
 * removes it. Both are audited actions answering the rider. While suspended, a rider keeps their
 * route, stop and weekdays (their seat on those days is free for the daily lists).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { routeStudents } from "../../db/schema/transport";
import { eq, isNotNull } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { ridersChanged } from "../route-availability/api";
import { schoolToday } from "../transport/api";
import { permissions } from "./permissions";
import { resource, rider } from "./record";

const SuspendBody = z
  .strictObject({
    from: schoolDate("First day suspended (school-local)", "2026-12-01"),
    until: schoolDate("Last day suspended, not before `from`", "2026-12-12"),
    reason: text({ max: 500 }).openapi({ example: "Broken leg" }),
  })
  .refine((b) => b.until >= b.from, {
    path: ["until"],
    ...zodMessage(m`The suspension must not end before it starts`),
  });

const suspendRoute = defineRoute({
  method: "put",
  path: "/api/v1/route-student/{id}/suspend",
  tag: "Transport",
  operationId: "suspendRouteStudent",
  summary: "Suspend a rider for a date range, with a reason",
  description:
    "Both dates are included and school-local. A suspension replaces the one the rider had. 400 when it ends " +
    "before it starts; 422 when it ends before the school's today.",
  access: permissions.write,
  module: "transport",
  audit: "route-student",
  errors: [422],
  examples: { 422: "The suspension would end on 2026-11-30, before today (2026-12-01)" },
  request: { params: IdParams, body: jsonBody(SuspendBody, "RouteStudentSuspend") },
  responses: { 200: json(resource.record, "The rider, suspended") },
});

export async function suspend(ctx: SchoolCtx, { params, body }: InputOf<typeof suspendRoute>) {
  const today = await schoolToday(ctx);
  if (body.until < today) throw unprocessable(m`The suspension would end on ${body.until}, before today (${today})`);
  return resource.changeAndRead(ctx, params.id, {
    action: "suspend",
    set: { suspendedFrom: body.from, suspendedUntil: body.until, suspensionReason: body.reason },
    // The lists already made for the suspension's days record the rider away.
    also: ridersChanged(ctx, rider(ctx, params.id), "away", body.reason, "suspension"),
  });
}

export const suspendRouteStudent = operation(suspendRoute, suspend);

const cancelRoute = defineRoute({
  method: "patch",
  path: "/api/v1/route-student/{id}/cancel-suspension",
  tag: "Transport",
  operationId: "cancelSuspensionRouteStudent",
  summary: "Cancel a rider's suspension",
  description: "409 when the rider is not suspended.",
  access: permissions.write,
  module: "transport",
  audit: "route-student",
  errors: [409],
  examples: { 409: "Route student 42 is not suspended" },
  request: { params: IdParams },
  responses: { 200: json(resource.record, "The rider, no longer suspended") },
});

/** Clears the suspension: one guarded UPDATE (only a suspended rider), its audit row, the rider read back. */
export async function cancelSuspension(ctx: SchoolCtx, { params }: InputOf<typeof cancelRoute>) {
  const { id } = params;
  const batch = new Batch(ctx).add(
    // Read while the suspension's dates are still on the rider: those days' lists record them back.
    ...ridersChanged(ctx, rider(ctx, id), "back", null, "suspension"),
    ...resource.writes.update(
      ctx,
      id,
      { suspendedFrom: null, suspendedUntil: null, suspensionReason: null },
      "cancel-suspension",
      null,
      isNotNull(routeStudents.suspendedFrom),
    ),
  );
  const after = batch.read(resource.readOne(ctx, id));
  try {
    const [row] = (await batch.commit()).get(after);
    if (!row) throw notFound(m`Route student ${id} not found`);
    return resource.toRecord(ctx, row);
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const here = await resource
      .select(ctx, "write")
      .where(resource.scoped(ctx, eq(routeStudents.id, id), "write"))
      .first();
    if (!here) throw notFound(m`Route student ${id} not found`);
    throw conflict(m`Route student ${id} is not suspended`);
  }
}

export const cancelSuspensionRouteStudent = operation(cancelRoute, cancelSuspension);
