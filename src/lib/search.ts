/**
 * Text search filters within D1's limits (LIKE patterns of at most 50 bytes), over the folded
 * copies of searched columns (src/db/search.ts): the term is folded by the same `fold` as the copy
 * (src/lib/fold.ts), so "joao conceicao" finds "JOÃO CONCEIÇÃO" and "Müller" finds "muller".
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { type SQL, sql } from "../db/sql";
import { fold } from "./fold";
import { m, zodMessage } from "./message";
import { SAFE_TEXT, UNSAFE_TEXT } from "./text";

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
const bytes = (v: string) => new TextEncoder().encode(v).length;

/** A search term whose folded `%term%` pattern fits D1's 50-byte LIKE limit. */
export const searchTerm = (description: string) =>
  z
    .string()
    .min(1)
    // A NUL would end the pattern early in SQLite's LIKE; no control character belongs in a search.
    .regex(SAFE_TEXT, UNSAFE_TEXT)
    .refine((v) => bytes(escapeLike(fold(v))) + 2 <= 50, zodMessage(m`Too long to search: at most 48 bytes`))
    .optional()
    .openapi({ description });

/** A search copy's column (`*_search`): anything else holds unfolded text, which a folded term would miss. */
function copy(column: SQLiteColumn): SQLiteColumn {
  if (!column.name.endsWith("_search")) throw new Error(`${column.name} is not a search copy (src/db/search.ts)`);
  return column;
}

/** `expr` (folded text) contains the folded term. */
export const matches = (expr: SQL | SQLiteColumn, term: string): SQL =>
  sql`${expr} LIKE ${`%${escapeLike(fold(term))}%`} ESCAPE '\\'`;

/** The term anywhere in a searched column, whatever its case and accents: `contains(groups.nameSearch, "3°a")`. */
export const contains = (searchCopy: SQLiteColumn, term: string): SQL => matches(copy(searchCopy), term);

/** A person's name search over the copies of first and last name: the term anywhere in "first last". */
export const containsName = (first: SQLiteColumn, last: SQLiteColumn, term: string): SQL =>
  matches(sql`${copy(first)} || ' ' || ${copy(last)}`, term);

/** Substring match in ASCII text (a permission's dotted lowercase name): only the term is folded. */
export const containsAscii = (column: SQLiteColumn, term: string): SQL => matches(column, term);
