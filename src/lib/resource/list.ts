/**
 * A resource's reads of many records: `list` (a page, filtered and sorted, with its total, in one
 * D1 round trip) and `export` (every record the list gives, as an .xlsx streamed by keyset).
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import { columnsOf, type Fields, type RowOf } from "../../db/query";
import { perDatabase } from "../../db/shards";
import { and, type SQL } from "../../db/sql";
import type { RecordTable } from "../../db/table";
import type { Access } from "../access";
import type { Ctx, SchoolCtx } from "../context";
import { notFound } from "../errors";
import { Message, m } from "../message";
import {
  keyFields,
  keysetRows,
  Listing,
  type OrderKey,
  orderTerms,
  type PageInput,
  PageQuery,
  pageOf,
  sortOrder,
  sortParam,
} from "../pagination";
import { defineRoute, type InputOf, json, serve } from "../route";
import { type Cell, XLSX_TYPE, xlsxResponse } from "../xlsx";
import type { Meta, ResourceCore } from "./core";
import type { Filters, Join } from "./types";

export interface ListSpec<F extends Filters<X>, X extends Ctx = SchoolCtx, V extends Fields = Fields> extends Meta {
  access: Access;
  filters?: F;
  /**
   * Sortable fields (`sort=-createdAt`). Offer only fields an index serves in the school's order
   * (`(school_id, field)`): the query plan suite fails on a sort in a temporary B-tree.
   */
  sort?: Record<string, SQLiteColumn>;
  /**
   * Order when no `sort` is given: `createdAt, id` ascending (an index on `(school_id, created_at)`).
   * Given as keys (`{ by, desc }`, the last one unique) so an export of the list pages by it too.
   */
  defaultOrder?: OrderKey[];
  /**
   * The list's own visibility for the query it was given, in place of the resource's read
   * visibility (a list that shows other rows on request: the deleted ones to staff).
   */
  visibleTo?: (ctx: X, query: object) => SQL | undefined;
  /**
   * A list of every school's rows (the caller in no school) that reads each database (the
   * platform's and each shard's: docs/scaling.md "Shards", group F), in parallel, and merges their
   * rows in the list's order (`compare`, which must be the order's, ending on the unique id): page
   * p of n reads the first p × n rows of each, the total is the sum. In a school: its database only.
   */
  acrossDatabases?: { compare: (a: RowOf<NoInfer<V>>, b: RowOf<NoInfer<V>>) => number };
}

/** What an export takes of its list (`resource.list(...)` gives it): filters, sortable fields, default order. */
export interface ListQuery<X extends Ctx = SchoolCtx> {
  filters: Filters<X>;
  sort?: Record<string, SQLiteColumn>;
  defaultOrder?: OrderKey[];
  visibleTo?: (ctx: X, query: object) => SQL | undefined;
}

export interface ExportSpec<V extends Fields, E extends Fields, X extends Ctx = SchoolCtx> extends Meta {
  access: Access;
  /** The list whose query the export takes: its filters and `sort` (paging accepted and ignored). */
  list: ListQuery<X>;
  /** The file's name (`` m`teachers.xlsx` ``), or the caller's (`` m`roles-school-${id}.xlsx` ``). */
  filename: Message | ((ctx: X) => Message);
  /** The sheet's name and header row (in the request's language). */
  sheet: Message;
  columns: readonly Message[];
  /** The 200 response's description. */
  file: string;
  /** Fields the file adds to the resource's view (a family's name), for this caller, with their joins. */
  extra?: { fields: (ctx: X) => E; join?: Join };
  /** One row of the sheet, as this caller may see it. */
  cells: (ctx: X, row: RowOf<V> & RowOf<E>) => Cell[];
}

/** The conditions a list's filters add for `input` (the values the query schema parsed). */
export function filterConditions<X extends Ctx>(filters: Filters<X>, input: object, ctx: X): (SQL | undefined)[] {
  return Object.entries(filters).flatMap(([key, filter]) => {
    const value: unknown = Reflect.get(input, key);
    return value === undefined ? [] : [filter.where(ctx, value)];
  });
}

