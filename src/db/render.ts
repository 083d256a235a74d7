/**
 * SQL text and parameters of a drizzle `SQL` tree, as drizzle's SQLite dialect renders them, in a
 * fraction of its time. Drizzle asks each chunk what it is with `is()`, which walks the prototype
 * chain on every failed check (up to eleven per chunk): most of what a list spent building its two
 * statements (docs/performance.md). The bundle holds one drizzle, so `instanceof` answers the same.
 *
 * Only what the data layer's reads contain is rendered here; anything else (an inline-params
 * chunk, a view, a placeholder, a drizzle subquery) makes `render` answer undefined, and the
 * caller renders with drizzle. test/render.test.ts wraps `render` to compare every rendering with
 * drizzle's while it calls every operation of the API, so the two are held equal.
 */
import { Column, getTableName, Name, Param, Placeholder, SQL, StringChunk, Subquery, Table, View } from "./sql";

export interface Rendered {
  sql: string;
  params: unknown[];
}

/**
 * A statement that writes its own text (the data layer's `Query`), rather than first building the
 * SQL tree `getSQL()` gives: the same text and parameters, without the tree's allocations.
 */
export interface SelfRendering {
  renderTo(out: Rendered): void;
  getSQL(): SQL;
}

/** A chunk drizzle renders, but not this renderer. */
class Unsupported extends Error {}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

const selfRendering = (x: object): x is SelfRendering => "renderTo" in x && typeof x.renderTo === "function";

/** The query drizzle's SQLite dialect makes of `root`, or undefined when it holds what is not rendered here. */
export function render(root: SQL | SelfRendering): Rendered | undefined {
  const out: Rendered = { sql: "", params: [] };
  try {
    if (root instanceof SQL) walk(root, out);
    else root.renderTo(out);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return out;
}

/** Appends `node`'s text and parameters to `out`; throws `Unsupported` at what only drizzle renders. */
export function walk(node: SQL, out: Rendered): void {
  // `sql.raw`-like inlining is drizzle's own business (its flag is private).
  if (Reflect.get(node, "shouldInlineParams") === true) throw new Unsupported();
  for (const chunk of node.queryChunks) {
    if (chunk instanceof StringChunk) {
      const text = chunk.value;
      out.sql += text.length === 1 ? text[0] : text.join("");
    } else if (chunk === undefined) continue;
    else if (chunk instanceof SQL) walk(chunk, out);
    else if (chunk instanceof Name) out.sql += quote(chunk.value);
    else if (chunk instanceof Param) param(chunk, out);
    else if (chunk instanceof Column) {
      // SQLite tables have no schema; a column named by its key would need drizzle's casing.
      if (chunk.keyAsName) throw new Unsupported();
      out.sql += `${quote(getTableName(chunk.table))}.${quote(chunk.name)}`;
    } else if (chunk instanceof Table) {
      out.sql += quote(getTableName(chunk));
    } else if (chunk instanceof SQL.Aliased && chunk.fieldAlias !== undefined) out.sql += quote(chunk.fieldAlias);
    else if (Array.isArray(chunk)) {
      out.sql += "(";
      chunk.forEach((item, i) => {
        if (i > 0) out.sql += ", ";
        walk(new SQL([item]), out);
      });
      out.sql += ")";
    } else if (chunk instanceof Placeholder || chunk instanceof Subquery || chunk instanceof View) {
      throw new Unsupported();
    } else if (typeof chunk === "object" && chunk !== null && selfRendering(chunk)) {
      // The data layer's Query as a subquery: in parentheses, as drizzle puts it.
      out.sql += "(";
      chunk.renderTo(out);
      out.sql += ")";
    } else if (typeof chunk === "object" && chunk !== null && "getSQL" in chunk && typeof chunk.getSQL === "function") {
      // A subquery (a drizzle select): in parentheses, as drizzle puts it.
      const inner = chunk.getSQL();
      if (!(inner instanceof SQL)) throw new Unsupported();
      if (
        "shouldOmitSQLParens" in chunk &&
        typeof chunk.shouldOmitSQLParens === "function" &&
        chunk.shouldOmitSQLParens()
      ) {
        walk(inner, out);
      } else {
        out.sql += "(";
        walk(inner, out);
        out.sql += ")";
      }
    } else {
      // A bare value in a template (`sql`${x}``) is a parameter, as it is to drizzle.
      out.sql += "?";
      out.params.push(chunk);
    }
  }
}

function param(chunk: Param, out: Rendered): void {
  if (chunk.value instanceof Placeholder) throw new Unsupported();
  const value = chunk.value === null ? null : chunk.encoder.mapToDriverValue(chunk.value);
  if (value instanceof SQL) walk(value, out);
  else {
    out.sql += "?";
    out.params.push(value);
  }
}
