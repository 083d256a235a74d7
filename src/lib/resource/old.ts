/**
 * `defineResource`: one way to define a resource. It takes what a resource *is* (a table, the
 * record it answers, how it is scoped and audited) and gives builders for what it *offers*, one
 * operation each: `list`, `get`, `create`, `update`, `delete` and `action` (a guarded state change
 * such as `PATCH /x/{id}/confirm`). Each builder returns an `Operation` (route + handler, what a
 * module registers) with its service verb `run`, typed from the schemas it was given; an
 * operation that is not built does not exist, in the API or in the types.
 *
 * Contracts every operation keeps: every query is scoped to the current school (and a
 * parent record for nested paths); POST -> 201 with the record; PUT -> 204; DELETE -> 204; an
 * action -> 200 with the record; another school's id -> 404; a unique violation -> 409; a state
 * change from the wrong state -> 409; a business rule -> 422. Every write is one `db.batch`: the
 * change, its audit row, and any statements the operation adds (`also`), all or nothing.
 */
import { z } from "@hono/zod-openapi";
import { and, asc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type AuditTarget, auditCreate, auditDelete, auditUpdate } from "../../db/audit";
import { withSearch } from "../../db/search";
import { type CommitMessages, commit, GuardFailed, guard, inList, insertedId, type Statement } from "../../db/write";
import type { Access, Scope } from "../access";
import type { AppModuleKey } from "../app-modules";
import { type Ctx, ctxOf, schoolOf, tenant } from "../context";
import { conflict, notFound, type ProblemStatus, unprocessable } from "../errors";
import {
  keyFields,
  keysetRows,
  type OrderKey,
  orderTerms,
  type Page,
  PageQuery,
  pageOf,
  readPage,
  sortOrder,
  sortParam,
} from "../pagination";
import { recordId } from "../params";
import { defineRoute, json, jsonBody, noContent, type Tag } from "../route";
import { type Cell, XLSX_TYPE, xlsxResponse } from "../xlsx";

export const IdParams = z.object({
  id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "Record id (integer, min 1)" }),
});

type Table = SQLiteTable & {
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
  schoolId?: SQLiteColumn;
};

/** Column values a create may set: everything but what the block writes itself. */
export type InsertValues<T extends Table> = Omit<T["$inferInsert"], "id" | "schoolId" | "createdAt" | "updatedAt">;
/** Column values an update or action may set (a value or an SQL expression over the row). */
export type SetValues<T extends Table> = { [K in keyof InsertValues<T>]?: InsertValues<T>[K] | SQL };

/** Selected fields of a joined read: columns and SQL expressions, each under its own key. */
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

/**
 * A list filter: its query schema, the condition it adds, and a valid example value (the query
 * plan suite calls every list with every filter's example and checks an index serves it).
 */
export interface Filter<V> {
  schema: z.ZodType<V | undefined>;
  where: (value: V, ctx: Ctx) => SQL | undefined;
  example: string;
}

/** A nested resource's parent: `/api/v1/family/{familyId}/member` reads members of one family. */
export interface Parent {
  /** The path parameter: `familyId`. */
  param: string;
  label: string;
  table: SQLiteTable & { id: SQLiteColumn; schoolId: SQLiteColumn };
  /** The child's column that points at the parent. */
  column: SQLiteColumn;
}

export interface ResourceConfig<T extends Table, R extends z.ZodObject, V extends Fields> {
  /** Singular and plural in camelCase: they make the operationIds (`listDocuments`, `getDocument`). */
  name: string;
  plural: string;
  /** Human label for messages: "Document". */
  label: string;
  /** The name in the audit trail and permissions: `document`. */
  entity: string;
  /** The collection path; for a nested resource it contains the parent's `{param}`. */
  path: string;
  tag: Tag;
  scope: Scope;
  /**
   * The application module every operation of the resource belongs to (`x-module`): where the
   * current school has it disabled, they answer 403 naming it (src/middleware/authorize.ts).
   */
  module?: AppModuleKey;
  table: T;
  /** The returned record (registered as a named OpenAPI schema). */
  record: R;
  /**
   * What a read selects: the table's columns by default, or joined fields (another table's
   * columns, JSON sub-selects) under distinct keys. The block aliases every field by its key, so
   * same-named columns of joined tables cannot collide (D1's batch maps rows by column name).
   */
  view?: { fields: V; join?: (query: any) => any };
  /** The record of a row, as this caller may see it (`ctx`: e.g. a secret shown to its owner only). */
  toRecord: (row: NoInfer<RowOf<V>>, ctx: Ctx) => z.output<R>;
  /**
   * A condition every read (list, get) and write (update, delete, action) adds for this caller,
   * e.g. a user's own rows only. Required for a `school`-scoped table without a `school_id`
   * column: it is then what keeps the school's rows apart.
   */
  visibleTo?: (ctx: Ctx, access: "read" | "write") => SQL | undefined;
  /** Columns never written to the audit trail (token values). */
  secret?: readonly (keyof T["$inferSelect"] & string)[];
  /** The 409 message when a unique index refuses a write. */
  conflictMessage?: string;
  parent?: Parent;
}

