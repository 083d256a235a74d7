/**
 * Delegates: a person (a user, found or invited by phone, given no role) who acts for a parent in
 * the app between `validFrom` and `validUntil` (inclusive dates in the school's time zone), with
 * the parent role's permissions and no more (src/modules/delegate/acting.ts, and the access token:
 * src/modules/auth/service.ts).
 *
 * Naming, changing or removing a delegate needs every permission of the parent role, which the
 * delegate acts with (src/modules/role/grants.ts): parents and staff hold them; a custom role with
 * `delegate.write` alone does not make its holder someone's delegate.
 *
 * Visibility: holders of `parent.read` (reads) / `parent.write` (writes) see and manage every
 * delegate of the school; anyone else (a parent, holding `delegate.read`/`delegate.write` through
 * the parent role) only the delegates of their own parent profile. A delegate sees no delegates:
 * they have no parent profile of their own, and who acts for a parent is the parent's to decide.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import { Parents, parents } from "../../db/schema/parent";
import { SchoolPeople } from "../../db/schema/user";
import { eq, type SQL, sql } from "../../db/sql";
import { BUILTIN_ROLES } from "../../lib/access";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { badRequest, unprocessable } from "../../lib/errors";
import { type Message, m, zodMessage } from "../../lib/message";
import { idFilter } from "../../lib/params";
import { Phone } from "../../lib/phone";
import { defineResource, type Filter, IdParams, nonEmpty, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { ownParent, parentOf, permissions as parentPermissions } from "../parent/api";
import { mayAssign } from "../role/api";
import { addPerson, contactOf, FirstName, identity, LastName, MASKED_CONTACT, nameContains } from "../user/api";
import { permissions } from "./permissions";

// What it answers (the input's dates are checked as calendar dates: the same values).
const Day = z.iso
  .date()
  .openapi({ example: "2026-12-01", description: "YYYY-MM-DD, inclusive, in the school's time zone" });
const From = schoolDate("The first day the delegate acts (inclusive, in the school's time zone)");
const Until = schoolDate("The last day the delegate acts (inclusive, in the school's time zone)");

const Record = RecordBase.extend({
  parentId: z.number().int().openapi({ example: 1, description: "The parent profile this delegate acts for" }),
  parentUserId: z.number().int().openapi({ example: 4, description: "That parent's user id" }),
  userId: z.number().int().openapi({ example: 12, description: "The delegate's user id" }),
  firstName: z.string().openapi({ example: "Rosa" }),
  lastName: z.string(),
  phone: z.string().openapi({
    description: `${MASKED_CONTACT}; shown to the delegate's parent, and with parent.contact`,
  }),
  validFrom: Day,
  validUntil: Day,
});

const parentUsers = Parents.alias("delegate_parent");
/** The school's copy of the delegate's identity, when it has one (src/modules/user/identity.ts). */
const copy = SchoolPeople.alias("delegate_copy");
const identified = identity(users, copy.table);

const fields = {
  id: delegates.id,
  createdAt: delegates.createdAt,
  updatedAt: delegates.updatedAt,
  parentId: delegates.parentId,
  parentUserId: parentUsers.table.userId,
  userId: delegates.userId,
  firstName: identified.firstName,
  lastName: identified.lastName,
  phone: users.phone,
  validFrom: delegates.validFrom,
  validUntil: delegates.validUntil,
};

/** The delegates of the caller's own parent profile, for a caller who does not manage every parent. */
const visibleTo = (ctx: SchoolCtx, access: "read" | "write"): SQL | undefined =>
  ctx.can(access === "read" ? parentPermissions.read : parentPermissions.write)
    ? undefined
    : sql`${delegates.parentId} IN ${Parents.pick(ctx, parents.id, eq(parents.userId, ctx.userId ?? 0))}`;

