/**
 * The data layer's read: a query over one table and the tables joined to it, where every table
 * that takes part brings its own tenant condition (`Data.scope`). `where` adds conditions (it
 * never replaces the scope, unlike drizzle's), `join` adds the joined table's scope to its ON
 * clause, and every selected field is aliased by its key (D1's `batch()` maps rows by column
 * name, so two `id`s of joined tables would scramble a row).
 *
 * A query is a value: each method returns a new one. It runs alone (`all`, `first`), goes into a
 * batch (`commit`'s reads), or is embedded in other SQL as a subquery (`EXISTS ${q}`,
 * `inArray(column, q)`), where drizzle puts it in parentheses.
 */
import type { z } from "@hono/zod-openapi";
import type { RunnableQuery } from "drizzle-orm/runnable-query";
import { SQLiteAsyncDialect, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../lib/context";
import { parseJson } from "../lib/json";
import { keptFor } from "../lib/memo";
import type { Db } from "./client";
import { type Rendered, render, walk } from "./render";
import { databaseOf } from "./shards";
import { and, Column, getTableColumns, getTableName, SQL, type SQLWrapper, sql } from "./sql";

/** Selected fields of a read: columns and SQL expressions, each under its own key. */
export type Fields = Record<string, SQLiteColumn | SQL | SQL.Aliased>;

/** The row a set of fields reads. */
export type RowOf<F extends Fields> = {
  [K in keyof F]: F[K] extends SQLiteColumn
    ? F[K]["_"]["notNull"] extends true
      ? F[K]["_"]["data"]
      : F[K]["_"]["data"] | null
    : F[K] extends SQL.Aliased<infer X>
      ? X
      : F[K] extends SQL<infer X>
        ? X
        : never;
};

/** The columns of a table as fields. */
export type ColumnsOf<T extends SQLiteTable> = T["_"]["columns"];

/** Something a query can read from or join: a table with the condition that keeps it in the school. */
export interface Source {
  readonly table: SQLiteTable;
  /** How its rows belong to schools: a platform table's (`none`) are read from the platform database. */
  readonly tenancy?: string;
  /** The tenant condition for this caller, or undefined for a table every school shares. */
  scope(ctx: Ctx, how: "read" | "write"): SQL | undefined;
}

interface Join {
  source: Source;
  on: SQL;
  kind: "inner" | "left";
}

interface Parts {
  from: Source;
  fields: Fields;
  joins: readonly Join[];
  where: readonly (SQL | undefined)[];
  orderBy: readonly SQL[];
  limit?: number;
  offset?: number;
  groupBy: readonly (SQLiteColumn | SQL)[];
}

/**
 * A field under its key as alias. Columns keep their decoding (booleans, JSON modes), and the
 * field is wrapped once more so drizzle never strips the table from a column in it (it does
 * so for the top-level columns of a one-table select, which would make a correlated subquery's
 * `${outer.id}` bind to the inner table).
 */
export function aliased(key: string, f: SQLiteColumn | SQL | SQL.Aliased): SQL.Aliased {
  if ("mapFromDriverValue" in f) return sql`${sql`${f}`}`.mapWith(f).as(key);
  // An expression's own decoder is not kept: SQL fields read what the database gives.
  return sql`${"fieldAlias" in f ? f.sql : f}`.as(key);
}

const dialect = new SQLiteAsyncDialect();

/** Each column's text under each key (`"student"."last_name" as "lastName"`), rendered once per isolate. */
const columnTexts = new WeakMap<SQLiteColumn, Map<string, string>>();

function columnText(key: string, column: SQLiteColumn): string {
  return keptFor(
    columnTexts,
    column,
    key,
    () => `${dialect.sqlToQuery(aliased(key, column).getSQL()).sql} as ${dialect.escapeName(key)}`,
  );
}

/**
 * The text of an expression field under `key` (`(SELECT ...) as "stops"`), rendered once per
 * isolate, for an expression without parameters met a second time: such a field is a module's
 * constant (a correlated sub-select over the outer row), the same object request after request,
 * and nothing changes an SQL tree once built. A field a request makes is met once and only noted.
 * Undefined when not met before, when it has parameters, holds what `render` leaves to drizzle, or
 * is a bare column under another name (which a one-table select would write unqualified).
 */
const expressionTexts = new WeakMap<SQL | SQL.Aliased, Map<string, string | null>>();

/** Met once, not rendered yet. */
const MET = "";

function expressionText(key: string, f: SQL | SQL.Aliased): string | undefined {
  const byKey = expressionTexts.get(f);
  if (!byKey) {
    expressionTexts.set(f, new Map([[key, MET]]));
    return undefined;
  }
  let text = byKey.get(key);
  if (text === undefined) {
    byKey.set(key, MET);
    return undefined;
  }
  if (text === MET) {
    const inner = "fieldAlias" in f ? f.sql : f;
    const rendered = inner instanceof Column ? undefined : render(aliased(key, f).getSQL());
    text = rendered && rendered.params.length === 0 ? `${rendered.sql} as ${dialect.escapeName(key)}` : null;
    byKey.set(key, text);
  }
  return text ?? undefined;
}

/**
 * What drizzle's select is given: every field under its key, in order. A run of columns, and of
 * expressions without parameters, is one piece of text, rendered once per isolate, so building the
 * statement walks only the expressions a request makes (a list's twenty-odd columns were most of
 * the walk). The text is the one drizzle renders for the same aliased fields: the statements do not
 * change. Rows are decoded by position (`decode`), so the selection's own keys do not matter.
 */
function selectionOf(fields: Fields): Record<string, SQL | SQL.Aliased> {
  const selection: Record<string, SQL | SQL.Aliased> = {};
  let texts: string[] = [];
  const flush = () => {
    if (texts.length) selection[`columns ${Object.keys(selection).length}`] = sql.raw(texts.join(", "));
    texts = [];
  };
  for (const [key, f] of Object.entries(fields)) {
    // `instanceof`, not drizzle's `is()` (a prototype walk per failed check): the bundle holds one drizzle.
    const text = f instanceof Column ? columnText(key, f) : expressionText(key, f);
    if (text !== undefined) {
      texts.push(text);
    } else {
      flush();
      selection[key] = aliased(key, f);
    }
  }
  flush();
  return selection;
}

export class Query<Row> implements SQLWrapper {
  declare readonly _row: Row;
  constructor(
    private readonly ctx: Ctx,
    private readonly parts: Parts,
  ) {}

  private with(change: Partial<Parts>): Query<Row> {
    return new Query<Row>(this.ctx, { ...this.parts, ...change });
  }

  /** Adds conditions (ANDed with the scope and with conditions given before). */
  where(...conditions: (SQL | undefined)[]): Query<Row> {
    return this.with({ where: [...this.parts.where, ...conditions] });
  }

  /** Joins a table on `on`; the joined table's tenant condition goes into the ON clause. */
  join(source: Source, on: SQL, kind: "inner" | "left" = "inner"): Query<Row> {
    return this.with({ joins: [...this.parts.joins, { source, on, kind }] });
  }

  leftJoin(source: Source, on: SQL): Query<Row> {
    return this.join(source, on, "left");
  }

  orderBy(...terms: SQL[]): Query<Row> {
    return this.with({ orderBy: terms });
  }

  groupBy(...terms: (SQLiteColumn | SQL)[]): Query<Row> {
    return this.with({ groupBy: terms });
  }

  limit(limit: number): Query<Row> {
    return this.with({ limit });
  }

  offset(offset: number): Query<Row> {
    return this.with({ offset });
  }

  /** The same query reading other fields (a count, an id list for `IN`, one value). */
  select<F extends Fields>(fields: F): Query<RowOf<F>> {
    return new Query<RowOf<F>>(this.ctx, { ...this.parts, fields });
  }

  /** `count(*)` of the rows this query matches (its limit, offset and order dropped). */
  count(): Query<{ n: number }> {
    return new Query<{ n: number }>(this.ctx, {
      ...this.parts,
      fields: { n: sql<number>`count(*)` },
      orderBy: [],
      limit: undefined,
      offset: undefined,
    });
  }

  /**
   * The drizzle select this query is. Reads do not run it: `getSQL` builds the same SELECT without
   * drizzle's builder; test/render.test.ts compares the two for every read the API makes.
   */
  statement() {
    const { ctx } = this;
    const { from, fields, joins, where, orderBy, limit, offset, groupBy } = this.parts;
    let q = db(ctx).select(selectionOf(fields)).from(from.table).$dynamic();
    for (const j of joins) {
      const on = and(j.on, j.source.scope(ctx, "read"));
      q = j.kind === "left" ? q.leftJoin(j.source.table, on) : q.innerJoin(j.source.table, on);
    }
    q = q.where(and(from.scope(ctx, "read"), ...where));
    if (groupBy.length) q = q.groupBy(...groupBy);
    if (orderBy.length) q = q.orderBy(...orderBy);
    if (limit !== undefined) q = q.limit(limit);
    if (offset !== undefined) q = q.offset(offset);
    return q;
  }

  /**
   * The SELECT, as the SQL tree drizzle's SQLite dialect builds for the same select (so the same
   * text and parameters), built directly: drizzle's builder and `buildSelectQuery` ask every
   * field, join and term what it is (`is()`, a prototype walk per failed check), which was most
   * of what building a read cost once rendering was ours (docs/performance.md).
   */
  getSQL(): SQL {
    const { ctx } = this;
    const { from, fields, joins, where, orderBy, limit, offset, groupBy } = this.parts;
    const single = joins.length === 0;
    const items: SQL[] = [];
    for (const [key, field] of Object.entries(selectionOf(fields))) {
      if (field instanceof SQL) items.push(single ? unqualified(field) : field);
      else items.push(sql`${single ? unqualified(field.sql) : field.sql} as ${sql.identifier(key)}`);
    }
    const joined = joins.map((j) => {
      const on = and(j.on, j.source.scope(ctx, "read"));
      return sql`${sql.raw(j.kind)} join ${tableItem(j.source.table)}${on ? sql` on ${on}` : undefined}`;
    });
    const condition = and(from.scope(ctx, "read"), ...where);
    const built = sql`select ${sql.join(items, sql`, `)} from ${tableItem(from.table)}${
      joined.length ? sql` ${sql.join(joined, sql` `)}` : undefined
    }${condition ? sql` where ${condition}` : undefined}${
      groupBy.length ? sql` group by ${sql.join([...groupBy], sql`, `)}` : undefined
    }${orderBy.length ? sql` order by ${sql.join([...orderBy], sql`, `)}` : undefined}${
      limit !== undefined && limit >= 0 ? sql` limit ${limit}` : undefined
    }${offset ? sql` offset ${offset}` : undefined}`;
    return built;
  }

  /**
   * Appends the SELECT of `getSQL` to `out` (text and parameters) without building its tree: the
   * same text, piece by piece, with the fields, conditions and terms walked where they are (the
   * statement's own frame of `sql` templates, joins and `and()`s was most of what building a batch
   * of reads cost). Under test `render` compares it with drizzle's rendering of `getSQL`.
   */
  renderTo(out: Rendered): void {
    const { ctx } = this;
    const { from, fields, joins, where, orderBy, limit, offset, groupBy } = this.parts;
    const single = joins.length === 0;
    out.sql += "select ";
    let first = true;
    for (const [key, field] of Object.entries(selectionOf(fields))) {
      if (!first) out.sql += ", ";
      first = false;
      if (field instanceof SQL) walk(single ? unqualified(field) : field, out);
      else {
        walk(single ? unqualified(field.sql) : field.sql, out);
        out.sql += ` as ${dialect.escapeName(key)}`;
      }
    }
    out.sql += " from ";
    walk(tableItem(from.table), out);
    for (const j of joins) {
      out.sql += ` ${j.kind} join `;
      walk(tableItem(j.source.table), out);
      conditions(" on ", [j.on, j.source.scope(ctx, "read")], out);
    }
    conditions(" where ", [from.scope(ctx, "read"), ...where], out);
    terms(" group by ", groupBy, out);
    terms(" order by ", orderBy, out);
    if (limit !== undefined && limit >= 0) {
      out.sql += " limit ?";
      out.params.push(limit);
    }
    if (offset) {
      out.sql += " offset ?";
      out.params.push(offset);
    }
  }

  /**
   * What a call or a batch runs: the SELECT of `getSQL`, rendered by `render` (src/db/render.ts)
   * and its rows decoded by `decode`, rather than by drizzle's renderer and row mapper, which ask
   * every chunk and every cell what kind of thing it is. Drizzle's batch prepares each item with
   * `_prepare()`; its session prepares a query with a custom row mapper (as its relational queries
   * do). The text and parameters are drizzle's own.
   */
  runnable(database: Db = this.ctx.deps.db): Runnable {
    const session = sessionOf(database);
    const decode = (rows: ArrayLike<unknown>[]) => this.decode(rows);
    return new Runnable(this, () => {
      // What this renderer does not know, drizzle renders (the same text and parameters).
      const built = render(this) ?? new SQLiteAsyncDialect().sqlToQuery(this.getSQL());
      return readByKeyInBatch(session.prepareOneTimeQuery(built, undefined, "all", true, decode), (rows) =>
        this.decodeObjects(rows),
      );
    });
  }

  /**
   * Rows D1's batch answers (objects keyed by column name, which is each field's key: every field
   * is aliased by it) as `Row`s: the columns that need it decoded in place. Drizzle would copy each
   * row into an array first (for `decode`, which reads by position), and `decode` copy it back.
   */
  decodeObjects(rows: Record<string, unknown>[]): Row[] {
    this.decoding ??= decodingOf(this.parts.fields);
    const { keys, decoders } = this.decoding;
    for (let i = 0; i < keys.length; i++) {
      const decoder = decoders[i];
      const key = keys[i];
      if (decoder === undefined || key === undefined) continue;
      for (const row of rows) {
        const raw = row[key];
        if (raw !== null && raw !== undefined) row[key] = decoder.mapFromDriverValue(raw);
      }
    }
    return rowsOf<Row>(rows);
  }

  /** Raw rows (each an array in the fields' order) as `Row`s: each field under its key, columns decoded as drizzle would. */
  decode(rows: readonly ArrayLike<unknown>[]): Row[] {
    this.decoding ??= decodingOf(this.parts.fields);
    const { keys, decoders } = this.decoding;
    const out: Record<string, unknown>[] = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] ?? [];
      const value: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const raw = row[i] ?? null;
        const decoder = decoders[i];
        value[keys[i] ?? ""] = raw === null || decoder === undefined ? raw : decoder.mapFromDriverValue(raw);
      }
      out[r] = value;
    }
    return rowsOf<Row>(out);
  }

  private decoding?: Decoding;

  /**
   * Which database it reads (src/db/shards.ts): a platform table's query (`user`) that joins a
   * school's table runs on the school's database, where its anchors are (src/db/anchors.ts).
   */
  private get home(): Source {
    const { from, joins } = this.parts;
    if (from.tenancy !== "none") return from;
    return joins.find((j) => j.source.tenancy !== undefined && j.source.tenancy !== "none")?.source ?? from;
  }

  /** Every row. */
  async all(): Promise<Row[]> {
    return rowsOf<Row>(await this.runnable(await databaseOf(this.ctx, this.home)));
  }

  /** The first row, or undefined. */
  async first(): Promise<Row | undefined> {
    return rowsOf<Row>(await this.limit(1).runnable(await databaseOf(this.ctx, this.home)))[0];
  }
}

