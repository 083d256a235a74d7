/**
 * What every operation of a resource shares: how its rows are scoped for a caller (the table's
 * tenant condition comes from its accessor; the resource adds visibility and its parent), how a
 * record is read, the statements of its writes, and the guarded write that tells 404 from 409
 * from 422 when it matched nothing.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch, type Results } from "../../db/batch";
import { copyRow, dropRow } from "../../db/platform-copies";
import { columnsOf, type Fields, type Query, type RowOf } from "../../db/query";
import { and, eq, type SQL, sql } from "../../db/sql";
import type { InsertValues, RecordTable, SetValues } from "../../db/table";
import { type CommitMessages, GuardFailed, guard, inList, type Statement } from "../../db/write";
import type { Access } from "../access";
import type { Ctx } from "../context";
import { conflict, notFound, type ProblemStatus, say, unprocessable } from "../errors";
import type { IfMatch } from "../if-match";
import { m } from "../message";
import { recordId } from "../params";
import type { ContextLoader, ProblemExamples, Tag } from "../route";
import { type Guards, IdParams, type ResourceConfig } from "./types";

/** What each operation may say of itself beyond what the resource decides. */
export type Meta = {
  summary?: string;
  description?: string;
  errors?: readonly ProblemStatus[];
  /** What it answers for its own statuses, in the document (`defineRoute`'s `examples`): every 422 of its rules. */
  examples?: ProblemExamples;
  /** What this operation's context needs read first, in place of the resource's `context`. */
  context?: ContextLoader;
};

