/**
 * One resource definition for trusted people and trusted addresses, which differ only in their
 * fields: `defineTrustedRequests` builds list, get, create, update, delete and the decision
 * (`PATCH .../status`) over a table with `student_id`, `parent_id` and the decision columns.
 * Both lists filter by student and status; reads and writes go through the student (./common.ts,
 * `visibleThrough`); every operation's context says whom the caller acts for (`actingContext`); a
 * registration names its registrant (`registrant`, 404/403/422); a change, a delete and any verb of
 * a module that writes a request are allowed only to whom `mayAlter` allows (the registering
 * guardian while not barred, or staff: 403/422); a change needs a pending request (else 409), a
 * delete withdraws it in any state, and a second decision is a 409.
 * A module declares only its own fields (record, create and update bodies, how a row shows them)
 * and, if any, its decision's extras; its other verbs (the person's images) use `alter`.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { ColumnsOf, RowOf } from "../../db/query";
import type { TRUSTED_STATUSES } from "../../db/schema/trusted-person";
import type { Data, InsertValues, RecordTable, SetValues } from "../../db/table";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { factChanged, type Redecision } from "../../lib/facts";
import { defineResource, RecordBase, type ResourceConfig, timestamps } from "../../lib/resource";
import { operation } from "../../lib/route";
import {
  actingContext,
  DecisionBody,
  decided,
  decisionFields,
  mayAlter,
  notPending,
  RecordId,
  registrant,
  statusFilter,
  studentIdFilter,
  visibleThrough,
} from "./common";
import { permissions } from "./permissions";

/** Whom a request is for and who registers it: the first fields of a create body. */
const Registration = z.object({
  studentId: RecordId.openapi({ example: 1, description: "A parent: one of their own children (else 404)" }),
  parentId: RecordId.optional().openapi({
    description: "The registering parent: staff may name a guardian of the student; a parent is that themself",
  }),
});

