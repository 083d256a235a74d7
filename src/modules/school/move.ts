/**
 * Moving a school to another database (docs/scaling.md "Moving a school"): the platform's
 * command, `POST /api/v1/school/{id}/move`, synchronous (the move is src/db/move.ts), and the read
 * of where a school is and whether a move holds it paused, `GET /api/v1/school/{id}/shard`.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { moveSchool, PAUSE_LEASE_MS, shardState } from "../../db/move";
import { Schools, schools } from "../../db/schema/core";
import { MAP_TTL_MS } from "../../db/shards";
import { eq, sql } from "../../db/sql";
import type { Ctx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import { permissions } from "./permissions";
import { schoolResource } from "./resource";

const Binding = z
  .string()
  .regex(/^DB(_SHARD_[1-9][0-9]{0,3})?$/)
  .openapi({
    example: "DB_SHARD_1",
    description: "A database's binding: `DB` (the platform's, shard 0) or `DB_SHARD_<n>`",
  });

const rowCounts = (what: string) =>
  z.record(z.string(), z.number().int().min(0)).openapi({ description: what, example: { student: 120, family: 80 } });

const SchoolMove = z
  .object({
    schoolId: z.number().int(),
    source: Binding.openapi({ description: "The database that held the school" }),
    target: Binding.openapi({ description: "The database that holds it now" }),
    moved: z.boolean().openapi({ description: "False when the school was there already: nothing was copied" }),
    rows: rowCounts("The school's rows moved, per table"),
    anchors: rowCounts("Platform rows the school's rows point at, copied to the target (none when it is DB)"),
  })
  .openapi("SchoolMove");

const SchoolShard = z
  .object({
    schoolId: z.number().int(),
    binding: Binding.openapi({ description: "The database that holds the school's rows" }),
    pausedUntil: z.string().datetime().nullable().openapi({
      description: "While a move holds the school: its writes answer 503 until then (or until the move ends)",
    }),
    movingTo: Binding.nullable().openapi({ description: "The database the move under way copies the school to" }),
  })
  .openapi("SchoolShard");

/** Whether the caller reaches school `id` for the platform's writes (404 if not, as every other school's record). */
async function reach(ctx: Ctx, id: number) {
  const [row] = await Schools.select(ctx, { id: schools.id })
    .where(schoolResource.scoped(ctx, eq(schools.id, id), "write"))
    .limit(1)
    .all();
  if (!row) throw notFound(m`School ${id} not found`);
}

/** The move, then its audit row (written once the school is unpaused, in the caller's database). */
async function move(ctx: Ctx, id: number, to: string) {
  await reach(ctx, id);
  const report = await moveSchool(ctx.deps, id, to);
  if (report.moved) {
    await new Batch(ctx)
      .add(
        Schools.auditRows(ctx, sql`FROM school WHERE school.id = ${id}`, {
          action: "move",
          changes: { database: { old: report.source, new: report.target } },
        }),
      )
      .commit();
  }
  return report;
}

export const moveSchoolRoute = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/school/{id}/move",
    tag: "Schools",
    operationId: "moveSchool",
    summary: "Move a school's rows to another database (platform: school.write)",
    description:
      "Synchronous: pauses the school's writes (they answer 503 with Retry-After; its reads go on, and other " +
      `schools are unaffected), waits ${MAP_TTL_MS / 1000} s for every instance to see the pause, copies every row of the ` +
      "school with its ids (and the platform rows they point at) to `to`, checks the rows per table, switches the " +
      `shard map, waits ${MAP_TTL_MS / 1000} s again, deletes the rows from where they were, and lifts the pause. ` +
      "A failure before the switch deletes the partial copy and lifts the pause (500: the school stays where it was). " +
      "Run again after a failure, it starts over; on a school already on `to` it does nothing (`moved: false`). " +
      `The pause is a lease of ${PAUSE_LEASE_MS / 60_000} minutes, renewed while the copy runs. npm run school:move calls it.`,
    access: permissions.write,
    scope: "platform",
    audit: "school",
    errors: [409, 422],
    examples: {
      409: "School 42 is being moved to DB_SHARD_2; wait until that move ends",
      422: "There is no database bound as DB_SHARD_9 (DB_SHARD_1, DB)",
    },
    request: {
      params: IdParams,
      body: jsonBody(
        z.strictObject({ to: Binding.openapi({ description: "The database to move the school to" }) }),
        "SchoolMoveRequest",
      ),
    },
    responses: { 200: json(SchoolMove, "What was moved") },
  }),
  (ctx, { params, body }) => move(ctx, params.id, body.to),
);

export const getSchoolShard = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/school/{id}/shard",
    tag: "Schools",
    operationId: "getSchoolShard",
    summary: "Which database holds a school, and the move under way (platform: school.write)",
    access: permissions.write,
    scope: "platform",
    request: { params: IdParams },
    responses: { 200: json(SchoolShard, "Where the school is") },
  }),
  async (ctx, { params }) => {
    await reach(ctx, params.id);
    return shardState(ctx.deps, params.id);
  },
);