/** The page asked for (the query schema parsed both, with their defaults). */
function pageInput(input: object): PageInput {
  const page: unknown = Reflect.get(input, "page");
  const pageSize: unknown = Reflect.get(input, "pageSize");
  return { page: typeof page === "number" ? page : 1, pageSize: typeof pageSize === "number" ? pageSize : 20 };
}

/** The parsed `sort` of a list's query, if any. */
function sortOf(input: object): { column: SQLiteColumn; desc: boolean }[] | undefined {
  const sort: unknown = Reflect.get(input, "sort");
  return Array.isArray(sort) ? sort : undefined;
}

const filterShape = <F extends Filters<never>>(filters: F) =>
  // Object.fromEntries forgets the keys; each one maps to its own filter's schema.
  Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.schema])) as { [K in keyof F]: F[K]["schema"] };

export function listBuilders<T extends RecordTable, R extends z.ZodObject, V extends Fields, X extends Ctx>(
  core: ResourceCore<T, R, V, X>,
) {
  const { config, table, Name, Names, record, ParentParams } = core;
  const createdOrder: OrderKey[] = [{ by: table.createdAt }, { by: table.id }];
  const extensions = (filters: Filters<X>, sort?: Record<string, SQLiteColumn>) => ({
    "x-filters": Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.example])),
    "x-sort": Object.keys(sort ?? {}),
  });

  /** `GET path`: a page of records, filtered and sorted. */
  function list<F extends Filters<X> = Filters<X>>(spec: ListSpec<F, X, V>) {
    const filters: Filters<X> = spec.filters ?? {};
    // One strict object (not extend + strict: every schema made costs start-up time).
    const query = z.strictObject({
      ...PageQuery.shape,
      ...(spec.filters ? filterShape(spec.filters) : {}),
      ...(spec.sort ? { sort: sortParam(spec.sort) } : {}),
    });
    const defaultOrder = orderTerms(spec.defaultOrder ?? createdOrder);
    const route = defineRoute({
      method: "get",
      path: config.path,
      ...core.about(spec, `list${Names}`, `List ${config.plural} (paginated)`),
      errors: spec.errors,
      request: ParentParams ? { query, params: ParentParams } : { query },
      responses: { 200: json(pageOf(record, `${Name}Page`), `A page of ${config.plural}`) },
      extensions: extensions(filters, spec.sort),
    });

    async function run(ctx: X, input: InputOf<typeof route>): Promise<Listing<z.output<R>>> {
      const q = input.query;
      const parentId = core.parentOf(Reflect.get(input, "params"));
      const sort = sortOf(q);
      const orderBy = sort ? orderTerms(sortOrder(sort, table.id)) : defaultOrder;
      const own = spec.visibleTo ? { visible: spec.visibleTo(ctx, q) } : undefined;
      const where = core.scoped(ctx, and(...filterConditions(filters, q, ctx)), "read", parentId, own);
      const page = pageInput(q);
      if (spec.acrossDatabases && ctx.schoolId === null && parentId === null) {
        const { compare } = spec.acrossDatabases;
        const depth = page.page * page.pageSize;
        const parts = await Promise.all(
          perDatabase(ctx).map(async (on) => {
            // Built for the caller; run on that database (the batch's own: src/db/write.ts).
            const batch = new Batch(on);
            const rows = batch.read(
              core
                .select(ctx)
                .where(where)
                .orderBy(...orderBy)
                .limit(depth),
            );
            const total = batch.read(core.data.select(ctx, { id: table.id }).where(where).count());
            const results = await batch.commit();
            return { rows: results.get(rows), total: results.get(total)[0]?.n ?? 0 };
          }),
        );
        const merged = parts.flatMap((p) => p.rows).sort(compare);
        const data = merged.slice(depth - page.pageSize, depth).map((row) => core.toRecord(ctx, row));
        return new Listing(
          data,
          parts.reduce((n, p) => n + p.total, 0),
          page,
        );
      }
      // A platform table's rows served in a school (a user's devices): the platform's database,
      // not the school's shard (docs/scaling.md "Shards", group D).
      const batch = new Batch(ctx, core.data);
      const rows = batch.read(
        core
          .select(ctx)
          .where(where)
          .orderBy(...orderBy)
          .limit(page.pageSize)
          .offset((page.page - 1) * page.pageSize),
      );
      const total = batch.read(core.data.select(ctx, { id: table.id }).where(where).count());
      const parentRow = parentId !== null ? core.parentQuery(ctx, parentId) : undefined;
      const found = parentRow ? batch.read(parentRow) : undefined;
      const results = await batch.commit();
      if (found && results.get(found).length === 0) {
        const label = config.parent?.label ?? config.label;
        throw notFound(parentId === null ? m`${label} not found` : m`${label} ${parentId} not found`);
      }
      const data = results.get(rows).map((row) => core.toRecord(ctx, row));
      return new Listing(data, results.get(total)[0]?.n ?? 0, page);
    }

    return {
      ...serve(route, run),
      // Its own type (not `ApiRoute`): a verb that wraps `run` serves the same route.
      route,
      run,
      filters,
      sort: spec.sort,
      defaultOrder: spec.defaultOrder,
      visibleTo: spec.visibleTo,
    };
  }

  /**
   * `GET path/export`: every record the list gives, as an .xlsx streamed as it is read. It takes
   * the list's query (filters, `sort`; `page` and `pageSize` are accepted and ignored: a file is
   * every row) and its visibility, and reads pages of 500 by keyset in the list's order (its
   * `defaultOrder`, or `createdAt, id`; ties on a `sort` field broken by id).
   */
  function exportList<E extends Fields = Record<string, never>>(spec: ExportSpec<V, E, X>) {
    if (config.parent) throw new Error(`${config.name}: exports of nested resources are not supported`);
    const { filters, sort } = spec.list;
    const defaultOrder = spec.list.defaultOrder ?? createdOrder;
    const ignored = "The list's; accepted and ignored (the file has every row)";
    const query = z.strictObject({
      page: PageQuery.shape.page.openapi({ description: ignored }),
      pageSize: PageQuery.shape.pageSize.openapi({ description: ignored }),
      ...filterShape(filters),
      ...(sort ? { sort: sortParam(sort) } : {}),
    });
    const route = defineRoute({
      method: "get",
      path: `${config.path}/export`,
      ...core.about(spec, `export${Names}`, `Export the current school's ${config.plural} to Excel (.xlsx)`),
      tag: "Documents",
      errors: spec.errors,
      request: { query },
      responses: {
        200: { description: spec.file, content: { [XLSX_TYPE]: { schema: z.string().openapi({ format: "binary" }) } } },
      },
      extensions: extensions(filters, sort),
    });

    /** The file's rows for `input` (the parsed query), page by page. */
    async function* rows(ctx: X, input: object, pageSize = 500): AsyncGenerator<Cell[]> {
      const conds = filterConditions(filters, input, ctx);
      const own = spec.list.visibleTo ? { visible: spec.list.visibleTo(ctx, input) } : undefined;
      const sorted = sortOf(input);
      const order = sorted ? sortOrder(sorted, table.id) : defaultOrder;
      const selected: Fields = {
        ...(config.view?.fields ?? columnsOf(table)),
        ...spec.extra?.fields(ctx),
        ...keyFields(order),
      };
      const read = (after: SQL | undefined, limit: number) => {
        let q = core.data.select(ctx, selected);
        if (config.view?.join) q = config.view.join(q);
        if (spec.extra?.join) q = spec.extra.join(q);
        return q
          .where(core.scoped(ctx, and(...conds, after), "read", null, own))
          .orderBy(...orderTerms(order))
          .limit(limit)
          .all();
      };
      for await (const row of keysetRows(order, read, pageSize)) {
        // The read selected the view's and the extra fields under their own keys (and the order's keys).
        yield spec.cells(ctx, row as RowOf<V> & RowOf<E>);
      }
    }

    /** The download for this caller (a module that reads its caller its own way calls it). */
    const respond = (ctx: X, input: object): Response =>
      xlsxResponse(spec.filename instanceof Message ? spec.filename : spec.filename(ctx), {
        name: spec.sheet,
        columns: spec.columns,
        rows: rows(ctx, input),
      });

    const run = (ctx: X, input: InputOf<typeof route>) => respond(ctx, input.query);
    return { ...serve(route, run), run, rows, respond };
  }

  return { list, export: exportList };
}
