/**
 * What every audit row's `changes` must be: an object whose every field is an `{ old, new }` pair,
 * each value typed as its column keeps it (a JSON column's arrays and objects, a boolean column's
 * booleans, numbers as numbers, text as text). The column kinds come from the drizzle schema, by
 * field name, where every table that has the field agrees on its kind.
 */
import { getTableColumns, is } from "drizzle-orm";
import { type SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { REDACTED } from "../src/db/audit";
import * as core from "../src/db/schema/core";

type Kind = "json" | "boolean" | "number" | "text";

const schemas = import.meta.glob<Record<string, unknown>>("../src/db/schema/*.ts", { eager: true });

function kindOf(column: SQLiteColumn): Kind {
  if (column.columnType === "SQLiteTextJson") return "json";
  if (column.columnType === "SQLiteBoolean") return "boolean";
  if (column.dataType === "number") return "number";
  return "text";
}

/** Field name -> kind, for names every table agrees on. */
const KINDS: Map<string, Kind> = (() => {
  const seen = new Map<string, Set<Kind>>();
  for (const mod of [core, ...Object.values(schemas)]) {
    for (const value of Object.values(mod)) {
      if (!is(value, SQLiteTable)) continue;
      for (const [key, column] of Object.entries(getTableColumns(value) as Record<string, SQLiteColumn>)) {
        const kinds = seen.get(key) ?? new Set<Kind>();
        kinds.add(kindOf(column));
        seen.set(key, kinds);
      }
    }
  }
  return new Map([...seen].filter(([, kinds]) => kinds.size === 1).map(([key, kinds]) => [key, [...kinds][0] as Kind]));
})();

/** The kind of a schema field, where the schema says one. */
export const fieldKind = (field: string): Kind | undefined => KINDS.get(field);

function typed(kind: Kind, value: unknown): boolean {
  if (value === null || value === REDACTED) return true;
  switch (kind) {
    case "json":
      return typeof value === "object";
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number";
    case "text":
      return typeof value === "string";
  }
}

/** What is wrong with the audit rows' `changes` (stored JSON text or parsed): nothing, when all is well. */
export function auditShapeProblems(
  rows: readonly { id?: number; entity: string; action: string; changes: unknown }[],
): string[] {
  const problems: string[] = [];
  for (const row of rows) {
    const where = `${row.entity} ${row.action}${row.id === undefined ? "" : ` (audit row ${row.id})`}`;
    const changes = typeof row.changes === "string" ? (JSON.parse(row.changes) as unknown) : row.changes;
    if (typeof changes !== "object" || changes === null || Array.isArray(changes)) {
      problems.push(`${where}: changes is ${JSON.stringify(changes)}, not an object`);
      continue;
    }
    for (const [field, pair] of Object.entries(changes)) {
      const keys = typeof pair === "object" && pair !== null && !Array.isArray(pair) ? Object.keys(pair).sort() : [];
      if (keys.join(",") !== "new,old") {
        problems.push(`${where}: ${field} is ${JSON.stringify(pair)}, not { old, new }`);
        continue;
      }
      const kind = fieldKind(field);
      const { old, new: next } = pair as { old: unknown; new: unknown };
      if (kind && !(typed(kind, old) && typed(kind, next))) {
        problems.push(`${where}: ${field} is ${JSON.stringify(pair)}, not ${kind} values`);
      }
    }
  }
  return problems;
}