export const delegateResource = defineResource({
  name: "delegate",
  plural: "delegates",
  label: m`Delegate`,
  path: "/api/v1/delegate",
  tag: "People",
  scope: "school",
  data: Delegates,
  record: Record,
  view: {
    fields,
    join: (q) =>
      q
        .join(Users, eq(users.id, delegates.userId))
        .join(parentUsers, eq(parentUsers.table.id, delegates.parentId))
        .join(copy, eq(copy.table.userId, delegates.userId), "left"),
  },
  toRecord: (ctx, row) => ({
    ...timestamps(row),
    parentId: row.parentId,
    parentUserId: row.parentUserId,
    userId: row.userId,
    firstName: row.firstName,
    lastName: row.lastName,
    // The parent they act for may call them; parent.contact shows them as user.contact does.
    ...contactOf(
      ctx,
      row.userId,
      { phone: row.phone },
      ctx.can(parentPermissions.contact) || ctx.userId === row.parentUserId,
    ),
    validFrom: row.validFrom,
    validUntil: row.validUntil,
  }),
  visibleTo,
  conflictMessage: m`This person is already a delegate of this parent`,
});

const resource = delegateResource;

const filters = {
  parentId: {
    schema: idFilter("A parent id"),
    where: (_ctx: Ctx, v: number) => eq(delegates.parentId, v),
    example: "1",
  } satisfies Filter<number>,
  name: {
    schema: searchTerm("Part of the delegate's first or last name"),
    where: (ctx: SchoolCtx, term: string) => nameContains(delegates.userId, ctx.schoolId, term),
    example: "Rosa",
  } satisfies Filter<string>,
};

export const listDelegates = resource.list({
  access: permissions.read,
  filters,
  summary: "List delegates (paginated), oldest first",
  description: "Staff see every delegate of the school; a parent, their own delegates only.",
});

export const getDelegate = resource.get({ access: permissions.read });

const datesInOrder = (v: { validFrom?: string; validUntil?: string }) =>
  v.validFrom === undefined || v.validUntil === undefined || v.validFrom <= v.validUntil;
const REVERSED = { ...zodMessage(m`validUntil must not be before validFrom`), path: ["validUntil"] };

const CreateBody = z
  .strictObject({
    parentId: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: "Staff: the parent; a parent leaves it out (or names their own profile)", example: 1 }),
    phone: Phone.openapi({ description: "E.164; a new, invited user when the number is unknown" }),
    firstName: FirstName,
    lastName: LastName.optional(),
    validFrom: From,
    validUntil: Until,
  })
  .refine(datesInOrder, REVERSED);

const DAY_MS = 24 * 3600 * 1000;

/** A delegate acts with the parent role's permissions: giving, changing or taking that needs them all. */
const mayDelegate = (ctx: SchoolCtx, verb: Message) => mayAssign(ctx, [BUILTIN_ROLES.parent.id], verb);

/**
 * A delegation that ended before today would never let anyone act: 422. Today is UTC's, a day
 * earlier: every school's date is within a day of it, so no school's today is refused.
 */
function notOver(ctx: SchoolCtx, validUntil: string) {
  const earliest = new Date(ctx.deps.clock.now().getTime() - DAY_MS).toISOString().slice(0, 10);
  if (validUntil < earliest)
    throw unprocessable(m`validUntil ${validUntil} has passed: the delegation would never start`);
}

/**
 * Names a delegate for a parent: staff (`parent.write`) for any parent of the school, a parent for
 * themself only (another parent's id is a 404). One batch: the invited user (when the number is
 * new), the delegate row with its audit row, the record read back; the same person twice for one
 * parent is the unique index's 409, also when two requests race.
 */