/** A trusted table: the record columns, the student and registrant, the decision. */
type TrustedTable = RecordTable & {
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
  status: (typeof TRUSTED_STATUSES)[number];
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
> extends Pick<ResourceConfig<T, z.ZodObject, ColumnsOf<T>>, "name" | "plural" | "label" | "path" | "tag"> {
  data: Data<T>;
  /** The record's own fields (between `parentId` and the decision). */
  fields: F;
  /** The record's own fields of a row, as this caller may see them. */
  toRecord: (ctx: SchoolCtx, row: T["$inferSelect"]) => z.output<z.ZodObject<F>>;
  /** The create body's own fields (after `studentId`, `parentId`): they are the columns they name. */
  create: C;
  /** The update body (every field optional): the columns it names. */
  update: U;
  /** Further fields of the decision's body and the columns they set. */
  decision?: { fields: D; set: (input: z.output<z.ZodObject<D>>) => SetValues<T> };
  /** The plural in summaries: "trusted people". */
  pluralLabel: string;
  /** The exit permissions' fact its withdrawal changes: the permissions that name it no longer hold. */
  fact: "trusted-person" | "trusted-address";
}

/**
 * The operations of a trusted resource (in the order of the document), the resource itself (for a
 * module's own reads: `find`), and `alter`, the verb of every change of a request.
 */
export function defineTrustedRequests<
  T extends TrustedTable,
  F extends z.ZodRawShape,
  C extends z.ZodRawShape,
  U extends z.ZodObject,
  D extends z.ZodRawShape = Record<string, never>,
>(spec: TrustedSpec<T, F, C, U, D>) {
  const { data, label } = spec;
  const table = data.table;
  const singular = label.toString().toLowerCase();
  // Typed as a record schema of any fields: the module's own fields are checked by its `toRecord`.
  const RecordSchema: z.ZodObject = RecordBase.extend({
    studentId: z.number().int().openapi({ example: 1 }),
    parentId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The parent profile that registered it; null when the school did" }),
    ...spec.fields,
    ...decisionFields,
  });
  /** The row of a read: every column of the table (drizzle's `$inferSelect` of it). */
  const rowOf = (row: RowOf<ColumnsOf<T>>): T["$inferSelect"] =>
    // RowOf<ColumnsOf<T>> is T's $inferSelect for every table; TypeScript cannot relate them for a generic T.
    row as T["$inferSelect"];
  const resource = defineResource({
    name: spec.name,
    plural: spec.plural,
    label,
    path: spec.path,
    tag: spec.tag,
    scope: "school",
    data,
    record: RecordSchema,
    toRecord: (ctx, r) => {
      const row = rowOf(r);
      return {
        ...timestamps(row),
        studentId: row.studentId,
        parentId: row.parentId,
        ...spec.toRecord(ctx, row),
        status: row.status,
        decidedBy: row.decidedBy,
        decidedAt: row.decidedAt,
        reason: row.reason,
      };
    },
    visibleTo: visibleThrough(table.studentId),
    context: actingContext,
  });

  const pending = { column: table.status, states: ["pending"] };
  const request = { data, label };

  const list = resource.list({
    access: permissions.read,
    filters: { studentId: studentIdFilter(table.studentId), status: statusFilter(table.status) },
    summary: `List ${spec.pluralLabel} (paginated), oldest first`,
    description: "Staff see the school's; a parent (or their delegate) those of their own children.",
  });

  const get = resource.get({ access: permissions.read });

  // Typed as the registration: the module's own fields (the rest of the body) are columns it names.
  const CreateBody: z.ZodObject<typeof Registration.shape> = Registration.extend(spec.create);
  const create = resource.create({
    access: permissions.write,
    input: CreateBody,
    values: async (ctx, { body }) => {
      const { studentId, parentId, ...own } = body;
      const values = { studentId, parentId: await registrant(ctx, studentId, parentId), ...own };
      // The create body's own fields name columns of T (TrustedSpec's `create`); TypeScript cannot see it for a generic T.
      return values as InsertValues<T>;
    },
    summary: `Register a ${singular} for a student (pending until the school decides)`,
    description:
      "A parent for their own children only (another student is a 404), in their own name or that of the parent they " +
      "act for (another guardian's is a 403), while the school lets them change the student's way home (422); staff " +
      "for any student of the school.",
    errors: [422],
    examples: {
      422: "Parent 7 may not authorise trusted people or addresses for student 42: this guardian may not request changes to the student's way home",
    },
  });

  /**
   * Sets columns of a pending request, for whom `mayAlter` allows (else 403/422), then with the
   * state in the UPDATE's condition (else 409): a module's own changes (the image upload) go
   * through the same rule as the update.
   */
  async function alter(ctx: SchoolCtx, id: number, action: string, set: SetValues<T>) {
    await mayAlter(ctx, request, id);
    await resource.change(ctx, id, { action, set, from: pending, conflict: notPending(label, id) });
  }

  const update = resource.update({
    access: permissions.write,
    input: spec.update,
    // The update body names columns of T (TrustedSpec's `update`); TypeScript cannot see it for a generic T.
    values: (_ctx, { body }) => body as SetValues<T>,
    check: (ctx, { id }) => mayAlter(ctx, request, id),
    from: pending,
    conflict: ({ id }) => notPending(label, id),
    summary: `Change a pending ${singular} (409 once decided)`,
    description:
      "Staff change any; a parent (or their delegate) only one they registered (403) while the school lets them " +
      "change the student's way home (422, as for a registration).",
    errors: [422],
    examples: {
      422: "Parent 7 may not authorise trusted people or addresses for student 42: this guardian may not request changes to the student's way home",
    },
  });

  /** What a withdrawal decided again about the exit permissions naming it: prepared, then in its batch. */
  const redecided = new WeakMap<Ctx, Redecision>();
  const removed = resource.delete({
    access: permissions.write,
    summary: `Delete (withdraw) a ${singular}`,
    description:
      "In any state. Staff withdraw any; a parent (or their delegate) only one they registered (403) while the " +
      "school lets them change the student's way home (422, as for a registration). The exit permissions that " +
      "name it from today on are withdrawn in the same write (seats given back, the family and the office told).",
    check: async (ctx, { id }) => {
      await mayAlter(ctx, request, id);
      redecided.set(ctx, await factChanged(ctx, { fact: spec.fact, id }));
    },
    // Before the delete: the permissions' reference to it is cleared with it.
    before: (ctx) => redecided.get(ctx)?.statements ?? [],
    errors: [422],
    examples: {
      422: "Parent 7 may not authorise trusted people or addresses for student 42: this guardian may not request changes to the student's way home",
    },
  });

  const decision = spec.decision;
  const extra = decision && { schema: z.object(decision.fields), set: decision.set };
  const decide = resource.action({
    name: "status",
    verb: "decide",
    method: "patch",
    access: permissions.review,
    input: decision ? DecisionBody.extend(decision.fields) : DecisionBody,
    from: pending,
    conflict: ({ id }) => notPending(label, id),
    set: (ctx, { body }) => ({
      ...decided(ctx, body),
      // The module's own fields of the body, read with their own schema (already validated: typed, no cast).
      ...(extra ? extra.set(extra.schema.parse(body)) : {}),
    }),
    summary: `Approve or reject a pending ${singular} (update status)`,
    description:
      "Records who decided, when and why. A request already decided is a 409; of two racing decisions one wins.",
  });

  const remove = operation(removed.route, async (ctx: SchoolCtx, input: { params: { id: number } }) => {
    await removed.run(ctx, input);
    await redecided.get(ctx)?.dispatch();
  });

  const operations = [list, get, create, update, remove, decide];
  return { resource, operations, alter };
}
