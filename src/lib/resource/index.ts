/**
 * `defineResource`: one way to define a resource. It takes what a resource *is* (its table's
 * accessor, the record it answers, how it is scoped) and gives builders for what it *offers*, one
 * operation each: `list`, `export`, `get`, `create`, `update`, `delete` and `action`. Each
 * builder returns an `Operation` (route + handler, what a module registers) with its service verb
 * `run(ctx, input)`, typed from its route; an operation that is not built does not exist, in the
 * API or in the types.
 *
 * Contracts every operation keeps: every query is scoped to the current school (the accessor's
 * tenant condition) and to a parent record for nested paths; POST -> 201 with the record; PUT ->
 * 204; DELETE -> 204; an action -> 200 with the record; another school's id -> 404; a unique
 * violation -> 409; a state change from the wrong state -> 409; a business rule -> 422. Every
 * write is one batch: the change, its audit row, and any statements the operation adds.
 */
import type { z } from "@hono/zod-openapi";
import type { ColumnsOf, Fields } from "../../db/query";
import type { RecordTable } from "../../db/table";
import type { Ctx, SchoolCtx } from "../context";
import { resourceCore } from "./core";
import { listBuilders } from "./list";
import type { ResourceConfig } from "./types";
import { writeBuilders } from "./write";

export function defineResource<
  T extends RecordTable,
  R extends z.ZodObject,
  V extends Fields = ColumnsOf<T>,
  X extends Ctx = SchoolCtx,
>(config: ResourceConfig<T, R, V, X>) {
  const core = resourceCore(config);
  return {
    ...listBuilders(core),
    ...writeBuilders(core),
    config,
    data: core.data,
    record: core.record,
    /** The record of a row for this caller. */
    toRecord: core.toRecord,
    /** Reads one record (404 if absent here): reference checks of other resources use it. */
    find: core.find,
    /** The visibility and parent conditions of this resource for a caller (the accessor adds the school). */
    scoped: core.scoped,
    /** The resource's read (its view), scoped to the school: for a verb of its own. */
    select: core.select,
    /** The record `id` as a read in a batch (`id` may be an inserted id). */
    readOne: core.readOne,
    /** One record's writes with their audit rows, for a verb that composes its own batch. */
    writes: core.writes,
    /** Commits a verb's batch about record `id`; a failed guard becomes the 404 that explains it. */
    commit: core.guarded,
    /** A guarded change of one record (requeue, delete a draft): 404 / 409 / 422 when it matched nothing. */
    change: core.change,
    changeAndRead: core.changeAndRead,
    /** `If-Match` for an update of its own (`defineRoute({ ifMatch: resource.ifMatch })`): checked against `find`. */
    ifMatch: core.ifMatch,
    /** Copies row `id` to the shards that keep it (`anchors`), after a verb of its own wrote the platform's. */
    copyAnchors: core.copyAnchors,
    /** A batch of a verb of its own: on the platform database for a platform resource. */
    batch: core.batch,
    /** The 409 messages of its writes. */
    messages: core.messages,
  };
}

export type { Change } from "./core";
export type { ExportSpec, ListQuery, ListSpec } from "./list";
export { filterConditions } from "./list";
export * from "./types";
export type { ActionSpec, CreateSpec, DeleteSpec, UpdateSpec, Written } from "./write";
export { nonEmpty } from "./write";