export async function createDelegate(ctx: SchoolCtx, input: z.infer<typeof CreateBody>) {
  notOver(ctx, input.validUntil);
  await mayDelegate(ctx, m`delegate`);
  const manager = ctx.can(parentPermissions.write);
  let parent: { id: number; userId: number } | undefined;
  if (input.parentId !== undefined) parent = await parentOf(ctx, input.parentId, !manager);
  else {
    parent = await ownParent(ctx);
    if (!parent) {
      throw unprocessable(
        m`Send parentId: staff name delegates for a parent, a parent for themself; a delegate cannot name delegates`,
      );
    }
  }
  const { userId, statements } = await addPerson(ctx, input);
  if (userId === parent.userId) throw unprocessable(m`A parent cannot be their own delegate`);
  const batch = new Batch(ctx).add(
    ...statements,
    ...Delegates.insert(ctx, {
      parentId: parent.id,
      userId,
      validFrom: input.validFrom,
      validUntil: input.validUntil,
    }),
  );
  const created = batch.read(resource.readOne(ctx, Delegates.insertedId()));
  const [record] = (await batch.commit(resource.messages)).get(created);
  if (!record) throw new Error("delegate: the created row was not read back");
  return resource.toRecord(ctx, record);
}

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/delegate",
  tag: "People",
  operationId: "createDelegate",
  summary: "Name a delegate for a parent",
  description:
    "The person is found by phone (or invited) and given no role: between validFrom and validUntil they act for " +
    "the parent in the app, with the parent role's permissions. 409 if they already are this parent's delegate.",
  access: permissions.write,
  audit: "delegate",
  errors: [409, 422],
  examples: {
    409: "This person is already a delegate of this parent",
    422: [
      { name: "self", summary: "A parent as their own delegate", detail: "A parent cannot be their own delegate" },
      {
        name: "past",
        summary: "A delegation that ended",
        detail: "validUntil 2026-11-20 has passed: the delegation would never start",
      },
    ],
  },
  request: { body: jsonBody(CreateBody, "DelegateCreate") },
  responses: { 201: json(resource.record, "The new delegate") },
});
export const createDelegateOperation = operation(createRoute, (ctx, { body }: InputOf<typeof createRoute>) =>
  createDelegate(ctx, body),
);

const UpdateBody = nonEmpty(z.strictObject({ validFrom: From.optional(), validUntil: Until.optional() })).refine(
  datesInOrder,
  REVERSED,
);

/**
 * Changes the dates (the person's name is theirs: PUT /api/v1/user). One date alone is checked
 * against the other as stored, and the UPDATE is guarded by the same condition, so a concurrent
 * change of the other date cannot leave them reversed (that is a 422: read again and retry).
 */
export async function updateDelegate(ctx: SchoolCtx, id: number, input: z.infer<typeof UpdateBody>) {
  await mayDelegate(ctx, m`delegate`);
  const current = await resource.find(ctx, id);
  const from = input.validFrom ?? current.validFrom;
  const until = input.validUntil ?? current.validUntil;
  if (from > until) {
    throw badRequest(m`Invalid body: validUntil must not be before validFrom`, [
      { path: input.validUntil ? "validUntil" : "validFrom", message: m`validUntil must not be before validFrom` },
    ]);
  }
  if (input.validUntil !== undefined) notOver(ctx, input.validUntil);
  const unchanged = sql`${delegates.validFrom} = ${current.validFrom} AND ${delegates.validUntil} = ${current.validUntil}`;
  await resource.change(ctx, id, {
    action: "update",
    set: { validFrom: from, validUntil: until },
    rules: [{ when: unchanged, message: m`The delegate's dates changed meanwhile; read them again` }],
  });
}

const updateRoute = defineRoute({
  method: "put",
  path: "/api/v1/delegate/{id}",
  tag: "People",
  operationId: "updateDelegate",
  summary: "Change a delegate's dates",
  access: permissions.write,
  audit: "delegate",
  ifMatch: resource.ifMatch,
  errors: [409, 422],
  examples: {
    409: "This person is already a delegate of this parent",
    422: [
      {
        name: "changed",
        summary: "The dates changed meanwhile",
        detail: "The delegate's dates changed meanwhile; read them again",
      },
      {
        name: "past",
        summary: "A delegation that ended",
        detail: "validUntil 2026-11-20 has passed: the delegation would never start",
      },
    ],
  },
  request: { params: IdParams, body: jsonBody(UpdateBody, "DelegateUpdate") },
  responses: { 204: noContent },
});
export const updateDelegateOperation = operation(
  updateRoute,
  async (ctx, { params, body }: InputOf<typeof updateRoute>) => {
    await updateDelegate(ctx, params.id, body);
    return undefined;
  },
);

export const deleteDelegate = resource.delete({
  access: permissions.write,
  check: (ctx) => mayDelegate(ctx, m`withdraw a delegation of`),
});
