/** Text search filters within D1's limits (LIKE patterns of at most 50 bytes). */
import { z } from "@hono/zod-openapi";
import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { SAFE_TEXT, UNSAFE_TEXT_MESSAGE } from "./text";

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
const bytes = (v: string) => new TextEncoder().encode(v).length;

/** A search term whose `%term%` pattern fits D1's 50-byte LIKE limit. */
export const searchTerm = (description: string) =>
  z
    .string()
    .min(1)
    // A NUL would end the pattern early in SQLite's LIKE; no control character belongs in a search.
    .regex(SAFE_TEXT, UNSAFE_TEXT_MESSAGE)
    .refine((v) => bytes(escapeLike(v)) + 2 <= 50, "Too long to search: at most 48 bytes")
    .optional()
    .openapi({ description });

/** Case-insensitive (ASCII) substring match. */
export const contains = (column: SQLiteColumn, term: string): SQL =>
  sql`${column} LIKE ${`%${escapeLike(term)}%`} ESCAPE '\\'`;