/** The conditions a list's filters add for `input` (the values the query schema parsed). */
export function filterConditions(
  filters: Record<string, Filter<any>>,
  input: Record<string, unknown>,
  ctx: Ctx,
): (SQL | undefined)[] {
  return Object.entries(filters).flatMap(([key, filter]) =>
    input[key] === undefined ? [] : [filter.where(input[key], ctx)],
  );
}

type Meta = { summary?: string; description?: string; errors?: readonly ProblemStatus[] };

export interface ListSpec<F extends Record<string, Filter<any>>> extends Meta {
  access: Access;
  filters?: F;
  /**
   * Sortable fields (`sort=-createdAt`). Offer only fields an index serves in the school's order
   * (`(school_id, field)`): the query plan suite fails on a sort in a temporary B-tree.
   */
  sort?: Record<string, SQLiteColumn>;
  /**
   * Order when no `sort` is given: `createdAt, id` ascending (an index on `(school_id, created_at)`).
   * Given as keys (`{ by, desc }`, the last one unique), an export of the list pages by it too.
   */
  defaultOrder?: SQL[] | OrderKey[];
}

/** What an export takes of its list (`resource.list(...)` gives it): filters, sortable fields, default order. */
export interface ListQuery<F extends Record<string, Filter<any>>> {
  filters: F;
  sort?: Record<string, SQLiteColumn>;
  defaultOrder?: SQL[] | OrderKey[];
}

export interface ExportSpec<V extends Fields, E extends Fields> extends Meta {
  access: Access;
  /** The list whose query the export takes: its filters and `sort` (paging accepted and ignored). */
  list: ListQuery<Record<string, Filter<any>>>;
  /** The file's name (`teachers.xlsx`), or the caller's (`roles-school-1.xlsx`). */
  filename: string | ((ctx: Ctx) => string);
  /** The sheet's name and header row. */
  sheet: string;
  columns: readonly string[];
  /** The 200 response's description. */
  file: string;
  /** Fields the file adds to the resource's view (a family's name), for this caller, with their joins. */
  extra?: { fields: (ctx: Ctx) => E; join?: (query: any) => any };
  /** One row of the sheet, as this caller may see it. */
  cells: (row: RowOf<V> & RowOf<E>, ctx: Ctx) => Cell[];
}

const isKey = (o: SQL | OrderKey): o is OrderKey => "by" in o;

type Hooked<I, O> = (input: I, ctx: Ctx, id: number) => O | Promise<O>;
type Also<I> = (ctx: Ctx, id: number | SQL<number>, input: I) => Statement[];

export interface CreateSpec<T extends Table, C extends z.ZodObject> extends Meta {
  access: Access;
  input: C;
  /** Maps the input to column values (checks references, derives fields). Default: the input. */
  values?: (input: z.output<C>, ctx: Ctx, parentId: number | null) => InsertValues<T> | Promise<InsertValues<T>>;
  /** Further statements of the same batch; `id` is the new row's id (an SQL expression). */
  also?: Also<z.output<C>>;
}

export interface UpdateSpec<T extends Table, U extends z.ZodObject> extends Meta {
  access: Access;
  input: U;
  /** Maps the input to column values. Default: the input. */
  values?: Hooked<z.output<U>, SetValues<T>>;
  also?: Also<z.output<U>>;
}

export interface DeleteSpec extends Meta {
  access: Access;
  /** Refuses a delete before it happens (throw an ApiError). */
  check?: (ctx: Ctx, id: number) => void | Promise<void>;
  also?: Also<undefined>;
}

/** A condition the row must meet for an action, else 422 with `message`. */
export interface Rule {
  when: SQL;
  message: string;
}

