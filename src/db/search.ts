/**
 * Searched text columns and their folded copies. A column people search by part ("garcia" finds
 * "García") has a `<column>_search` copy holding `fold(value)` (src/lib/fold.ts), which the app
 * computes whenever it writes the column: SQLite cannot decompose Unicode, so the copy is the only
 * place the fold can be compared in SQL. Searches (src/lib/search.ts) read the copies only.
 *
 * A table declares its copies once, with `searchable(table, { name: "nameSearch" })`; every write
 * then passes its values through `withSearch(table, values)`: the block's create and update do
 * (src/lib/resource/), and so does every hand-written insert or update of a searched column.
 * Writes that build rows in SQL (the imports' `json_each` rows) carry the folded values in their
 * JSON, computed by the same `fold`. Each test file checks at its end that every stored copy is the
 * fold of its column (test/setup.ts), so a write path that forgets it fails the suite.
 */
import { type SQLiteColumn, type SQLiteTable, text } from "drizzle-orm/sqlite-core";
import { fold } from "../lib/fold";
import { getTableColumns, getTableName } from "./sql";

/** The folded copy of the searched column `name`: `<name>_search`, never null (`fallback` until written). */
export const searchCopy = (name: string, fallback = "") => text(`${name}_search`).notNull().default(fallback);

type Keys<T extends SQLiteTable> = keyof T["$inferInsert"] & string;

/** Searched column key -> its copy's key, per table. */
const SEARCHED = new Map<SQLiteTable, [string, string][]>();

/** Declares `table`'s searched columns and their copies (keys of the table's columns). */
export function searchable<T extends SQLiteTable>(table: T, copies: Partial<Record<Keys<T>, Keys<T>>>): T {
  const pairs: [string, string][] = [];
  for (const [column, copy] of Object.entries(copies)) if (typeof copy === "string") pairs.push([column, copy]);
  SEARCHED.set(table, pairs);
  return table;
}

/**
 * `values` with the folded copy of each searched column they set (a null column: a null copy).
 * An SQL expression cannot be folded: the caller writes the copy itself (as the imports do).
 */
export function withSearch<V extends object>(table: SQLiteTable, values: V): V {
  const copies = SEARCHED.get(table);
  if (!copies) return values;
  const given = new Map<string, unknown>(Object.entries(values));
  const folded: Record<string, string | null> = {};
  for (const [column, copy] of copies) {
    const value = given.get(column);
    if (value === undefined) continue;
    if (typeof value === "string") folded[copy] = fold(value);
    else if (value === null) folded[copy] = null;
    // A JSON column (a teacher's subjects): the fold of the text it is stored as.
    else if (Array.isArray(value)) folded[copy] = fold(JSON.stringify(value));
    else throw new Error(`${column}: its search copy ${copy} needs a string value, not an SQL expression`);
  }
  return Object.assign({}, values, folded);
}

/** The keys of `table`'s search copies (derived data: the audit trail leaves them out). */
export function searchCopyKeys(table: SQLiteTable): Set<string> {
  return new Set((SEARCHED.get(table) ?? []).map(([, copy]) => copy));
}

function columnOf(table: SQLiteTable, key: string): SQLiteColumn {
  const column = getTableColumns(table)[key];
  if (!column) throw new Error(`${getTableName(table)} has no column ${key}`);
  return column;
}

/** Every declared table with its [column, copy] pairs (the consistency check of the tests walks them). */
export function searchedTables(): [SQLiteTable, [SQLiteColumn, SQLiteColumn][]][] {
  return [...SEARCHED].map(([table, pairs]) => [
    table,
    pairs.map(([column, copy]) => [columnOf(table, column), columnOf(table, copy)]),
  ]);
}
