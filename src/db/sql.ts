/**
 * Drizzle's SQL operators as the code imports them: everything of `drizzle-orm`, with `sql` and the
 * comparison operators built without drizzle's per-chunk scan.
 *
 * Drizzle's `SQL` constructor asks of every chunk whether it is a table (`is(chunk, Table)`, which
 * walks the chunk's class chain) to note the tables a statement uses, which only drizzle's query
 * cache reads; we do not use that cache. A template of four values cost ~2.4 µs that way, ~0.15 µs
 * here (Node 20), and a request that reads a snapshot of the school builds a few hundred of them.
 * The chunks are the same as drizzle's: a statement renders to the same text and parameters (the
 * data layer's tests compare every rendering with drizzle's own).
 */
import {
  bindIfParam,
  type and as drizzleAnd,
  type eq as drizzleEq,
  type gt as drizzleGt,
  type gte as drizzleGte,
  type isNotNull as drizzleIsNotNull,
  type isNull as drizzleIsNull,
  type lt as drizzleLt,
  type lte as drizzleLte,
  type ne as drizzleNe,
  type not as drizzleNot,
  type or as drizzleOr,
  sql as drizzleSql,
  isDriverValueEncoder,
  Param,
  SQL,
  type SQLWrapper,
  StringChunk,
} from "drizzle-orm";

export * from "drizzle-orm";

/** An `SQL` of these chunks, as `new SQL(chunks)` makes it but for the table scan. */
function fromChunks(chunks: readonly unknown[]): SQL {
  const out = new SQL([]);
  const into: unknown[] = out.queryChunks;
  for (const c of chunks) into.push(c);
  return out;
}

function template(strings: TemplateStringsArray, ...params: unknown[]): SQL {
  const chunks: unknown[] = [];
  if (params.length > 0 || (strings.length > 0 && strings[0] !== "")) chunks.push(new StringChunk(strings[0] ?? ""));
  for (let i = 0; i < params.length; i++) chunks.push(params[i], new StringChunk(strings[i + 1] ?? ""));
  return fromChunks(chunks);
}

function join(chunks: readonly unknown[], separator?: unknown): SQL {
  const out: unknown[] = [];
  chunks.forEach((chunk, i) => {
    if (i > 0 && separator !== undefined) out.push(separator);
    out.push(chunk);
  });
  return fromChunks(out);
}

/** Drizzle's `sql` tag with its helpers (`sql.identifier`, `sql.placeholder`, ...); these four made here. */
export const sql: typeof drizzleSql = Object.assign(template, drizzleSql, {
  join,
  raw: (text: string) => fromChunks([new StringChunk(text)]),
  empty: () => fromChunks([]),
  fromList: (list: readonly unknown[]) => fromChunks(list),
});

/** A value compared with a column: bound through the column's encoder, as drizzle's operators do. */
function bound(value: unknown, column: unknown): unknown {
  // Columns, SQL, placeholders and dates: drizzle's own test.
  if (value !== null && typeof value === "object") return bindIfParam(value, column as SQLWrapper);
  return isDriverValueEncoder(column) ? new Param(value, column) : value;
}

function binary(operator: string) {
  return (left: unknown, right: unknown): SQL =>
    fromChunks([new StringChunk(""), left, new StringChunk(` ${operator} `), bound(right, left), new StringChunk("")]);
}

export const eq: typeof drizzleEq = binary("=");
export const ne: typeof drizzleNe = binary("<>");
export const gt: typeof drizzleGt = binary(">");
export const gte: typeof drizzleGte = binary(">=");
export const lt: typeof drizzleLt = binary("<");
export const lte: typeof drizzleLte = binary("<=");

export const isNull: typeof drizzleIsNull = (value) =>
  fromChunks([new StringChunk(""), value, new StringChunk(" is null")]);
export const isNotNull: typeof drizzleIsNotNull = (value) =>
  fromChunks([new StringChunk(""), value, new StringChunk(" is not null")]);
export const not: typeof drizzleNot = (condition) =>
  fromChunks([new StringChunk("not "), condition, new StringChunk("")]);

function joined(word: string) {
  return (...unfiltered: (SQLWrapper | undefined)[]): SQL | undefined => {
    const conditions = unfiltered.filter((c): c is SQLWrapper => c !== undefined);
    if (conditions.length === 0) return undefined;
    if (conditions.length === 1) return fromChunks(conditions);
    return fromChunks([new StringChunk("("), join(conditions, new StringChunk(` ${word} `)), new StringChunk(")")]);
  };
}

export const and: typeof drizzleAnd = joined("and");
export const or: typeof drizzleOr = joined("or");