/** The conditions of a state change: allowed states (else 409) and business rules (else 422). */
export interface Guards {
  /** The states the record may be in (its status column and the allowed values), else 409. */
  from?: { column: SQLiteColumn; states: readonly string[] };
  /** Business rules over the row, else 422. */
  rules?: Rule[];
  /** The 409's detail for the state the record is in (default: names the states `action` needs). */
  conflict?: (state: string) => string;
}

/** A guarded change of one record: the change, its audit row and `also`, in one batch. */
export interface Change<T extends Table> extends Guards {
  /** The audit action: `requeue`, `publish`, `delete`. */
  action: string;
  /** The columns it sets; or `remove` to delete the record. */
  set?: SetValues<T>;
  remove?: true;
  /** Statements placed before the change (audit rows that read what it removes with it). */
  before?: Statement[];
  /** Further statements of the batch (they never outlive a change that did not happen). */
  also?: Statement[];
  /** Reads the record back in the same batch and answers it. */
  readBack?: boolean;
  parentId?: number | null;
}

export interface ActionSpec<T extends Table, I extends z.ZodObject | undefined> extends Meta {
  /** The action's name: its path segment (`confirm` -> `/{id}/confirm`) and audit action. */
  name: string;
  /** The operationId's verb: `confirm` -> `confirmExitPermission`. Default: `name` in camelCase. */
  verb?: string;
  method?: "patch" | "post";
  access: Access;
  input?: I;
  /** The states the record may be in (its status column and the allowed values), else 409. */
  from?: { column: SQLiteColumn; states: readonly string[] };
  /** Business rules over the row, else 422. */
  rules?: (ctx: Ctx, input: InputOf<I>) => Rule[];
  /** The 409's detail for the state the record is in (default: names the states the action needs). */
  conflict?: (id: number) => (state: string) => string;
  /** The change. */
  set: (ctx: Ctx, input: InputOf<I>, id: number) => SetValues<T> | Promise<SetValues<T>>;
  also?: (ctx: Ctx, id: number, input: InputOf<I>) => Statement[];
}

type InputOf<I> = I extends z.ZodObject ? z.output<I> : undefined;

/** Unknown fields are refused; typed as the given object (a generic `.strict()` loses its shape). */
const strict = <C extends z.ZodObject>(schema: C): C => schema.strict() as unknown as C;

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const camel = (s: string) => s.replace(/-(\w)/g, (_, ch: string) => ch.toUpperCase());

