/**
 * Safe edits: an update of one record that declares `ifMatch` on its route (src/lib/route.ts) takes
 * `If-Match` with the ETag of the record as its GET answered it (src/lib/etag.ts). `serve` checks it
 * before the verb runs (`unchangedSince`: 412 when the record's answer has another ETag now), and the
 * context it hands the verb carries the `updated_at` read, so the request's first write batch is
 * guarded by it (src/db/write.ts `commit`): a change in between is a 412 too, not a lost update.
 */
import { z } from "@hono/zod-openapi";
import type { RecordTable } from "../db/table";
import type { Ctx, SchoolCtx } from "./context";
import { ApiError, say } from "./errors";
import { etagMatches, etagOfJson } from "./etag";
import type { Message } from "./message";

/** `If-Match` on an update: the ETag of the record as the client read it (src/lib/etag.ts). */
export const IfMatchHeaders = z.object({
  "if-match": z
    .string()
    .max(200)
    .optional()
    .openapi({
      param: { name: "if-match", in: "header" },
      description:
        "The `ETag` of the record as you read it (its GET's): when the record has changed since, the update is a 412 " +
        "and changes nothing. `*` asks only that it exists.",
      // No `example`: the docs page's "Try it out" would send it with every update (a 412).
    }),
});

/**
 * What an update's `If-Match` is checked against, declared on its route (`ifMatch`): the record as
 * its GET answers it to this caller, whose ETag the header must name (else 412, before the verb
 * runs); and the table whose row it is, so every write batch of the request is guarded by the
 * `updated_at` read (a change in between is a 412 too, not a lost update: src/db/write.ts `commit`).
 */
export interface IfMatch<X extends Ctx = SchoolCtx> {
  /** The record's name in the 412's detail (`` m`Route` ``). */
  label: Message;
  /** The record as `GET` of the same path answers it to this caller (a 404 when it is not there). */
  read(ctx: X, params: { id: number }): Promise<unknown>;
  /**
   * The table whose row `id` the record is, when its `updatedAt` is that row's: the writes are
   * guarded by it. Without one the check is made when the request arrives only.
   */
  table?: RecordTable;
}

/**
 * An update's `If-Match` (`IfMatch` on its route): the record now must have the ETag the header
 * names (`*`: any), else 412 and nothing runs. The context it answers carries the `updated_at` read,
 * so the verb's write batches are guarded by it (src/db/write.ts `commit`).
 */
export async function unchangedSince<C extends Ctx>(
  ctx: C,
  spec: IfMatch<C>,
  params: unknown,
  header: string | undefined,
): Promise<C> {
  if (header === undefined) return ctx;
  const id: unknown = typeof params === "object" && params !== null ? Reflect.get(params, "id") : undefined;
  if (typeof params !== "object" || params === null || typeof id !== "number") {
    throw new Error("If-Match on a route without a numeric {id}");
  }
  const current: unknown = await spec.read(ctx, { ...params, id });
  const message = say.changedSinceRead(spec.label, id);
  if (!etagMatches(etagOfJson(current), header)) throw new ApiError(412, message);
  if (!spec.table) return ctx;
  const updatedAt: unknown =
    typeof current === "object" && current !== null ? Reflect.get(current, "updatedAt") : undefined;
  if (typeof updatedAt !== "string")
    throw new Error(`${spec.label}: a record without updatedAt cannot guard its writes`);
  return { ...ctx, unchanged: { table: spec.table, id, updatedAt, message, spent: false } };
}