/**
 * A read as drizzle's batch takes it (`_prepare()`, then the prepared query's `all`), and as a
 * promise when awaited alone.
 */
export class Runnable implements RunnableQuery<unknown[], "sqlite">, SQLWrapper, PromiseLike<unknown[]> {
  /** Drizzle's type-level marker of a batch item: no value at run time. */
  declare readonly _: { readonly dialect: "sqlite"; readonly result: unknown[] };

  constructor(
    private readonly read: SQLWrapper,
    readonly _prepare: () => PreparedRead,
  ) {}

  getSQL(): SQL {
    return this.read.getSQL();
  }

  // biome-ignore lint/suspicious/noThenProperty: awaited alone, a read runs as drizzle's selects do.
  then<A = unknown[], B = never>(
    resolve?: ((value: unknown[]) => A | PromiseLike<A>) | null,
    reject?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this._prepare().all().then(resolve, reject);
  }
}

interface PreparedRead {
  all(): Promise<unknown[]>;
}

/** What D1's batch answers for one statement: its rows as objects keyed by column name. */
const isD1Result = (response: unknown): response is { results: Record<string, unknown>[] } =>
  typeof response === "object" && response !== null && "results" in response && Array.isArray(response.results);

/**
 * A prepared read whose batch result, when D1 answers it, is read by `byKey` rather than by drizzle
 * (`mapResult(response, true)` copies D1's row objects into arrays for the positional mapper).
 * libSQL's batch answers arrays, which drizzle's own mapping serves.
 */
