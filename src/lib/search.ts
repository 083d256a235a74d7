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

/**
 * Accented Latin letters and the ASCII letter they fold to: "lopez" finds López, "GARCIA" García.
 * LIKE already ignores ASCII case; other scripts are compared as they are.
 */
const FOLDS: [string, string][] = [
  // Spanish in full (both cases), and ç, ã, õ of Portuguese names (João, Conceição, Gonçalves).
  ["aáÁã", "a"],
  ["eéÉ", "e"],
  ["iíÍ", "i"],
  ["oóÓõ", "o"],
  ["uúÚüÜ", "u"],
  ["nñÑ", "n"],
  ["cçÇ", "c"],
];
const FOLD = new Map(FOLDS.flatMap(([chars, to]) => [...chars.slice(1)].map((ch): [string, string] => [ch, to])));
const FOLDABLE = new RegExp(`[${[...FOLD.keys()].join("")}]`, "g");

/** A search term folded as `folded()` folds the column: NFC, accented letters to ASCII. */
export const foldTerm = (term: string) => term.normalize("NFC").replace(FOLDABLE, (ch) => FOLD.get(ch) ?? ch);

// `replace(replace(…(x, 'á', 'a')…)`: constants written into the SQL (no bound parameters: D1
// allows 100 per statement), wrapped around the searched expression. Each letter is one level of
// nesting, and D1 allows expressions 100 deep: the list above stays short (18).
// libSQL's parser (a stack of 100) overflowed at 29 inside a teacher list's EXISTS; 18 leaves room.
const FOLD_OPEN = sql.raw("replace(".repeat(FOLD.size));
const FOLD_CLOSE = sql.raw([...FOLD].map(([from, to]) => `, '${from}', '${to}')`).join(""));
const folded = (expr: SQL | SQLiteColumn): SQL => sql`${FOLD_OPEN}${expr}${FOLD_CLOSE}`;

const like = (expr: SQL | SQLiteColumn, term: string): SQL =>
  sql`${folded(expr)} LIKE ${`%${escapeLike(foldTerm(term))}%`} ESCAPE '\\'`;

/** Substring match that ignores ASCII case and Latin accents. */
export const contains = (column: SQLiteColumn, term: string): SQL => like(column, term);

/** A person's name search: the term anywhere in "first last" ("Ana García", "garcia", "ana g"). */
export const containsName = (first: SQLiteColumn, last: SQLiteColumn, term: string): SQL =>
  like(sql`${first} || ' ' || ${last}`, term);
