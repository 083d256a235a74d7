/**
 * `defineResource`: one way to define a resource. From a table, the record schema, the input
 * schemas, the access each operation needs and the filters it offers, it makes the routes
 * (list / get / create / update / delete) and the service verbs behind them, every query scoped
 * to the caller's school. Custom actions are ordinary `defineRoute`s next to it.
 *
 * Contracts it keeps (BRIEF 3): POST -> 201 with the record; PUT -> 204; DELETE -> 204; another
 * school's id -> 404; a unique violation -> 409; an empty update -> 400.
 */
import { z } from "@hono/zod-openapi";
import { and, asc, desc, eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Deps } from "../deps";
import type { Access, Scope } from "../middleware/authorize";
import type { Principal } from "./context";
import { conflict, notFound, type ProblemStatus } from "./errors";
import { type Page, PageQuery, pageOf, paginate, sortParam } from "./pagination";
import { recordId } from "./params";
import { defineRoute, json, jsonBody, noContent, type Tag } from "./route";
import type { AppRouter } from "./router";

export const IdParams = z.object({
  id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "Record id (integer, min 1)" }),
});

export type Op = "list" | "get" | "create" | "update" | "delete";

type Table = SQLiteTable & {
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
  schoolId?: SQLiteColumn;
};

type Filter<T = unknown> = { schema: z.ZodType<T | undefined>; where: (value: T) => SQL | undefined };

/** What a service verb knows about the call. */
export interface Caller {
  deps: Deps;
  principal: Principal;
  /** The current school for `school`-scoped resources; null for `platform` ones. */
  schoolId: number | null;
}

export interface ResourceConfig<
  T extends Table,
  R extends z.ZodObject,
  C extends z.ZodObject,
  U extends z.ZodObject,
  F extends Record<string, Filter<any>>,
> {
  /** Singular and plural in camelCase: they make the operationIds (`listDocuments`, `getDocument`). */
  name: string;
  plural: string;
  /** Human label for messages: "Document". */
  label: string;
  path: string;
  tag: Tag;
  scope: Scope;
  table: T;
  /** The returned record (registered as a named OpenAPI schema). */
  record: R;
  toRecord: (row: T["$inferSelect"]) => z.infer<R>;
  /** The operations that exist and who may call each. */
  access: Partial<Record<Op, Access>>;
  create?: C;
  update?: U;
  /** Query filters of the list: each a schema and the condition it adds. */
  filters?: F;
  /**
   * Sortable fields of the list (`sort=-createdAt`). Offer only fields an index serves in the
   * school's order (`(school_id, field)`): test/query-plans.test.ts fails on a sort in a temporary
   * B-tree.
   */
  sort?: Record<string, SQLiteColumn>;
  /**
   * Order when no `sort` is given: `createdAt, id` ascending by default (creation order, served by
   * an index on `(school_id, created_at)`).
   */
  defaultOrder?: SQL[];
  /**
   * A condition every read (list, get) and write (update, delete) adds for this caller, e.g. a
   * user's own rows only, or wider reads than writes. Required
   * for a `school`-scoped table without a `school_id` column: it is then what keeps the school's
   * rows apart.
   */
  visibleTo?: (caller: Caller, access: "read" | "write") => SQL | undefined;
  /** Maps create input to column values (checks references, derives fields). */
  beforeCreate?: (input: z.infer<C>, caller: Caller) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Maps update input to column values. */
  beforeUpdate?: (
    input: z.infer<U>,
    caller: Caller,
    id: number,
  ) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Refuses a delete before it happens (throw an ApiError). */
  beforeDelete?: (caller: Caller, id: number) => Promise<void> | void;
  /** Extra problem statuses an operation can answer, for the OpenAPI document. */
  errors?: Partial<Record<Op, ProblemStatus[]>>;
  /** The 409 message when a unique index refuses a write. */
  conflictMessage?: string;
  /** Summaries for the OpenAPI document, per operation. */
  summaries?: Partial<Record<Op, string>>;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** True when a database error (or its cause) matches: D1 and libSQL word constraint errors alike. */
function isConstraint(err: unknown, pattern: RegExp): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (pattern.test(e.message)) return true;
  }
  return false;
}

export const isUniqueViolation = (err: unknown) => isConstraint(err, /UNIQUE constraint failed/i);
export const isForeignKeyViolation = (err: unknown) => isConstraint(err, /FOREIGN KEY constraint failed/i);

export function defineResource<
  T extends Table,
  R extends z.ZodObject,
  C extends z.ZodObject = z.ZodObject,
  U extends z.ZodObject = z.ZodObject,
  F extends Record<string, Filter<any>> = Record<string, never>,