function readByKeyInBatch(prepared: PreparedRead, byKey: (rows: Record<string, unknown>[]) => unknown[]): PreparedRead {
  const mapResult: unknown = Reflect.get(prepared, "mapResult");
  if (typeof mapResult !== "function")
    throw new Error("drizzle's prepared query has no mapResult(): its protocol changed");
  Reflect.set(prepared, "mapResult", (response: unknown, isFromBatch: boolean) =>
    isFromBatch && isD1Result(response)
      ? byKey(response.results)
      : Reflect.apply(mapResult, prepared, [response, isFromBatch]),
  );
  return prepared;
}

/** What a drizzle session offers to prepare a rendered query with a custom row mapper. */
interface Session {
  prepareOneTimeQuery(
    query: Rendered,
    fields: undefined,
    method: "all",
    arrayMode: boolean,
    mapper: (rows: ArrayLike<unknown>[]) => unknown,
  ): PreparedRead;
}

/** A database's session: drizzle's own, left out of its public types (D1's and libSQL's alike). */
function sessionOf(database: Db): Session {
  const session: unknown = Reflect.get(database, "session");
  if (typeof session !== "object" || session === null || !("prepareOneTimeQuery" in session)) {
    throw new Error("drizzle's database has no session.prepareOneTimeQuery(): its protocol changed");
  }
  const prepareOneTimeQuery = session.prepareOneTimeQuery;
  if (typeof prepareOneTimeQuery !== "function") throw new Error("drizzle's prepareOneTimeQuery is not a function");
  return {
    prepareOneTimeQuery: (query, fields, method, arrayMode, mapper) =>
      Reflect.apply(prepareOneTimeQuery, session, [query, fields, method, arrayMode, mapper]),
  };
}

