/** Integers that arrive as strings (path and query parameters). */
import { z } from "@hono/zod-openapi";

const DIGITS = /^-?\d{1,16}$/;

/**
 * An integer written in plain digits: "1e3", "0x10", " 1" and "1.0" stay strings and fail as
 * "expected number" (400) instead of being read as other ids.
 */
export const integerString = (schema: z.ZodNumber) =>
  z.preprocess((v) => (typeof v === "string" && DIGITS.test(v) ? Number(v) : v), schema);

/** A record id: a positive integer. */
export const recordId = () => integerString(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER));
