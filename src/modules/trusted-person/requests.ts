/**
 * One resource definition for trusted people and trusted addresses, which differ only in their
 * fields: `defineTrustedRequests` builds list, get, create, update, delete and the decision
 * (`PATCH .../status`) over a table with `student_id`, `parent_id` and the decision columns.
 * Both lists filter by student and status; reads and writes go through the student (./common.ts,
 * `visibleThrough`); a registration names its registrant (`registrant`, 404/403/422); a change,
 * a delete and any verb of a module that writes a request are allowed only to whom `mayAlter`
 * allows (the registering guardian while not barred, or staff: 403/422); a change needs a pending
 * request (else 409), a delete withdraws it in any state, and a second decision is a 409.
 * A module declares only its own fields (record, create and update bodies, how a row shows them)
 * and, if any, its decision's extras; its other verbs (the person's images) use `alter`.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../lib/context";
import {
  defineResource,
  type Fields,
  type Filter,
  RecordBase,
  type ResourceConfig,
  type SetValues,
  timestamps,
} from "../../lib/resource/old";
import { handled } from "../../lib/route";
import {
  type ActingCtx,
  actingCtx,
  DecisionBody,
  decided,
  decisionFields,
  decisionOf,
  mayAlter,
  notPending,
  RecordId,
  registrant,
  statusFilter,
  studentIdFilter,
  visibleThrough,
} from "./common";
import { permissions } from "./permissions";

/** A trusted table: the record columns, the student and registrant, the decision. */
type TrustedTable = SQLiteTable & {
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
  schoolId: SQLiteColumn;
  studentId: SQLiteColumn;
  parentId: SQLiteColumn;
  status: SQLiteColumn;
  $inferSelect: TrustedRow;
};

/** What every trusted row holds besides its own fields. */
interface TrustedRow {
  id: number;
  createdAt: string;
  updatedAt: string;
  studentId: number;
  parentId: number | null;
  status: string;
  decidedBy: number | null;
  decidedAt: string | null;
  reason: string | null;
}

export interface TrustedSpec<
  T extends TrustedTable,
  F extends z.ZodRawShape,
  C extends z.ZodRawShape,
  U extends z.ZodObject,
  D extends z.ZodRawShape,
> extends Pick<ResourceConfig<T, z.ZodObject, Fields>, "name" | "plural" | "label" | "entity" | "path" | "tag"> {
  table: T;
  /** The record's own fields (between `parentId` and the decision). */
  fields: F;
  /** Those fields of a row. */
  /** The record's own fields, as this caller may see them. */
  toRecord: (row: T["$inferSelect"], ctx: Ctx) => z.output<z.ZodObject<F>>;
  /** The create body's own fields (after `studentId`, `parentId`): they are the columns they name. */
  create: C;
  /** The update body (every field optional): the columns it names. */
  update: U;
  /** Further fields of the decision's body and the columns they set. */
  decision?: { fields: D; set: (input: z.output<z.ZodObject<D>>) => SetValues<T> };
  /** The plural in summaries: "trusted people". */
  pluralLabel: string;
}

/**
 * The operations of a trusted resource (in the order of the document), the resource itself (for a
 * module's own reads: `find`), its update verb and `alter`, the verb of every change of a request.
 */
export function defineTrustedRequests<
  T extends TrustedTable,
  F extends z.ZodRawShape,
  C extends z.ZodRawShape,
  U extends z.ZodObject,
  D extends z.ZodRawShape = Record<string, never>,
