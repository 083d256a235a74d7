import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { Column, is, TableAliasProxyHandler } from "./sql";

/** Drizzle's key for a table's columns (`getTableColumns` reads it). */
const COLUMNS = Symbol.for("drizzle:Columns");

/**
 * Drizzle's alias of a table, with each column made once: drizzle's handler wraps a column in a new
 * proxy at every access (`f.table.id` twice is two objects), so nothing could be kept per column.
 */
export class KeptAliasHandler<T extends SQLiteTable> extends TableAliasProxyHandler<T> {
  private readonly kept = new Map<string | symbol, unknown>();

  constructor(name: string) {
    super(name, false);
  }

  override get(target: T, prop: string | symbol): unknown {
    if (this.kept.has(prop)) return this.kept.get(prop);
    const value: unknown = super.get(target, prop);
    if (prop === COLUMNS && typeof value === "object" && value !== null) {
      // The same column objects as the properties give.
      const columns = Object.fromEntries(Object.keys(value).map((key) => [key, this.get(target, key)]));
      this.kept.set(prop, columns);
      return columns;
    }
    if (is(value, Column)) this.kept.set(prop, value);
    return value;
  }
}
