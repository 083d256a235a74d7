/**
 * A resource's operations on one record: `get`, `create`, `update`, `delete` and `action` (a
 * guarded state change such as `PATCH /x/{id}/confirm`). Each write is one batch: the change, its
 * audit row and the statements the operation adds (`also`), all or nothing. Each builder also
 * answers its route, typed, so a verb of its own can serve it (`operation(created.route, verb)`).
 */
import type { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Fields } from "../../db/query";
import type { SQL } from "../../db/sql";
import type { InsertValues, RecordTable, SetValues } from "../../db/table";
import type { Statement } from "../../db/write";
import type { Access } from "../access";
import type { Ctx, SchoolCtx } from "../context";
import { notFound, say } from "../errors";
import type { IfMatch } from "../if-match";
import { type Message, m, zodMessage } from "../message";
import { defineRoute, type InputOf, json, jsonBody, noContent, serve } from "../route";
import type { Meta, ResourceCore } from "./core";
import type { Rule } from "./types";

/** What a hook of a write is given: the record (an SQL expression for a create's new row) and the body. */
export interface Written<I> {
  id: number | SQL<number>;
  body: I;
}

export interface CreateSpec<T extends RecordTable, C extends z.ZodObject, X extends Ctx = SchoolCtx> extends Meta {
  access: Access;
  input: C;
  /** Maps the body to column values (checks references, derives fields). Default: the body. */
  values?: (
    ctx: X,
    input: { body: z.output<C>; parentId: number | null },
  ) => InsertValues<T> | Promise<InsertValues<T>>;
  /** Further statements of the same batch; `id` is the new row's id (an SQL expression). */
  also?: (ctx: X, input: Written<z.output<C>>) => Statement[];
}

export interface UpdateSpec<T extends RecordTable, U extends z.ZodObject, X extends Ctx = SchoolCtx> extends Meta {
  access: Access;
  input: U;
  /** Maps the body to column values. Default: the body. */
  values?: (ctx: X, input: { id: number; body: z.output<U> }) => SetValues<T> | Promise<SetValues<T>>;
  also?: (ctx: X, input: Written<z.output<U>>) => Statement[];
  /** Refuses an update before it happens (throw an ApiError): who may change this record. */
  check?: (ctx: X, input: { id: number }) => void | Promise<void>;
  /** The states the record may be in to be updated (else 409), as for an action. */
  from?: { column: SQLiteColumn; states: readonly string[] };
  /** The 409's detail for the state the record is in. */
  conflict?: (input: { id: number }) => (state: string) => Message;
  /**
   * The record as the GET of its path answers it, when that GET is an operation of its own (a task
   * with the caller's copies): what `If-Match` is checked against. Default: the resource's `get`.
   */
  read?: IfMatch<X>["read"];
}

export interface DeleteSpec<X extends Ctx = SchoolCtx> extends Meta {
  access: Access;
  /** Refuses a delete before it happens (throw an ApiError). */
  check?: (ctx: X, input: { id: number }) => void | Promise<void>;
  /** Statements that must see the record before it goes (what it leaves behind elsewhere; not with `from`). */
  before?: (ctx: X, input: { id: number }) => Statement[];
  also?: (ctx: X, input: Written<undefined>) => Statement[];
  /** The states the record may be in to be deleted (else 409), as for an action. */
  from?: { column: SQLiteColumn; states: readonly string[] };
  /** The 409's detail for the state the record is in. */
  conflict?: (input: { id: number }) => (state: string) => Message;
}

type BodyOf<I> = I extends z.ZodObject ? z.output<I> : undefined;

export interface ActionSpec<T extends RecordTable, I extends z.ZodObject | undefined, X extends Ctx = SchoolCtx>
  extends Meta {
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
  rules?: (ctx: X, input: { id: number; body: BodyOf<I> }) => Rule[];
  /** The 409's detail for the state the record is in (default: names the states the action needs). */
  conflict?: (input: { id: number }) => (state: string) => Message;
  /** The change. */
  set: (ctx: X, input: { id: number; body: BodyOf<I> }) => SetValues<T> | Promise<SetValues<T>>;
  also?: (ctx: X, input: Written<BodyOf<I>>) => Statement[];
}

/** Unknown fields are refused; typed as the given object (a generic `.strict()` loses its shape). */
const strict = <C extends z.ZodObject>(schema: C): C => schema.strict() as C;

