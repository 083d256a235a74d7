/**
 * The one list contract: `page` and `pageSize` in, the envelope
 * `{ data, page, pageSize, total, lastPage, next, previous }` out, and one D1 round trip per page
 * (the rows and the count go in a single `batch`).
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { and, Column, is, or, type SQL, sql } from "../db/sql";
import { m } from "./message";
import { integerString } from "./params";

export const MAX_PAGE_SIZE = 100;

export const PageQuery = z.object({
  page: integerString(z.number().int().min(1).max(1_000_000))
    .default(1)
    .openapi({ description: "Page number, from 1" }),
  pageSize: integerString(z.number().int().min(1).max(MAX_PAGE_SIZE))
    .default(20)
    .openapi({ description: `Records per page, 1 to ${MAX_PAGE_SIZE}` }),
});

export type PageInput = z.infer<typeof PageQuery>;

/** The envelope schema for a list of `item`. */
export function pageOf<T extends z.ZodType>(item: T, name: string) {
  // The envelope's own fields are made once and shared by every list (schemas cost start-up time).
  PAGE_FIELDS ??= {
    page: z.number().int().openapi({ description: "This page's number, from 1" }),
    pageSize: z.number().int().openapi({ description: "Records per page, as asked" }),
    total: z.number().int().openapi({ description: "Records on every page together" }),
    lastPage: z.number().int().openapi({ description: "The last page's number (1 when there are no records)" }),
    next: z.string().nullable().openapi({
      example: "/api/v1/permission?page=2&pageSize=20",
      description: "The next page's path and query, or null on the last page",
    }),
    previous: z.string().nullable().openapi({
      description: "The previous page's path and query, or null on the first page",
    }),
  };
  return z
    .object({ data: z.array(item).openapi({ description: "The records of this page" }), ...PAGE_FIELDS })
    .openapi(name);
}

let PAGE_FIELDS:
  | {
      page: z.ZodNumber;
      pageSize: z.ZodNumber;
      total: z.ZodNumber;
      lastPage: z.ZodNumber;
      next: z.ZodNullable<z.ZodString>;
      previous: z.ZodNullable<z.ZodString>;
    }
  | undefined;

export type Page<T> = {
  data: T[];
  page: number;
  pageSize: number;
  total: number;
  lastPage: number;
  next: string | null;
  previous: string | null;
};

/**
 * A page of records as a list verb answers it: the HTTP layer makes it the envelope, with the
 * links to the neighbouring pages from the request's URL (`operation` in src/lib/route.ts).
 */
export class Listing<T> {
  constructor(
    readonly data: T[],
    readonly total: number,
    readonly page: PageInput,
  ) {}

  envelope(url: string): Page<T> {
    return envelope(this.data, this.total, this.page, url);
  }
}

/** Builds the envelope; `url` is the request URL whose `page` is replaced for next/previous. */
export function envelope<T>(data: T[], total: number, { page, pageSize }: PageInput, url: string): Page<T> {
  const lastPage = Math.max(1, Math.ceil(total / pageSize));
  return {
    data,
    page,
    pageSize,
    total,
    lastPage,
    next: page < lastPage ? pageLink(url, page + 1, pageSize) : null,
    previous: page > 1 ? pageLink(url, Math.min(page - 1, lastPage), pageSize) : null,
  };
}