>(spec: TrustedSpec<T, F, C, U, D>) {
  const { table, label } = spec;
  const singular = label.toLowerCase();
  const RecordSchema = RecordBase.extend({
    studentId: z.number().int().openapi({ example: 1 }),
    parentId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The parent profile that registered it; null when the school did" }),
    ...spec.fields,
    ...decisionFields,
  });
  const resource = defineResource({
    name: spec.name,
    plural: spec.plural,
    label,
    entity: spec.entity,
    path: spec.path,
    tag: spec.tag,
    scope: "school",
    table: table as TrustedTable,
    record: RecordSchema,
    toRecord: (r, ctx) => {
      const row = r as unknown as TrustedRow;
      return {
        ...timestamps(row),
        studentId: row.studentId,
        parentId: row.parentId,
        ...spec.toRecord(r as T["$inferSelect"], ctx),
        status: row.status,
        decidedBy: row.decidedBy,
        decidedAt: row.decidedAt,
        reason: row.reason,
      } as z.output<typeof RecordSchema>;
    },
    visibleTo: visibleThrough(table.studentId),
  });

  const pending = { column: table.status, states: ["pending"] };

  const list = resource.list({
    access: permissions.read,
    filters: {
      studentId: studentIdFilter(table.studentId) satisfies Filter<number>,
      status: statusFilter(table.status) satisfies Filter<string>,
    },
    summary: `List ${spec.pluralLabel} (paginated), oldest first`,
    description: "Staff see the school's; a parent (or their delegate) those of their own children.",
  });

  const get = resource.get({ access: permissions.read });

  const CreateBody = z.object({
    studentId: RecordId.openapi({ example: 1, description: "A parent: one of their own children (else 404)" }),
    parentId: RecordId.optional().openapi({
      description: "The registering parent: staff may name a guardian of the student; a parent is that themself",
    }),
    ...spec.create,
  });
  const create = resource.create({
    access: permissions.write,
    input: CreateBody,
    values: async (input, ctx) => {
      const { studentId, parentId, ...own } = input as { studentId: number; parentId?: number };
      return { studentId, parentId: await registrant(ctx as ActingCtx, studentId, parentId), ...own };
    },
    summary: `Register a ${singular} for a student (pending until the school decides)`,
    description:
      "A parent for their own children only (another student is a 404), in their own name or that of the parent they " +
      "act for (another guardian's is a 403), while the school lets them change the student's way home (422); staff " +
      "for any student of the school.",
    errors: [422],
  });

  /**
   * Sets columns of a pending request, for whom `mayAlter` allows (else 403/422), then with the
   * state in the UPDATE's condition (else 409): the update, and a module's own changes (the image
   * upload), so each goes through the same rule.
   */
  async function alter(ctx: ActingCtx, id: number, action: string, set: SetValues<T>) {
    await mayAlter(ctx, { table, label }, id);
    await resource.change(ctx, id, {
      action,
      set: set as SetValues<TrustedTable>,
      from: pending,
      conflict: notPending(label, id),
    });
  }

  const update = resource.update({
    access: permissions.write,
    // Typed as any object here: the handler's body type stays concrete (`change` takes the module's).
    input: spec.update as z.ZodObject,
    summary: `Change a pending ${singular} (409 once decided)`,
    description:
      "Staff change any; a parent (or their delegate) only one they registered (403) while the school lets them " +
      "change the student's way home (422, as for a registration).",
    errors: [422],
  });
  /** Changes the fields sent, only while pending. */
  const change = (ctx: ActingCtx, id: number, input: z.output<U>) => alter(ctx, id, "update", input as SetValues<T>);

  const remove = resource.delete({
    access: permissions.write,
    summary: `Delete (withdraw) a ${singular}`,
    description:
      "In any state. Staff withdraw any; a parent (or their delegate) only one they registered (403) while the " +
      "school lets them change the student's way home (422, as for a registration).",
    check: (ctx, id) => mayAlter(ctx as ActingCtx, { table, label }, id),
    errors: [422],
  });

  const Decision = spec.decision ? DecisionBody.extend(spec.decision.fields) : DecisionBody;
  const decide = resource.action({
    name: "status",
    verb: "decide",
    method: "patch",
    access: permissions.review,
    input: Decision as typeof DecisionBody,
    from: pending,
    conflict: (id) => notPending(label, id),
    set: (ctx, input) => ({
      ...decided(ctx, input),
      ...(spec.decision?.set(input as unknown as z.output<z.ZodObject<D>>) as SetValues<TrustedTable> | undefined),
    }),
    summary: `Approve or reject a pending ${singular} (update status)`,
    description:
      "Records who decided, when and why. A request already decided is a 409; of two racing decisions one wins.",
  });

  const operations = [
    handled(list.route, async (c) => c.json(await list.run(await actingCtx(c), c.req.valid("query"), c.req.url), 200)),
    handled(get.route, async (c) => c.json(await get.run(await actingCtx(c), c.req.valid("param").id), 200)),
    handled(create.route, async (c) => c.json(await create.run(await actingCtx(c), c.req.valid("json")), 201)),
    handled(update.route, async (c) => {
      await change(await actingCtx(c), c.req.valid("param").id, c.req.valid("json") as z.output<U>);
      return c.body(null, 204);
    }),
    handled(remove.route, async (c) => {
      await remove.run(await actingCtx(c), c.req.valid("param").id);
      return c.body(null, 204);
    }),
    handled(decide.route, async (c) =>
      c.json(await decide.run(await actingCtx(c), c.req.valid("param").id, decisionOf(c, Decision)), 200),
    ),
  ];

  return { resource, operations, update: change, alter };
}