/** A guarded change of one record: the change, its audit row and `also`, in one batch. */
export interface Change<T extends RecordTable> extends Guards {
  /** The audit action: `requeue`, `publish`, `delete`. */
  action: string;
  /** The columns it sets; or `remove` to delete the record. */
  set?: SetValues<T>;
  remove?: true;
  /** Statements placed before the change (audit rows that read what it removes with it). */
  before?: Statement[];
  /** Further statements of the batch (they never outlive a change that did not happen). */
  also?: Statement[];
  parentId?: number | null;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function resourceCore<T extends RecordTable, R extends z.ZodObject, V extends Fields, X extends Ctx>(
  config: ResourceConfig<T, R, V, X>,
) {
  const { data, label, parent } = config;
  const table = data.table;
  // A platform resource's writes run on the platform database (a school's copies follow them:
  // docs/scaling.md "Anchors"); a school resource's on its school's.
  const onPlatform = config.scope === "platform" || config.platformRows ? data : undefined;
  if (config.scope === "school" && data.tenancy === "none" && !config.visibleTo && !parent) {
    throw new Error(`${config.name}: a school-scoped resource over a shared table needs visibleTo or a parent`);
  }
  const Name = pascal(config.name);
  const Names = pascal(config.plural);
  const record = config.record.openapi(Name);
  const messages: CommitMessages = {
    conflict: config.conflictMessage ?? m`${label} already exists`,
    reference: m`${label} refers to a record that no longer exists`,
  };
  const stillReferenced = (id: number): CommitMessages => ({
    ...messages,
    reference: m`${label} ${id} is still referenced by other records`,
  });

  const ParentParams = parent
    ? z.object({
        [parent.param]: recordId().openapi({
          param: { name: parent.param, in: "path" },
          example: 1,
          description: `${parent.label.toString()} id`,
        }),
      })
    : undefined;
  // A nested resource's parent param is read by `parentOf`.
  const ItemParams = ParentParams ? ParentParams.extend(IdParams.shape) : IdParams;
  /** The parent's id in a request's path parameters (a nested resource), else null. */
  const parentOf = (params: unknown): number | null => {
    if (!parent || typeof params !== "object" || params === null) return null;
    const id: unknown = Reflect.get(params, parent.param);
    return typeof id === "number" ? id : null;
  };

  /**
   * Visibility and parent: what the resource adds to its table's tenant condition. `own`, when
   * given, is the visibility in place of the resource's (a list's own, for its query).
   */
  function scoped(
    ctx: X,
    extra: SQL | undefined,
    access: "read" | "write",
    parentId: number | null = null,
    own?: { visible: SQL | undefined },
  ) {
    return and(
      extra,
      own ? own.visible : config.visibleTo?.(ctx, access),
      parent && parentId !== null ? eq(parent.column, parentId) : undefined,
    );
  }

  /** The parent record in this school (an existence check inside a batch). */
  const parentQuery = (ctx: X, parentId: number) =>
    parent?.data.select(ctx, { id: parent.data.table.id }).where(eq(parent.data.table.id, parentId)).limit(1);

  // Without a view, V is the table's columns (its default): the fields are those columns.
  const fields = (config.view?.fields ?? columnsOf(data.table)) as V;
  /** The read query of the resource (its view and joins), scoped to the school. */
  function select(ctx: X, how: "read" | "write" = "read"): Query<RowOf<V>> {
    const query = data.select(ctx, fields, how);
    return config.view?.join ? config.view.join(query) : query;
  }
  const toRecord = (ctx: X, row: RowOf<V>) => config.toRecord(ctx, row);

  /** Reads one record; 404 when it is not there for this caller. */
  async function find(ctx: X, id: number, parentId: number | null = null): Promise<z.output<R>> {
    const row = await select(ctx)
      .where(scoped(ctx, eq(table.id, id), "read", parentId))
      .first();
    if (!row) throw notFound(m`${label} ${id} not found`);
    return toRecord(ctx, row);
  }

  /** Why a guarded write matched nothing: a missing parent or record (404), or its state / a rule. */
  async function refuse(
    ctx: X,
    id: number,
    parentId: number | null,
    diagnose?: Guards & { action: string },
  ): Promise<never> {
    const checks: Record<string, SQLiteColumn | SQL> = { id: table.id };
    if (diagnose?.from) checks.state = diagnose.from.column;
    diagnose?.rules?.forEach((rule, i) => {
      checks[`rule${i}`] = sql<number>`CASE WHEN ${rule.when} THEN 1 ELSE 0 END`;
    });
    const row = await data
      .select(ctx, checks, "write")
      .where(scoped(ctx, eq(table.id, id), "write", parentId))
      .first();
    if (!row) {
      if (parent && parentId !== null && !(await parentQuery(ctx, parentId)?.first())) {
        throw notFound(m`${parent.label} ${parentId} not found`);
      }
      throw notFound(m`${label} ${id} not found`);
    }
    if (diagnose?.from && !diagnose.from.states.includes(String(row.state))) {
      throw conflict(
        diagnose.conflict?.(String(row.state)) ??
          say.wrongState(label, id, String(row.state), diagnose.action, diagnose.from.states),
      );
    }
    const failed = diagnose?.rules?.findIndex((_, i) => row[`rule${i}`] !== 1) ?? -1;
    const rule = failed >= 0 ? diagnose?.rules?.[failed] : undefined;
    if (failed >= 0) throw unprocessable(rule?.message ?? m`Refused by a business rule`);
    // It matched now: it changed between the write and this read. The caller may retry.
    throw conflict(m`${label} ${id} changed while it was being written; try again`);
  }

  /** Commits a batch about record `id`; a failed guard becomes the 404 / 409 / 422 that explains it. */
  async function guarded(
    ctx: X,
    id: number,
    batch: Batch,
    options: { parentId?: number | null; diagnose?: Guards & { action: string }; messages?: CommitMessages } = {},
  ): Promise<Results> {
    try {
      return await batch.commit(options.messages ?? messages);
    } catch (err) {
      if (err instanceof GuardFailed) return refuse(ctx, id, options.parentId ?? null, options.diagnose);
      throw err;
    }
  }

  /**
   * The statements of each kind of write on one record of this caller, with their audit rows:
   * the generic operations use them, and a verb of its own composes them with its own statements.
   */
  const writes = {
    /** INSERT (returning the row) + audit; the row gets the school, parent and timestamps. */
    insert(ctx: X, values: InsertValues<T>, parentId: number | null = null) {
      const withParent = parent && parentId !== null ? { ...values, [columnKey(parent.column)]: parentId } : values;
      return data.insert(ctx, withParent);
    },
    /** Audit + UPDATE of one record of this caller + guard (no row: the batch aborts). */
    update(ctx: X, id: number, set: SetValues<T>, action = "update", parentId: number | null = null, extra?: SQL) {
      return data.updateOne(ctx, id, set, { action, where: scoped(ctx, extra, "write", parentId) });
    },
    /** Audit + DELETE of one record of this caller + guard. */
    delete(ctx: X, id: number, parentId: number | null = null, extra?: SQL) {
      return data.deleteOne(ctx, id, { where: scoped(ctx, extra, "write", parentId) });
    },
  };

  /** The key under which the table holds a column (`family_id` -> `familyId`). */
  function columnKey(column: SQLiteColumn): string {
    const entry = Object.entries(columnsOf(table)).find(([, c]) => c === column);
    if (!entry) throw new Error(`${config.name}: column ${column.name} is not in the table`);
    return entry[0];
  }

  /** The record `id` as a read (`id` may be an inserted id): to read one back in a batch. */
  const readOne = (ctx: X, id: number | SQL<number>) => select(ctx).where(eq(table.id, id)).limit(1);

  /**
   * A guarded change of one record: one batch of the conditional UPDATE or DELETE (the record, in
   * an allowed state, meeting the rules), its audit row and `also`; when it matches nothing, one
   * read tells 404 from 409 from 422. With `readBack`, the record as it is after the change.
   */
  async function change(ctx: X, id: number, spec: Change<T>): Promise<void> {
    await changed(ctx, id, spec, false);
  }

  async function changeAndRead(ctx: X, id: number, spec: Change<T>): Promise<z.output<R>> {
    const record = await changed(ctx, id, spec, true);
    if (!record) throw notFound(m`${label} ${id} not found`);
    return record;
  }

  async function changed(ctx: X, id: number, spec: Change<T>, readBack: boolean) {
    const parentId = spec.parentId ?? null;
    const conds: (SQL | undefined)[] = (spec.rules ?? []).map((r) => r.when);
    if (spec.from) conds.push(inList(spec.from.column, spec.from.states));
    const guardedBy = and(...conds);
    const batch = new Batch(ctx, onPlatform).add(...(spec.before ?? []));
    batch.add(
      ...(spec.remove
        ? writes.delete(ctx, id, parentId, guardedBy)
        : writes.update(ctx, id, spec.set ?? {}, spec.action, parentId, guardedBy)),
      ...(spec.also ?? []),
    );
    const after = readBack ? batch.read(readOne(ctx, id)) : undefined;
    const results = await guarded(ctx, id, batch, {
      parentId,
      diagnose: spec,
      messages: spec.remove ? stillReferenced(id) : messages,
    });
    const row = after && results.get(after)[0];
    return row ? toRecord(ctx, row) : undefined;
  }

  /**
   * An update's `If-Match` (src/lib/route.ts `IfMatch`): the record as `get` answers it, its row's
   * `updated_at` guarding the writes. An update of its own declares it: `ifMatch: resource.ifMatch`.
   */
  const ifMatch: IfMatch<X> = {
    label,
    read: (ctx, params) => find(ctx, params.id, parentOf(params)),
    table,
  };

  /**
   * What every operation's route says of itself: its tag, id, summary, access and scope, the
   * records its path names (for the 404's example) and what it answers for its own statuses
   * (the builder's own, then the operation's).
   */
  const about = (spec: Meta & { access: Access }, operationId: string, summary: string, own: ProblemExamples = {}) => ({
    tag: config.tag satisfies Tag,
    operationId,
    summary: spec.summary ?? summary,
    description: spec.description,
    access: spec.access,
    scope: config.scope,
    module: config.module,
    context: spec.context ?? config.context,
    labels: { id: label, ...(parent ? { [parent.param]: parent.label } : {}) },
    examples: { ...own, ...spec.examples },
  });

  /** A state a record of `column` may be in other than `states` (for a 409's example). */
  const otherState = (column: SQLiteColumn, states: readonly string[]) =>
    ("enumValues" in column && Array.isArray(column.enumValues)
      ? column.enumValues.find((v: unknown) => typeof v === "string" && !states.includes(v))
      : undefined) ?? "in another state";

  return {
    config,
    data,
    table,
    Name,
    Names,
    record,
    messages,
    stillReferenced,
    ParentParams,
    ItemParams,
    parentOf,
    parentQuery,
    scoped,
    select,
    toRecord,
    find,
    guarded,
    writes,
    readOne,
    change,
    changeAndRead,
    ifMatch,
    about,
    otherState,
    /** Copies row `id` to the shards that keep it, after its platform write (`config.anchors`). */
    copyAnchors: async (ctx: X, id: number) => {
      if (config.anchors) await copyRow(ctx, table, id, await config.anchors(ctx, id));
    },
    /** The shards that keep row `id` (before it is deleted), and then its deletion there. */
    anchorsOf: async (ctx: X, id: number) => (config.anchors ? await config.anchors(ctx, id) : []),
    dropAnchors: (ctx: X, id: number, shards: readonly string[]) => dropRow(ctx, table, id, shards),
    /** A new batch for a verb of this resource. */
    batch: (ctx: X) => new Batch(ctx, onPlatform),
    /** The current school (a school-scoped resource always has one). */
    school: (ctx: X) => ctx.schoolId,
    /** A guard statement: aborts the batch when the statement before it changed nothing. */
    guard: (ctx: X) => guard(ctx.deps.db),
  };
}

export type ResourceCore<T extends RecordTable, R extends z.ZodObject, V extends Fields, X extends Ctx> = ReturnType<
  typeof resourceCore<T, R, V, X>
>;
