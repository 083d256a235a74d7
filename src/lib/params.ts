/** Integers that arrive as strings (path and query parameters). */
import { z } from "@hono/zod-openapi";
import { m, zodMessage } from "./message";

const DIGITS = /^-?\d{1,16}$/;

/**
 * An integer written in plain digits: "1e3", "0x10", " 1" and "1.0" stay strings and fail as
 * "expected number" (400) instead of being read as other ids.
 */
export const integerString = (schema: z.ZodNumber) =>
  z.preprocess((v) => (typeof v === "string" && DIGITS.test(v) ? Number(v) : v), schema);

/** A record id: a positive integer. */
export const recordId = () => integerString(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER));

/** A list filter naming a record by id (`?groupId=3`): plain digits, optional. */
export const idFilter = (description: string) =>
  // `type` is given because the preprocess hides the number from the generator, which then drops
  // the bounds: they are given here too, as recordId checks them.
  recordId().optional().openapi({ description, type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/** A list of distinct record ids in a body: `min` to `max` of them (a bulk operation's input). */
export const idList = ({ min = 1, max = 100, what = "Record" }: { min?: number; max?: number; what?: string } = {}) =>
  z
    .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
    .min(min)
    .max(max)
    .refine((ids) => new Set(ids).size === ids.length, zodMessage(m`Each id at most once`))
    .openapi({
      example: [3, 4],
      description: `${what} ids of this school, ${min} to ${max}, each once`,
      uniqueItems: true,
    });

/** The body of every "delete several": `{ ids }`, all or none. */
export const DeleteMany = (what: string) => z.strictObject({ ids: idList({ what }) });

/** The answer of every "delete several": the ids deleted. */
export const Deleted = z
  .object({ deleted: z.array(z.number().int()).openapi({ example: [3, 4], description: "The ids deleted" }) })
  .openapi("Deleted", { description: "The ids deleted" });