/** Each table's FROM item, built once per isolate. */
const tableItems = new WeakMap<SQLiteTable, SQL>();

/**
 * `prefix` and the conditions ANDed, as drizzle's `and()` renders them (one alone bare, several in
 * parentheses joined by `and`); nothing when there are none.
 */
function conditions(prefix: string, all: readonly (SQL | undefined)[], out: Rendered): void {
  const present = all.filter((c): c is SQL => c !== undefined);
  if (present.length === 0) return;
  out.sql += prefix;
  if (present.length === 1 && present[0]) {
    walk(present[0], out);
    return;
  }
  out.sql += "(";
  present.forEach((c, i) => {
    if (i > 0) out.sql += " and ";
    walk(c, out);
  });
  out.sql += ")";
}

/** `prefix` and the terms separated by commas (a column as `"table"."column"`); nothing when there are none. */
function terms(prefix: string, all: readonly (SQLiteColumn | SQL)[], out: Rendered): void {
  if (all.length === 0) return;
  out.sql += prefix;
  all.forEach((t, i) => {
    if (i > 0) out.sql += ", ";
    walk(t instanceof SQL ? t : new SQL([t]), out);
  });
}

/** A table as a FROM or JOIN item: an alias is `"table" "alias"`, as drizzle writes it. */
function tableItem(table: SQLiteTable): SQL {
  let item = tableItems.get(table);
  if (!item) {
    const name = getTableName(table);
    const original: unknown = Reflect.get(table, ORIGINAL_NAME);
    item =
      typeof original === "string" && original !== name
        ? sql`${sql.identifier(original)} ${sql.identifier(name)}`
        : sql`${table}`;
    tableItems.set(table, item);
  }
  return item;
}

