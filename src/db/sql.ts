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
  into.push(...chunks);
  return out;
}

function template(strings: TemplateStringsArray, ...params: unknown[]): SQL {
  const chunks: unknown[] = [];
  if (params.length > 0 || (strings.length > 0 && strings[0] !== "")) chunks.push(new StringChunk(strings[0] ?? ""));
  for (let i = 0; i < params.length; i++) chunks.push(params[i], new StringChunk(strings[i + 1] ?? ""));
  return fromChunks(chunks);
}

function join(chunks: readonly unknown[], separator?: unknown): SQL {
  return fromChunks(chunks.flatMap((chunk, i) => (i > 0 && separator !== undefined ? [separator, chunk] : [chunk])));
}

/** Drizzle's `sql` tag with its helpers (`sql.raw`, `sql.identifier`, ...); `sql.join` made here too. */
export const sql: typeof drizzleSql = Object.assign(template, drizzleSql, { join });

/** A plain value compared with a column is bound through the column's encoder, as drizzle's operators do. */
const bound = (value: unknown, column: SQLWrapper): unknown =>
  // Columns, SQL, placeholders, dates: drizzle's own test.
  value !== null && typeof value === "object"
    ? bindIfParam(value, column)
    : isDriverValueEncoder(column)
      ? new Param(value, column)
      : value;

export const eq: typeof drizzleEq = (left: SQLWrapper, right: unknown) => template`${left} = ${bound(right, left)}`;
export const ne: typeof drizzleNe = (left: SQLWrapper, right: unknown) => template`${left} <> ${bound(right, left)}`;
export const gt: typeof drizzleGt = (left: SQLWrapper, right: unknown) => template`${left} > ${bound(right, left)}`;
export const gte: typeof drizzleGte = (left: SQLWrapper, right: unknown) => template`${left} >= ${bound(right, left)}`;
export const lt: typeof drizzleLt = (left: SQLWrapper, right: unknown) => template`${left} < ${bound(right, left)}`;
export const lte: typeof drizzleLte = (left: SQLWrapper, right: unknown) => template`${left} <= ${bound(right, left)}`;
export const isNull: typeof drizzleIsNull = (value) => template`${value} is null`;
export const isNotNull: typeof drizzleIsNotNull = (value) => template`${value} is not null`;
export const not: typeof drizzleNot = (condition) => template`not ${condition}`;

function joined(word: string) {
  return (...unfiltered: (SQLWrapper | undefined)[]): SQL | undefined => {
    const conditions = unfiltered.filter((c) => c !== undefined);
    if (conditions.length < 2) return conditions.length ? fromChunks(conditions) : undefined;
    return fromChunks([new StringChunk("("), join(conditions, new StringChunk(` ${word} `)), new StringChunk(")")]);
  };
}

export const and: typeof drizzleAnd = joined("and");
export const or: typeof drizzleOr = joined("or");