export function defineResource<T extends Table, R extends z.ZodObject, V extends Fields = T["_"]["columns"]>(
  config: ResourceConfig<T, R, V>,
) {
  const { table, label, scope, parent } = config;
  if (scope === "school" && !table.schoolId && !config.visibleTo && !parent) {
    throw new Error(`${config.name}: a school-scoped table without school_id needs visibleTo or a parent`);
  }
  const Name = pascal(config.name);
  const Names = pascal(config.plural);
  const record = config.record.openapi(Name);
  const itemPath = `${config.path}/{id}`;
  const audit: AuditTarget = { entity: config.entity, table, secret: config.secret };
  const messages = {
    conflict: config.conflictMessage ?? `${label} already exists`,
    reference: `${label} refers to a record that no longer exists`,
  };

  const ParentParams = parent
    ? z.object({
        [parent.param]: recordId().openapi({
          param: { name: parent.param, in: "path" },
          example: 1,
          description: `${parent.label} id`,
        }),
      })
    : undefined;
  // Typed as the plain `{ id }` params: a nested resource's parent param is read by the block's own
  // handlers, and a route type with a union of params would lose its typed body for handler authors.
  const ItemParams = (ParentParams ? IdParams.extend(ParentParams.shape) : IdParams) as typeof IdParams;
  /** Adds the parent's path params to a request (kept out of its type, as above). */
  const withParent = <Q extends object>(request: Q): Q =>
    ParentParams ? { ...request, params: ParentParams } : request;
  const parentOf = (params: Record<string, unknown> | undefined): number | null =>
    parent && params ? (params[parent.param] as number) : null;

  /** The conditions that keep a query inside the caller's school, parent and visibility. */
  function scoped(ctx: Ctx, extra: SQL | undefined, access: "read" | "write", parentId: number | null = null) {
    const conds: (SQL | undefined)[] = [extra, config.visibleTo?.(ctx, access)];
    if (scope === "school" && table.schoolId) conds.push(tenant(ctx, { schoolId: table.schoolId }));
    if (parent && parentId !== null) conds.push(eq(parent.column, parentId));
    return and(...conds);
  }

  /** The parent record in this school, as a query (for existence checks inside a batch). */
  const parentQuery = (ctx: Ctx, parentId: number) =>
    parent
      ? ctx.deps.db
          .select({ id: parent.table.id })
          .from(parent.table as SQLiteTable)
          .where(and(eq(parent.table.id, parentId), tenant(ctx, parent.table)))
          .limit(1)
      : undefined;

  // Every field under its own alias (the D1 batch gotcha, handled once here).
  const fields = config.view
    ? Object.fromEntries(Object.entries(config.view.fields).map(([key, f]) => [key, aliased(key, f)]))
    : undefined;
  /** The read query of the resource (its view and joins); callers add where, order and limit. */
  function select(ctx: Ctx): any {
    const from = fields ? ctx.deps.db.select(fields) : ctx.deps.db.select();
    const query = from.from(table as SQLiteTable);
    return config.view?.join ? config.view.join(query) : query;
  }
  const toRecord = (row: unknown, ctx: Ctx) => config.toRecord(row as RowOf<V>, ctx);

  /** Reads one record; 404 when it is not there for this caller. */
  async function find(ctx: Ctx, id: number, parentId: number | null = null): Promise<z.output<R>> {
    const [row] = await select(ctx)
      .where(scoped(ctx, eq(table.id, id), "read", parentId))
      .limit(1);
    if (!row) throw notFound(label, id);
    return toRecord(row, ctx);
  }

  /** Why a guarded write matched nothing: a missing parent or record (404), or its state / a rule. */
  async function refuse(
    ctx: Ctx,
    id: number,
    parentId: number | null,
    diagnose?: Guards & { action: string },
  ): Promise<never> {
    const checks: Fields = { id: table.id };
    if (diagnose?.from) checks.state = diagnose.from.column;
    diagnose?.rules?.forEach((rule, i) => {
      checks[`rule${i}`] = sql<number>`CASE WHEN ${rule.when} THEN 1 ELSE 0 END`.as(`rule${i}`);
    });
    const [row] = (await ctx.deps.db
      .select(checks)
      .from(table as SQLiteTable)
      .where(scoped(ctx, eq(table.id, id), "write", parentId))
      .limit(1)) as Record<string, unknown>[];
    if (!row) {
      if (parent && parentId !== null) {
        const [found] = (await parentQuery(ctx, parentId)) ?? [];
        if (!found) throw notFound(parent.label, parentId);
      }
      throw notFound(label, id);
    }
    if (diagnose?.from && !diagnose.from.states.includes(String(row.state))) {
      throw conflict(
        diagnose.conflict?.(String(row.state)) ??
          `${label} ${id} is ${row.state}; ${diagnose.action} needs it to be ${diagnose.from.states.join(" or ")}`,
      );
    }
    const failed = diagnose?.rules?.findIndex((_, i) => row[`rule${i}`] !== 1) ?? -1;
    if (failed >= 0) throw unprocessable(diagnose?.rules?.[failed]?.message ?? "Refused by a business rule");
    // It matched now: it changed between the write and this read. The caller may retry.
    throw conflict(`${label} ${id} changed while it was being written; try again`);
  }

  /** Runs a guarded write; a guard failure becomes the 404 / 409 / 422 that explains it. */
  async function guarded<S extends readonly [Statement, ...Statement[]]>(
    ctx: Ctx,
    id: number,
    parentId: number | null,
    statements: S,
    diagnose?: Parameters<typeof refuse>[3],
    refusals: CommitMessages = messages,
  ) {
    try {
      return await commit(ctx, statements, refusals);
    } catch (err) {
      if (err instanceof GuardFailed) return refuse(ctx, id, parentId, diagnose);
      throw err;
    }
  }

  const now = (ctx: Ctx) => ctx.deps.clock.now().toISOString();

  /** What every operation's route says of itself: its tag, id, summary, access and scope. */
  const about = (spec: Meta & { access: Access }, operationId: string, summary: string) => ({
    tag: config.tag,
    operationId,
    summary: spec.summary ?? summary,
    description: spec.description,
    access: spec.access,
    scope,
    module: config.module,
  });

  /** The `{id}` route's path parameters (the parent's too, for a nested resource). */
  const itemParams = (c: any) => c.req.valid("param") as { id: number } & Record<string, unknown>;

  /**
   * The statements of each kind of write, with their audit rows: the generic operations use them,
   * and a custom verb composes them with its own statements into one `commit`.
   */
  const writes = {
    /** INSERT (returning the row) + audit; the row gets the school, parent and timestamps. */
    insert(ctx: Ctx, values: InsertValues<T>, parentId: number | null = null) {
      const at = now(ctx);
      const schoolId = scope === "school" ? schoolOf(ctx) : null;
      const row = {
        ...(values as Record<string, unknown>),
        ...(table.schoolId && schoolId !== null ? { schoolId } : {}),
        ...(parent && parentId !== null ? { [columnKey(table, parent.column)]: parentId } : {}),
        createdAt: at,
        updatedAt: at,
      };
      return [
        ctx.deps.db
          .insert(table)
          .values(withSearch(table, row) as T["$inferInsert"])
          .returning(),
        auditCreate(ctx, audit, row, schoolId),
      ] as const;
    },
    /** Audit + UPDATE of one record of this caller + guard (no row: the batch aborts). */
    update(ctx: Ctx, id: number, set: SetValues<T>, action = "update", parentId: number | null = null, extra?: SQL) {
      const values = { ...set, updatedAt: now(ctx) };
      const where = scoped(ctx, and(eq(table.id, id), extra), "write", parentId);
      return [
        auditUpdate(ctx, audit, where, values, action),
        ctx.deps.db
          .update(table)
          .set(withSearch(table, values) as never)
          .where(where),
        guard(ctx.deps.db),
      ] as const;
    },
    /** Audit + DELETE of one record of this caller + guard. */
    delete(ctx: Ctx, id: number, parentId: number | null = null, extra?: SQL) {
      const where = scoped(ctx, and(eq(table.id, id), extra), "write", parentId);
      return [auditDelete(ctx, audit, where), ctx.deps.db.delete(table).where(where), guard(ctx.deps.db)] as const;
    },
  };

  const readOne = (ctx: Ctx, id: number | SQL<number>) => select(ctx).where(eq(table.id, id)).limit(1);

  async function change(ctx: Ctx, id: number, spec: Change<T>): Promise<z.output<R> | undefined> {
    const parentId = spec.parentId ?? null;
    const conds: (SQL | undefined)[] = (spec.rules ?? []).map((r) => r.when);
    if (spec.from) conds.push(inList(spec.from.column, spec.from.states));
    const guardedBy = and(...conds);
    const written = spec.remove
      ? writes.delete(ctx, id, parentId, guardedBy)
      : writes.update(ctx, id, spec.set ?? {}, spec.action, parentId, guardedBy);
    const results = await guarded(
      ctx,
      id,
      parentId,
      [...(spec.before ?? []), ...written, ...(spec.also ?? []), ...(spec.readBack ? [readOne(ctx, id)] : [])] as [
        Statement,
        ...Statement[],
      ],
      spec,
      spec.remove ? { ...messages, reference: `${label} ${id} is still referenced by other records` } : messages,
    );
    if (!spec.readBack) return undefined;
    const row = (results.at(-1) as unknown[] | undefined)?.[0];
    if (!row) throw notFound(label, id);
    return toRecord(row, ctx);
  }

  return {
    /** The audit target (entity, table, secrets) for hand-written audited statements. */
    audit,
    writes,
    /**
     * Runs a guarded batch about record `id` (built from `writes` and the verb's own statements);
     * a failed guard becomes a 404.
     */
    commit: <S extends readonly [Statement, ...Statement[]]>(ctx: Ctx, id: number, statements: S) =>
      guarded(ctx, id, null, statements),
    /**
     * A guarded change of one record, for a verb of its own (requeue, delete a draft): one batch of
     * the conditional UPDATE or DELETE (the record, in an allowed state, meeting the rules), its
     * audit row and `also`; when it matches nothing, one read tells 404 from 409 from 422.
     * Actions are this verb behind a route.
     */
    change,
    /** The record `id` as a batch statement (`id` may be an `insertedId`): to read one back. */
    readOne,
    config,
    record,
    /** The record of a row for this caller. */
    toRecord,
    /** Scopes a query to the caller's school, parent and visibility (for this resource's verbs). */
    scoped,
    /** Reads one record (404 if absent here): reference checks of other resources use it. */
    find,

    /** `GET path`: a page of records, filtered and sorted. */
    list<F extends Record<string, Filter<any>> = Record<string, never>>(spec: ListSpec<F>) {
      const filters = (spec.filters ?? {}) as F;
      const shape = Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.schema])) as {
        [K in keyof F]: F[K]["schema"];
      };
      // One strict object (not extend + strict: every schema made costs start-up time).
      const query = z.strictObject({
        ...PageQuery.shape,
        ...shape,
        ...(spec.sort ? { sort: sortParam(spec.sort) } : {}),
      });
      const given: (SQL | OrderKey)[] = spec.defaultOrder ?? [asc(table.createdAt), asc(table.id)];
      const defaultOrder = given.every(isKey) ? orderTerms(given) : (given as SQL[]);
      const route = defineRoute({
        method: "get",
        path: config.path,
        ...about(spec, `list${Names}`, `List ${config.plural} (paginated)`),
        errors: spec.errors,
        request: (ParentParams ? { query, params: ParentParams } : { query }) as { query: typeof query },
        responses: { 200: json(pageOf(record, `${Name}Page`), `A page of ${config.plural}`) },
        extensions: {
          "x-filters": Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.example])),
          "x-sort": Object.keys(spec.sort ?? {}),
        },
      });

      async function run(ctx: Ctx, input: Record<string, unknown>, url: string, parentId: number | null = null) {
        const conds = filterConditions(filters, input, ctx);
        const sort = input.sort as { column: SQLiteColumn; desc: boolean }[] | undefined;
        const orderBy = sort ? orderTerms(sortOrder(sort, table.id)) : defaultOrder;
        const where = scoped(ctx, and(...conds), "read", parentId);
        const page = { page: input.page as number, pageSize: input.pageSize as number };
        const rows = select(ctx)
          .where(where)
          .orderBy(...orderBy)
          .limit(page.pageSize)
          .offset((page.page - 1) * page.pageSize);
        const total = ctx.deps.db
          .select({ n: sql<number>`count(*)` })
          .from(table as SQLiteTable)
          .where(where);
        const check = parentId !== null ? parentQuery(ctx, parentId) : undefined;
        const result = await readPage(ctx.deps.db, rows, total, check, page, url);
        if (!result) throw notFound(parent?.label ?? label, parentId ?? undefined);
        return { ...result, data: result.data.map((row) => toRecord(row, ctx)) } satisfies Page<z.output<R>>;
      }

      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = ParentParams ? (c.req.valid as any)("param") : undefined;
          return c.json(await run(ctxOf(c), c.req.valid("query"), c.req.url, parentOf(params)), 200);
        },
        run,
        filters,
        sort: spec.sort,
        defaultOrder: spec.defaultOrder,
      };
    },

    /**
     * `GET path/export`: every record the list gives, as an .xlsx streamed as it is read. It takes
     * the list's query (filters, `sort`; `page` and `pageSize` are accepted and ignored: a file is
     * every row) and its visibility, and reads pages of 500 by keyset in the list's order (its
     * `defaultOrder` given as keys, or `createdAt, id`; ties on a `sort` field broken by id).
     */
    export<E extends Fields = Record<string, never>>(spec: ExportSpec<V, E>) {
      if (parent) throw new Error(`${config.name}: exports of nested resources are not supported`);
      const { filters, sort } = spec.list;
      const listOrder: (SQL | OrderKey)[] = spec.list.defaultOrder ?? [{ by: table.createdAt }, { by: table.id }];
      // The file pages by keyset in the list's order: it needs that order as keys.
      if (!listOrder.every(isKey)) throw new Error(`${config.name}: give the list's defaultOrder as keys to export it`);
      const defaultOrder: OrderKey[] = listOrder;
      const ignored = "The list's; accepted and ignored (the file has every row)";
      const query = z.strictObject({
        page: PageQuery.shape.page.openapi({ description: ignored }),
        pageSize: PageQuery.shape.pageSize.openapi({ description: ignored }),
        ...Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.schema])),
        ...(sort ? { sort: sortParam(sort) } : {}),
      });
      const route = defineRoute({
        method: "get",
        path: `${config.path}/export`,
        tag: "Documents",
        operationId: `export${Names}`,
        summary: spec.summary ?? `Export the current school's ${config.plural} to Excel (.xlsx)`,
        description: spec.description,
        access: spec.access,
        scope,
        module: config.module,
        errors: spec.errors,
        request: { query },
        responses: {
          200: {
            description: spec.file,
            content: { [XLSX_TYPE]: { schema: z.string().openapi({ format: "binary" }) } },
          },
        },
        extensions: {
          "x-filters": Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.example])),
          "x-sort": Object.keys(sort ?? {}),
        },
      });
      /** The file's rows for `input` (the parsed query), page by page. */
      async function* rows(ctx: Ctx, input: Record<string, unknown>, pageSize = 500): AsyncGenerator<Cell[]> {
        const conds = filterConditions(filters, input, ctx);
        const sorted = input.sort as { column: SQLiteColumn; desc: boolean }[] | undefined;
        const order = sorted ? sortOrder(sorted, table.id) : defaultOrder;
        const extra = Object.entries(spec.extra?.fields(ctx) ?? {}).map(([key, f]) => [key, aliased(key, f)]);
        const selected = { ...(fields ?? getTableColumns(table)), ...Object.fromEntries(extra), ...keyFields(order) };
        const read = (after: SQL | undefined, limit: number) => {
          let q: any = ctx.deps.db.select(selected).from(table as SQLiteTable);
          if (config.view?.join) q = config.view.join(q);
          if (spec.extra?.join) q = spec.extra.join(q);
          return q
            .where(scoped(ctx, and(...conds, after), "read"))
            .orderBy(...orderTerms(order))
            .limit(limit) as Promise<Record<string, unknown>[]>;
        };
        for await (const row of keysetRows(order, read, pageSize)) {
          yield spec.cells(row as RowOf<V> & RowOf<E>, ctx);
        }
      }

      /** The download for this caller (a module that reads its caller its own way calls it). */
      const respond = (ctx: Ctx, input: Record<string, unknown>): Response =>
        xlsxResponse(typeof spec.filename === "string" ? spec.filename : spec.filename(ctx), {
          name: spec.sheet,
          columns: spec.columns,
          rows: rows(ctx, input),
        });

      return {
        route,
        handler: async (c: any): Promise<Response> => respond(ctxOf(c), c.req.valid("query")),
        rows,
        respond,
      };
    },

    /** `GET path/{id}`: one record. */
    get(spec: { access: Access } & Meta) {
      const route = defineRoute({
        method: "get",
        path: itemPath,
        ...about(spec, `get${Name}`, `Get a ${label.toLowerCase()} by id`),
        errors: spec.errors,
        request: { params: ItemParams },
        responses: { 200: json(record, `The ${label.toLowerCase()}`) },
      });
      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = itemParams(c);
          return c.json(await find(ctxOf(c), params.id, parentOf(params)), 200);
        },
        run: find,
      };
    },

    /** `POST path`: creates a record in the current school (and parent), with its audit row. */
    create<C extends z.ZodObject>(spec: CreateSpec<T, C>) {
      const route = defineRoute({
        method: "post",
        path: config.path,
        ...about(spec, `create${Name}`, `Create a ${label.toLowerCase()}`),
        audit: config.entity,
        errors: [409, ...(spec.errors ?? [])],
        request: withParent({ body: jsonBody(strict(spec.input), `${Name}Create`) }),
        responses: { 201: json(record, `The created ${label.toLowerCase()}`) },
      });

      async function run(ctx: Ctx, input: z.output<C>, parentId: number | null = null): Promise<z.output<R>> {
        if (parent && parentId !== null) {
          const [found] = (await parentQuery(ctx, parentId)) ?? [];
          if (!found) throw notFound(parent.label, parentId);
        }
        const values = (spec.values ? await spec.values(input, ctx, parentId) : input) as InsertValues<T>;
        const id = insertedId(table);
        // The INSERT returns the row; a joined view is read back at the end of the same batch.
        const [inserted, , ...rest] = await commit(
          ctx,
          [
            ...writes.insert(ctx, values, parentId),
            ...(spec.also?.(ctx, id, input) ?? []),
            ...(config.view ? [readOne(ctx, id)] : []),
          ],
          messages,
        );
        const created = ((config.view ? rest.at(-1) : inserted) as unknown[] | undefined)?.[0];
        if (!created) throw new Error(`${config.name}: the created row was not read back`);
        return toRecord(created, ctx);
      }

      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = ParentParams ? ((c.req.valid as any)("param") as Record<string, unknown>) : undefined;
          return c.json(await run(ctxOf(c), c.req.valid("json") as z.output<C>, parentOf(params)), 201);
        },
        run,
      };
    },

    /** `PUT path/{id}`: updates the sent fields (an empty body is a 400), with its audit row. */
    update<U extends z.ZodObject>(spec: UpdateSpec<T, U>) {
      const route = defineRoute({
        method: "put",
        path: itemPath,
        ...about(spec, `update${Name}`, `Update a ${label.toLowerCase()}`),
        audit: config.entity,
        errors: [409, ...(spec.errors ?? [])],
        request: { params: ItemParams, body: jsonBody(nonEmpty(strict(spec.input)), `${Name}Update`) },
        responses: { 204: noContent },
      });

      async function run(ctx: Ctx, id: number, input: z.output<U>, parentId: number | null = null): Promise<void> {
        const values = (spec.values ? await spec.values(input, ctx, id) : input) as SetValues<T>;
        await guarded(ctx, id, parentId, [
          ...writes.update(ctx, id, values, "update", parentId),
          ...(spec.also?.(ctx, id, input) ?? []),
        ]);
      }

      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = itemParams(c);
          await run(ctxOf(c), params.id, c.req.valid("json") as z.output<U>, parentOf(params));
          return c.body(null, 204);
        },
        run,
      };
    },

    /** `DELETE path/{id}`, with its audit row (the record's last values). */
    delete(spec: DeleteSpec) {
      const route = defineRoute({
        method: "delete",
        path: itemPath,
        ...about(spec, `delete${Name}`, `Delete a ${label.toLowerCase()}`),
        audit: config.entity,
        errors: spec.errors,
        request: { params: ItemParams },
        responses: { 204: noContent },
      });

      async function run(ctx: Ctx, id: number, parentId: number | null = null): Promise<void> {
        await spec.check?.(ctx, id);
        await guarded(
          ctx,
          id,
          parentId,
          [...writes.delete(ctx, id, parentId), ...(spec.also?.(ctx, id, undefined) ?? [])],
          undefined,
          // A restrict foreign key still points here.
          { ...messages, reference: `${label} ${id} is still referenced by other records` },
        );
      }

      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = itemParams(c);
          await run(ctxOf(c), params.id, parentOf(params));
          return c.body(null, 204);
        },
        run,
      };
    },

    /**
     * `PATCH path/{id}/{name}`: a state change. One guarded conditional UPDATE (the record is
     * here, in an allowed state, and meets the rules) with its audit row and `also` statements in
     * one batch; when it matches nothing, one read tells 404 from 409 (state) from 422 (rule).
     */
    action<I extends z.ZodObject | undefined = undefined>(spec: ActionSpec<T, I>) {
      const verb = spec.verb ?? camel(spec.name);
      const route = defineRoute({
        method: spec.method ?? "patch",
        path: `${itemPath}/${spec.name}`,
        ...about(spec, `${verb}${Name}`, `${pascal(verb)} a ${label.toLowerCase()}`),
        audit: config.entity,
        errors: [...(spec.from ? [409 as const] : []), ...(spec.rules ? [422 as const] : []), ...(spec.errors ?? [])],
        request: spec.input
          ? { params: ItemParams, body: jsonBody(strict(spec.input), `${Name}${pascal(verb)}`) }
          : { params: ItemParams },
        responses: { 200: json(record, `The ${label.toLowerCase()}, changed`) },
      });

      async function run(ctx: Ctx, id: number, input: InputOf<I>, parentId: number | null = null) {
        const record = await change(ctx, id, {
          action: spec.name,
          set: await spec.set(ctx, input, id),
          from: spec.from,
          rules: spec.rules?.(ctx, input),
          conflict: spec.conflict?.(id),
          also: spec.also?.(ctx, id, input),
          readBack: true,
          parentId,
        });
        if (!record) throw notFound(label, id);
        return record;
      }

      return {
        route,
        handler: async (c: any): Promise<Response> => {
          const params = itemParams(c);
          const input = (spec.input ? (c.req.valid as any)("json") : undefined) as InputOf<I>;
          return c.json(await run(ctxOf(c), params.id, input, parentOf(params)), 200);
        },
        run,
      };
    },
  };
}

/** A field under its key as alias (columns keep their decoding). */
function aliased(key: string, f: SQLiteColumn | SQL | SQL.Aliased): SQL.Aliased {
  const expr = "mapFromDriverValue" in f ? sql`${f}`.mapWith(f as SQLiteColumn) : sql`${f}`;
  return expr.as(key);
}

/** The key under which a table holds a column (`family_id` -> `familyId`). */
function columnKey(table: SQLiteTable, column: SQLiteColumn): string {
  const entry = Object.entries(getTableColumns(table)).find(([, c]) => c === column);
  if (!entry) throw new Error(`column ${column.name} is not in the table`);
  return entry[0];
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