/** Drizzle's key for a table's own name (an alias answers its alias to `getTableName`). */
const ORIGINAL_NAME = Symbol.for("drizzle:OriginalName");

/** A one-table select names its top-level columns without their table, as drizzle does. */
function unqualified(expression: SQL): SQL {
  if (!expression.queryChunks.some((c) => c instanceof Column)) return expression;
  return new SQL(expression.queryChunks.map((c) => (c instanceof Column ? sql.identifier(c.name) : c)));
}

/** Under test: the SELECT built here renders as drizzle's own builder renders the same query. */
/** What decodes a stored value: a column, or a JSON field's schema-checked decoder. */
interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/** A read's keys, in order, and what decodes each one's stored value (undefined: as stored). */
interface Decoding {
  keys: readonly string[];
  decoders: readonly (Decoder | undefined)[];
}

/** The decoder of each JSON field (`jsonOf`): its text parsed and checked by its schema. */
const jsonDecoders = new WeakMap<SQL, Decoder>();

/**
 * The one way to read a JSON value a query builds or a column stores as text (a
 * `json_group_array` sub-select, a `json_object`, a text column holding JSON): a field whose value
 * is parsed and checked by `schema` when the row is decoded, so a row never carries unchecked JSON.
 * NULL (a sub-select over no row, an empty column) reads as `empty`, given as SQL in the field
 * (`coalesce(expression, empty)`), or as null without one.
 * @example
 * const Teachers = z.array(z.object({ id: z.number(), name: z.string() }));
 * const teachers = sql`(SELECT json_group_array(json_object('id', t.id, 'name', t.name)) FROM ...)`;
 * const row = await Groups.select(ctx, { id: groups.id, teachers: jsonOf(teachers, Teachers, "[]") }).first();
 * row?.teachers; // { id: number; name: string }[]
 */