/** A query parameter's name as a query parser reads it (`+` a space, `%xx` decoded). */
function paramName(pair: string): string {
  const eq = pair.indexOf("=");
  const raw = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll("+", " ");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The path and query of `url` with `page` and `pageSize` set as `URLSearchParams.set` sets them (the
 * first of a name takes the value in its place, later ones go; a missing one is appended), and the
 * other parameters as the client wrote them. Without parsing the URL: a page's links are built on
 * every list request.
 */
export function pageLink(url: string, page: number, pageSize: number): string {
  // A request's URL has no fragment.
  const start = url.indexOf("/", url.indexOf("://") + 3);
  const q = url.indexOf("?", start);
  const path = q < 0 ? url.slice(start) : url.slice(start, q);
  const out: string[] = [];
  let sawPage = false;
  let sawSize = false;
  if (q >= 0) {
    for (const pair of url.slice(q + 1).split("&")) {
      if (pair === "") continue;
      const name = paramName(pair);
      if (name === "page") {
        if (!sawPage) out.push(`page=${page}`);
        sawPage = true;
      } else if (name === "pageSize") {
        if (!sawSize) out.push(`pageSize=${pageSize}`);
        sawSize = true;
      } else out.push(pair);
    }
  }
  if (!sawPage) out.push(`page=${page}`);
  if (!sawSize) out.push(`pageSize=${pageSize}`);
  return `${path}?${out.join("&")}`;
}

/**
 * A `sort` query parameter over the given fields: `sort=name` or `sort=-createdAt,name` (also
 * `sort=-createdAt&sort=name`). In the document it is an array of the list's own keys, each
 * ascending or `-` descending, comma-separated (`style: form, explode: false`), so a generated
 * client types it as a union of those keys. An unknown field is a 400 that lists the allowed ones.
 */
export function sortParam<F extends string>(fields: Record<F, SQLiteColumn>) {
  // A Map: `sort=constructor` or `sort=__proto__` must not find Object.prototype's members.
  const columns = new Map<string, SQLiteColumn>(Object.entries(fields));
  const names = [...columns.keys()];
  const keys = names.flatMap((n) => [n, `-${n}`]);
  return (
    z
      .preprocess(
        (v) => (typeof v === "string" ? (v === "" ? undefined : v.split(",")) : v),
        z.array(z.string().max(100)).max(names.length).optional(),
      )
      // The document shows the keys as the items' enum; the check is here so a 400 names `sort` itself.
      .openapi({
        param: { style: "form", explode: false },
        description:
          "The order: one or more of the list's fields, comma-separated; `-` before one for descending. Ties are broken by id.",
        example: [`-${names[0]}`],
        items: { type: "string", enum: keys },
      })
      .transform((value, ctx) => {
        const out: { column: SQLiteColumn; desc: boolean }[] = [];
        for (const key of value ?? []) {
          const desc = key.startsWith("-");
          const name = desc ? key.slice(1) : key;
          const column = columns.get(name);
          if (!column) {
            ctx.addIssue({
              code: "custom",
              message: m`Unknown sort field "${name}"; use one of: ${names.join(", ")}`.render(),
            });
            return z.NEVER;
          }
          out.push({ column, desc });
        }
        return out.length > 0 ? out : undefined;
      })
  );
}

/**
 * One key of an order a keyset pages through: a column or expression and its direction. The last
 * key of an order is unique (the id), so the order is total and a page never skips a tie.
 */
export interface OrderKey {
  by: SQLiteColumn | SQL;
  desc?: boolean;
}

/** The order of a list read: the `sort` fields, ties broken by id in the last field's direction. */
export function sortOrder(sort: readonly { column: SQLiteColumn; desc: boolean }[], id: SQLiteColumn): OrderKey[] {
  // In the last field's direction, so one index (whose entries end with the rowid) serves the whole order.
  return [...sort.map((s) => ({ by: s.column, desc: s.desc })), { by: id, desc: sort.at(-1)?.desc ?? false }];
}

/** An order as ORDER BY terms. */
export const orderTerms = (order: readonly OrderKey[]): SQL[] =>
  order.map((k) => (k.desc ? sql`${k.by} desc` : sql`${k.by} asc`));

/** Each key of the order selected under its own alias (`_key0`, ...): where a page ends. */
export function keyFields(order: readonly OrderKey[]): Record<string, SQL.Aliased> {
  return Object.fromEntries(
    order.map((k, i) => {
      const expr = is(k.by, Column) ? sql`${k.by}`.mapWith(k.by) : sql`${k.by}`;
      return [`_key${i}`, expr.as(`_key${i}`)];
    }),
  );
}

/**
 * The rows after `values` (the last row's keys) in `order`. SQLite sorts NULL first: a NULL key is
 * before every value ascending and after every value descending, which the conditions follow, so a
 * sort on a nullable column pages as the list orders it.
 */
export function afterKeys(order: readonly OrderKey[], values: readonly unknown[]): SQL | undefined {
  const known = values.every((v) => v !== null && v !== undefined);
  const ascending = order.every((k) => !k.desc);
  // Descending, a NULL key comes after every value: a row value would leave those rows out.
  const descending = order.every((k) => k.desc && "notNull" in k.by && k.by.notNull);
  if (known && (ascending || descending)) {
    // A row value: SQLite ranges over an index with it.
    const keys = sql.join(
      order.map((k) => sql`${k.by}`),
      sql`, `,
    );
    const last = sql.join(
      values.map((v) => sql`${v}`),
      sql`, `,
    );
    return ascending ? sql`(${keys}) > (${last})` : sql`(${keys}) < (${last})`;
  }
  const beyond = (k: OrderKey, v: unknown): SQL | undefined => {
    if (v === null || v === undefined) return k.desc ? undefined : sql`${k.by} IS NOT NULL`;
    return k.desc ? or(sql`${k.by} < ${v}`, sql`${k.by} IS NULL`) : sql`${k.by} > ${v}`;
  };
  const same = (k: OrderKey, v: unknown): SQL =>
    v === null || v === undefined ? sql`${k.by} IS NULL` : sql`${k.by} = ${v}`;
  const branches = order.flatMap((k, i) => {
    const next = beyond(k, values[i]);
    return next ? [and(...order.slice(0, i).map((p, j) => same(p, values[j])), next)] : [];
  });
  return branches.length ? or(...branches) : sql`0`;
}

/**
 * Every row of a read in `order`, page by page (an export): each page starts after the last row of
 * the one before (a keyset, so page n costs what page 1 costs, unlike an OFFSET), one D1 call a
 * page. `read(after, limit)` adds `after` to its conditions, orders by `orderTerms(order)` and
 * selects `keyFields(order)`.
 */
export async function* keysetRows<R extends Record<string, unknown>>(
  order: readonly OrderKey[],
  read: (after: SQL | undefined, limit: number) => Promise<R[]>,
  pageSize = 500,
): AsyncGenerator<R> {
  let after: SQL | undefined;
  for (;;) {
    const rows = await read(after, pageSize);
    yield* rows;
    const last = rows.at(-1);
    if (rows.length < pageSize || !last) return;
    after = afterKeys(
      order,
      order.map((_, i) => last[`_key${i}`]),
    );
  }
}