>(config: ResourceConfig<T, R, C, U, F>) {
  const { table, access, label, scope } = config;
  if (scope === "school" && !table.schoolId && !config.visibleTo) {
    throw new Error(`${config.name}: a school-scoped table without school_id needs visibleTo`);
  }
  const Name = pascal(config.name);
  const Names = pascal(config.plural);
  const record = config.record.openapi(Name);
  const itemPath = `${config.path}/{id}`;
  const filterShape = Object.fromEntries(Object.entries(config.filters ?? {}).map(([k, f]) => [k, f.schema]));
  const ListQuery = PageQuery.extend({
    ...filterShape,
    ...(config.sort ? { sort: sortParam(config.sort) } : {}),
  }).strict();
  const defaultOrder = config.defaultOrder ?? [asc(table.createdAt), asc(table.id)];

  /** The conditions that keep every query inside the caller's school and visibility. */
  function scoped(caller: Caller, extra?: SQL, access: "read" | "write" = "write"): SQL | undefined {
    const conds: (SQL | undefined)[] = [extra, config.visibleTo?.(caller, access)];
    if (scope === "school") {
      const schoolId = schoolOf(caller);
      if (table.schoolId) conds.push(eq(table.schoolId, schoolId));
    }
    return and(...conds);
  }

  /** Maps constraint errors of a write to the problem a caller can act on. */
  const rethrow =
    (op: "write" | "delete") =>
    (err: unknown): never => {
      if (isUniqueViolation(err)) throw conflict(config.conflictMessage ?? `${label} already exists`);
      if (isForeignKeyViolation(err)) {
        // delete: a restrict foreign key still points here; write: a referenced record vanished meanwhile.
        throw conflict(
          op === "delete"
            ? `${label} is still referenced by other records`
            : `${label} refers to a record that no longer exists`,
        );
      }
      throw err;
    };

  const service = {
    async list(caller: Caller, query: Record<string, unknown>, url: string): Promise<Page<z.infer<R>>> {
      const conds: (SQL | undefined)[] = [];
      for (const [key, filter] of Object.entries(config.filters ?? {})) {
        const value = query[key];
        if (value !== undefined) conds.push(filter.where(value));
      }
      const sort = query.sort as { column: SQLiteColumn; desc: boolean }[] | undefined;
      // Ties break on id in the direction of the last field, so one index serves the whole order.
      const lastDesc = sort?.at(-1)?.desc ?? false;
      const orderBy = sort
        ? [...sort.map((s) => (s.desc ? desc(s.column) : asc(s.column))), lastDesc ? desc(table.id) : asc(table.id)]
        : defaultOrder;
      const page = await paginate<T["$inferSelect"]>(caller.deps.db, table, {
        where: scoped(caller, and(...conds), "read"),
        orderBy,
        page: { page: query.page as number, pageSize: query.pageSize as number },
        url,
      });
      return { ...page, data: page.data.map(config.toRecord) };
    },

    async get(caller: Caller, id: number): Promise<z.infer<R>> {
      const rows = await caller.deps.db
        .select()
        .from(table as SQLiteTable)
        .where(scoped(caller, eq(table.id, id), "read"))
        .limit(1);
      if (!rows[0]) throw notFound(label, id);
      return config.toRecord(rows[0] as T["$inferSelect"]);
    },

    async create(caller: Caller, input: z.infer<C>): Promise<z.infer<R>> {
      const values = config.beforeCreate ? await config.beforeCreate(input, caller) : input;
      const now = caller.deps.clock.now().toISOString();
      const row = {
        ...values,
        ...(scope === "school" && table.schoolId ? { schoolId: caller.schoolId } : {}),
        createdAt: now,
        updatedAt: now,
      };
      const created = await caller.deps.db
        .insert(table)
        .values(row as T["$inferInsert"])
        .returning()
        .catch(rethrow("write"));
      return config.toRecord((created as T["$inferSelect"][])[0] as T["$inferSelect"]);
    },

    async update(caller: Caller, id: number, input: z.infer<U>): Promise<void> {
      const values = config.beforeUpdate ? await config.beforeUpdate(input, caller, id) : input;
      const updated = await caller.deps.db
        .update(table)
        .set({ ...values, updatedAt: caller.deps.clock.now().toISOString() } as never)
        .where(scoped(caller, eq(table.id, id)))
        .returning({ id: table.id })
        .catch(rethrow("write"));
      if (updated.length === 0) throw notFound(label, id);
    },

    async remove(caller: Caller, id: number): Promise<void> {
      await config.beforeDelete?.(caller, id);
      const deleted = await caller.deps.db
        .delete(table)
        .where(scoped(caller, eq(table.id, id)))
        .returning({ id: table.id })
        .catch(rethrow("delete"));
      if (deleted.length === 0) throw notFound(label, id);
    },
  };

  const summaries = config.summaries ?? {};
  const errors = config.errors ?? {};
  const routes = {
    list: access.list
      ? defineRoute({
          method: "get",
          path: config.path,
          tag: config.tag,
          operationId: `list${Names}`,
          summary: summaries.list ?? `List ${config.plural} (paginated)`,
          access: access.list,
          scope,
          errors: errors.list,
          request: { query: ListQuery },
          responses: { 200: json(pageOf(record, `${Name}Page`), `A page of ${config.plural}`) },
        })
      : undefined,
    get: access.get
      ? defineRoute({
          method: "get",
          path: itemPath,
          tag: config.tag,
          operationId: `get${Name}`,
          summary: summaries.get ?? `Get a ${label.toLowerCase()} by id`,
          access: access.get,
          scope,
          errors: errors.get,
          request: { params: IdParams },
          responses: { 200: json(record, `The ${label.toLowerCase()}`) },
        })
      : undefined,
    create:
      access.create && config.create
        ? defineRoute({
            method: "post",
            path: config.path,
            tag: config.tag,
            operationId: `create${Name}`,
            summary: summaries.create ?? `Create a ${label.toLowerCase()}`,
            access: access.create,
            scope,
            errors: [409, ...(errors.create ?? [])],
            request: { body: jsonBody(config.create.strict()) },
            responses: { 201: json(record, `The created ${label.toLowerCase()}`) },
          })
        : undefined,
    update:
      access.update && config.update
        ? defineRoute({
            method: "put",
            path: itemPath,
            tag: config.tag,
            operationId: `update${Name}`,
            summary: summaries.update ?? `Update a ${label.toLowerCase()}`,
            access: access.update,
            scope,
            errors: [409, ...(errors.update ?? [])],
            request: { params: IdParams, body: jsonBody(nonEmpty(config.update.strict())) },
            responses: { 204: noContent },
          })
        : undefined,
    delete: access.delete
      ? defineRoute({
          method: "delete",
          path: itemPath,
          tag: config.tag,
          operationId: `delete${Name}`,
          summary: summaries.delete ?? `Delete a ${label.toLowerCase()}`,
          access: access.delete,
          scope,
          errors: errors.delete,
          request: { params: IdParams },
          responses: { 204: noContent },
        })
      : undefined,
  };

  /** Registers the generic handlers of every declared operation (skip some with `except`). */
  function mount(router: AppRouter, options: { except?: Op[] } = {}) {
    const skip = new Set(options.except ?? []);
    const on = (op: Op, handler: (c: any) => Promise<Response>) => {
      const route = routes[op];
      if (route && !skip.has(op)) router.openapi(route as any, handler as any);
    };
    on("list", async (c) => c.json(await service.list(callerOf(c), c.req.valid("query"), c.req.url), 200));
    on("get", async (c) => c.json(await service.get(callerOf(c), c.req.valid("param").id), 200));
    on("create", async (c) => c.json(await service.create(callerOf(c), c.req.valid("json")), 201));
    on("update", async (c) => {
      await service.update(callerOf(c), c.req.valid("param").id, c.req.valid("json"));
      return c.body(null, 204);
    });
    on("delete", async (c) => {
      await service.remove(callerOf(c), c.req.valid("param").id);
      return c.body(null, 204);
    });
    return router;
  }

  return { config, record, routes, service, mount, scoped };
}