export function jsonOf<S extends z.ZodType>(expression: SQLWrapper, schema: S, empty: string): SQL<z.output<S>>;
export function jsonOf<S extends z.ZodType>(expression: SQLWrapper, schema: S): SQL<z.output<S> | null>;
export function jsonOf(expression: SQLWrapper, schema: z.ZodType, empty?: string): SQL {
  // The fallback written out, not bound: a field without parameters is rendered once per isolate.
  const field =
    empty === undefined
      ? sql`${expression}`
      : sql`coalesce(${expression}, ${sql.raw(`'${empty.replaceAll("'", "''")}'`)})`;
  jsonDecoders.set(field, { mapFromDriverValue: (value) => parseJson(schema, value) });
  return field;
}

/**
 * Columns decode what the database stores (booleans from 0/1, JSON text, timestamps); a column
 * whose decoder is drizzle's identity, and every SQL expression (whose own decoder `aliased` drops),
 * reads what the database gives.
 */
function decodingOf(fields: Fields): Decoding {
  const keys = Object.keys(fields);
  const decoders = keys.map((key) => {
    const f = fields[key];
    if (f instanceof SQL) return jsonDecoders.get(f);
    return f && "mapFromDriverValue" in f && f.mapFromDriverValue !== Column.prototype.mapFromDriverValue
      ? f
      : undefined;
  });
  return { keys, decoders };
}

/**
 * The rows of a query, typed. Drizzle types a select's rows from the aliased selection, which
 * TypeScript cannot relate to `RowOf<F>`; `decode` gives the same keys and decoders, so this is
 * the one place the row type is asserted.
 */
export function rowsOf<Row>(rows: unknown): Row[] {
  // The same keys and decoders as RowOf<F>, which the driver's untyped rows cannot express.
  return rows as Row[];
}

/** The handle drizzle's builder is taken from (`statement()`): where it runs is the data layer's choice. */
const db = (ctx: Ctx): Db => ctx.deps.db;

/** A query over `source` reading `fields` (default: every column of its table). */
export function query<F extends Fields>(ctx: Ctx, source: Source, fields: F): Query<RowOf<F>> {
  return new Query<RowOf<F>>(ctx, { from: source, fields, joins: [], where: [], orderBy: [], groupBy: [] });
}

/** Every column of a table as fields. */
export const columnsOf = <T extends SQLiteTable>(table: T): ColumnsOf<T> => getTableColumns(table);

/**
 * One hand-written read of a school's rows (an import batch's one read over `json_each` rows,
 * which a `Query` cannot write), on the school's database (src/db/shards.ts).
 */
export async function readRow<T>(ctx: Ctx, statement: SQL): Promise<T | undefined> {
  return (await databaseOf(ctx)).get<T>(statement);
}