/** An update body must change something: `{}` is a 400, not a silent 204. */
export function nonEmpty<T extends z.ZodObject>(schema: T) {
  return schema
    .refine((v) => Object.values(v).some((x) => x !== undefined), zodMessage(m`Send at least one field to update`))
    .openapi({ minProperties: 1 });
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** The record id the document's examples name (as `defineRoute`'s own examples do). */
const EXAMPLE_ID = 42;
const camel = (s: string) => s.replace(/-(\w)/g, (_, ch: string) => ch.toUpperCase());

export function writeBuilders<T extends RecordTable, R extends z.ZodObject, V extends Fields, X extends Ctx>(
  core: ResourceCore<T, R, V, X>,
) {
  const { config, Name, record, ItemParams, ParentParams } = core;
  const label = config.label.toString().toLowerCase();
  const itemPath = `${config.path}/{id}`;

  /** The 409 of a change from a state it does not start from, as the document's example. */
  function wrongState(
    from: { column: SQLiteColumn; states: readonly string[] },
    action: string,
    conflict?: (input: { id: number }) => (state: string) => Message,
  ): Message {
    const state = core.otherState(from.column, from.states);
    return (
      conflict?.({ id: EXAMPLE_ID })(state) ?? say.wrongState(config.label, EXAMPLE_ID, state, action, from.states)
    );
  }

  /** `GET path/{id}`: one record. */
  function get(spec: { access: Access } & Meta) {
    const route = defineRoute({
      method: "get",
      path: itemPath,
      ...core.about(spec, `get${Name}`, `Get a ${label} by id`),
      errors: spec.errors,
      request: { params: ItemParams },
      responses: { 200: json(record, `The ${label}`) },
    });
    const run = (ctx: X, input: InputOf<typeof route>) => core.find(ctx, input.params.id, core.parentOf(input.params));
    return { ...serve(route, run), route, run };
  }

  /** `POST path`: creates a record in the current school (and parent), with its audit row. */
  function create<C extends z.ZodObject>(spec: CreateSpec<T, C, X>) {
    const body = jsonBody(strict(spec.input), `${Name}Create`);
    const route = defineRoute({
      method: "post",
      path: config.path,
      ...core.about(spec, `create${Name}`, `Create a ${label}`, { 409: core.messages.conflict }),
      audit: config.data.entity,
      errors: [409, ...(spec.errors ?? [])],
      request: ParentParams ? { body, params: ParentParams } : { body },
      responses: { 201: json(record, `The created ${label}`) },
    });

    async function run(ctx: X, input: { body: z.output<C>; params?: object }): Promise<z.output<R>> {
      const parentId = core.parentOf(input.params);
      if (parentId !== null && !(await core.parentQuery(ctx, parentId)?.first())) {
        throw notFound(m`${config.parent?.label ?? m`Parent`} ${parentId} not found`);
      }
      const values = spec.values ? await spec.values(ctx, { body: input.body, parentId }) : input.body;
      const id = core.data.insertedId();
      const batch = core.batch(ctx).add(...core.writes.insert(ctx, values, parentId));
      batch.add(...(spec.also?.(ctx, { id, body: input.body }) ?? []));
      const created = batch.read(core.readOne(ctx, id));
      const [row] = (await batch.commit(core.messages)).get(created);
      if (!row) throw new Error(`${config.name}: the created row was not read back`);
      if (config.anchors) await core.copyAnchors(ctx, Number(row.id));
      return core.toRecord(ctx, row);
    }
    return { ...serve(route, run), route, run };
  }

  /** `PUT path/{id}`: updates the sent fields (an empty body is a 400), with its audit row; honours `If-Match`. */
  function update<U extends z.ZodObject>(spec: UpdateSpec<T, U, X>) {
    const route = defineRoute({
      method: "put",
      path: itemPath,
      ...core.about(spec, `update${Name}`, `Update a ${label}`, {
        409: spec.from ? wrongState(spec.from, "update", spec.conflict) : core.messages.conflict,
      }),
      audit: config.data.entity,
      errors: [409, ...(spec.errors ?? [])],
      // The record as its GET answers it; the writes guarded by its row's updated_at.
      ifMatch: spec.read ? { ...core.ifMatch, read: spec.read } : core.ifMatch,
      request: {
        params: ItemParams,
        body: jsonBody(nonEmpty(strict(spec.input)), `${Name}Update`),
      },
      responses: { 204: noContent },
    });

    async function run(ctx: X, input: { params: { id: number }; body: z.output<U> }): Promise<void> {
      const { id } = input.params;
      const parentId = core.parentOf(input.params);
      await spec.check?.(ctx, { id });
      const values = spec.values ? await spec.values(ctx, { id, body: input.body }) : input.body;
      if (spec.from) {
        const also = spec.also?.(ctx, { id, body: input.body });
        const guards = { from: spec.from, conflict: spec.conflict?.({ id }) };
        await core.change(ctx, id, { action: "update", set: values, ...guards, also, parentId });
      } else {
        const batch = core.batch(ctx).add(...core.writes.update(ctx, id, values, "update", parentId));
        batch.add(...(spec.also?.(ctx, { id, body: input.body }) ?? []));
        await core.guarded(ctx, id, batch, { parentId, diagnose: { action: "update" } });
      }
      await core.copyAnchors(ctx, id);
    }
    return { ...serve(route, run), route, run };
  }

  /** `DELETE path/{id}`, with its audit row (the record's last values). */
  function remove(spec: DeleteSpec<X>) {
    const route = defineRoute({
      method: "delete",
      path: itemPath,
      ...core.about(spec, `delete${Name}`, `Delete a ${label}`, {
        409: spec.from ? wrongState(spec.from, "delete", spec.conflict) : core.stillReferenced(EXAMPLE_ID).reference,
      }),
      audit: config.data.entity,
      errors: spec.errors,
      request: { params: ItemParams },
      responses: { 204: noContent },
    });

    async function run(ctx: X, input: { params: { id: number } }): Promise<void> {
      const { id } = input.params;
      const parentId = core.parentOf(input.params);
      await spec.check?.(ctx, { id });
      const anchors = await core.anchorsOf(ctx, id);
      if (spec.from) {
        const also = spec.also?.(ctx, { id, body: undefined });
        const guards = { from: spec.from, conflict: spec.conflict?.({ id }) };
        await core.change(ctx, id, { action: "delete", remove: true, ...guards, also, parentId });
      } else {
        const batch = core
          .batch(ctx)
          .add(...(spec.before?.(ctx, { id }) ?? []), ...core.writes.delete(ctx, id, parentId));
        batch.add(...(spec.also?.(ctx, { id, body: undefined }) ?? []));
        // A restrict foreign key may still point here.
        await core.guarded(ctx, id, batch, { parentId, messages: core.stillReferenced(id) });
      }
      await core.dropAnchors(ctx, id, anchors);
    }
    return { ...serve(route, run), route, run };
  }

  /**
   * `PATCH path/{id}/{name}`: a state change. One guarded conditional UPDATE (the record is here,
   * in an allowed state, and meets the rules) with its audit row and `also` statements in one
   * batch; when it matches nothing, one read tells 404 from 409 (state) from 422 (rule).
   */
  function action<I extends z.ZodObject | undefined = undefined>(spec: ActionSpec<T, I, X>) {
    const verb = spec.verb ?? camel(spec.name);
    const route = defineRoute({
      method: spec.method ?? "patch",
      path: `${itemPath}/${spec.name}`,
      ...core.about(
        spec,
        `${verb}${Name}`,
        `${pascal(verb)} a ${label}`,
        spec.from ? { 409: wrongState(spec.from, spec.name, spec.conflict) } : {},
      ),
      audit: config.data.entity,
      errors: [...(spec.from ? [409 as const] : []), ...(spec.rules ? [422 as const] : []), ...(spec.errors ?? [])],
      request: spec.input
        ? { params: ItemParams, body: jsonBody(strict(spec.input), `${Name}${pascal(verb)}`) }
        : { params: ItemParams },
      responses: { 200: json(record, `The ${label}, changed`) },
    });

    async function run(ctx: X, input: { params: { id: number }; body?: unknown }): Promise<z.output<R>> {
      const { id } = input.params;
      const given = { id, body: bodyOf(input) };
      return core.changeAndRead(ctx, id, {
        action: spec.name,
        set: await spec.set(ctx, given),
        from: spec.from,
        rules: spec.rules?.(ctx, given),
        conflict: spec.conflict?.({ id }),
        also: spec.also?.(ctx, given),
        parentId: core.parentOf(input.params),
      });
    }

    /** The action's body as its schema parsed it (none for an action without input). */
    function bodyOf(input: { body?: unknown }): BodyOf<I> {
      // With an input schema the body is what it parsed; without one BodyOf<I> is undefined.
      return (spec.input ? input.body : undefined) as BodyOf<I>;
    }
    return { ...serve(route, run), route, run };
  }

  return { get, create, update, delete: remove, action };
}