/**
 * The current school of a school-scoped call. `authorize` always resolves one for a school route,
 * so a null here is a programming error (a platform route calling school code), not a user's.
 */
export function schoolOf(caller: { schoolId: number | null }): number {
  if (caller.schoolId === null) throw new Error("school-scoped code called without a current school");
  return caller.schoolId;
}

/**
 * The usual access of a resource: reads (list, get) need `read`, writes (create, update, delete)
 * need `write`.
 * @example access: readWrite("document.read", "document.write")
 */
export function readWrite(read: Access, write: Access): Record<Op, Access> {
  return { list: read, get: read, create: write, update: write, delete: write };
}

/** The caller of a request, as service verbs take it. */
export function callerOf(c: { var: { deps: Deps; principal: Principal } }): Caller {
  return { deps: c.var.deps, principal: c.var.principal, schoolId: c.var.principal.schoolId };
}

/** An update body must change something: `{}` is a 400, not a silent 204. */
export function nonEmpty<T extends z.ZodObject>(schema: T) {
  return schema.refine((v) => Object.values(v).some((x) => x !== undefined), {
    message: "Send at least one field to update",
  });
}

/** ISO 8601 text from the database as the API's date-time string. */
export const timestamps = (row: { id: number; createdAt: string; updatedAt: string }) => ({
  id: row.id,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export const RecordBase = z.object({
  id: z.number().int().min(1).openapi({ example: 1 }),
  createdAt: z.iso.datetime().openapi({ example: "2026-11-21T08:00:00.000Z" }),
  updatedAt: z.iso.datetime().openapi({ example: "2026-11-21T08:00:00.000Z" }),
});
