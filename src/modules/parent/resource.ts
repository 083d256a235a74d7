/**
 * Parents: the users who hold the built-in parent role (id 5) in the current school. The record is
 * their parent profile (the `parent` row migration 0017's trigger creates when the role is given):
 * `id` is the profile's, `userId` the person's. Creating one gives the role (finding or inviting the
 * person by phone) and sets the relationship in the same batch; deleting one takes the role away
 * (the trigger removes the profile, and its delegates go with it); the user stays.
 *
 * Giving or taking the parent role needs every permission it grants; editing the person, or taking
 * the role from someone who holds more than the caller, is refused (403: src/modules/role/grants.ts).
 *
 * Visibility: holders of `parent.read` (school admins, staff, a teacher granted it) see the
 * school's parents; anyone else sees only their own profile. Phones and emails are shown to
 * holders of `user.contact` or `parent.contact` and to the parent themself; to others they are
 * masked (src/modules/user/contact.ts).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { RoleUsers, roleUsers, Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { SchoolPeople } from "../../db/schema/user";
import { and, eq, type SQL, sql } from "../../db/sql";
import { guard } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { idFilter } from "../../lib/params";
import { Phone } from "../../lib/phone";
import { defineResource, type Filter, IdParams, nonEmpty, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { mayTake } from "../role/api";
import { Email } from "../school/api";
import {
  addPerson,
  contactOf,
  FirstName,
  identity,
  LastName,
  MASKED_CONTACT,
  nameContains,
  personEdit,
} from "../user/api";
import { permissions } from "./permissions";

const PARENT_ROLE = BUILTIN_ROLES.parent.id;

export const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
const STATUSES = ["invited", "active", "inactive"] as const;

const Relationship = z.enum(RELATIONSHIPS).openapi({ example: "mother" });

const Record = RecordBase.extend({
  userId: z.number().int().openapi({ example: 4 }),
  firstName: z.string().openapi({ example: "Paula" }),
  lastName: z.string().openapi({ example: "Parent" }),
  phone: z
    .string()
    .openapi({ example: "+15550000004", description: `${MASKED_CONTACT} (parent.contact shows it too)` }),
  email: z
    .string()
    .nullable()
    .openapi({ description: `${MASKED_CONTACT} (parent.contact shows it too)` }),
  relationship: Relationship,
  familyId: z.number().int().nullable().openapi({ description: "The parent's family (null until one is set)" }),
  status: z.enum(STATUSES).openapi({ description: "The person's account: invited means never signed in" }),
}).openapi({ description: "`id` is the parent profile's; `userId` the person's" });

/** A parent's phone and email as this caller may see them: `parent.contact` shows them as `user.contact` does. */
const parentContact = (ctx: SchoolCtx, userId: number, contact: { phone: string; email: string | null }) =>
  contactOf(ctx, userId, contact, ctx.can(permissions.contact));

/** The school's copy of the parent's identity, when it has one (src/modules/user/identity.ts). */
const copy = SchoolPeople.alias("parent_copy");
const identified = identity(users, copy.table);

const fields = {
  id: parents.id,
  createdAt: parents.createdAt,
  updatedAt: parents.updatedAt,
  userId: parents.userId,
  familyId: parents.familyId,
  relationship: parents.relationship,
  firstName: identified.firstName,
  lastName: identified.lastName,
  phone: users.phone,
  email: identified.email,
  status: users.status,
};

/** Own profile only, for a caller without `parent.read` (reads) or `parent.write` (writes). */
const visibleTo = (ctx: SchoolCtx, access: "read" | "write"): SQL | undefined =>
  ctx.can(access === "read" ? permissions.read : permissions.write) ? undefined : eq(parents.userId, ctx.userId ?? 0);

export const parentResource = defineResource({
  name: "parent",
  plural: "parents",
  label: m`Parent`,
  path: "/api/v1/parent",
  tag: "People",
  scope: "school",
  data: Parents,
  record: Record,
  view: {
    fields,
    join: (q) => q.join(Users, eq(users.id, parents.userId)).join(copy, eq(copy.table.userId, parents.userId), "left"),
  },
  toRecord: (ctx, row) => ({
    ...timestamps(row),
    userId: row.userId,
    firstName: row.firstName,
    lastName: row.lastName,
    ...parentContact(ctx, row.userId, { phone: row.phone, email: row.email }),
    relationship: row.relationship,
    familyId: row.familyId,
    status: row.status,
  }),
  visibleTo,
  conflictMessage: m`This person is already a parent in this school`,
});

const resource = parentResource;

/** A condition on the parent's user (the count query has no join: a lookup by primary key). */
const person = (cond: SQL | undefined): SQL =>
  sql`EXISTS (SELECT 1 FROM ${users} WHERE ${and(eq(users.id, parents.userId), cond)})`;

const filters = {
  name: {
    schema: searchTerm("Part of the first or last name"),
    where: (ctx: SchoolCtx, term: string) => nameContains(parents.userId, ctx.schoolId, term),
    example: "Paula",
  } satisfies Filter<string>,
  relationship: {
    schema: Relationship.optional(),
    where: (_ctx: Ctx, v: (typeof RELATIONSHIPS)[number]) => eq(parents.relationship, v),
    example: "mother",
  } satisfies Filter<(typeof RELATIONSHIPS)[number]>,
  familyId: {
    schema: idFilter("A family id"),
    where: (_ctx: Ctx, v: number) => eq(parents.familyId, v),
    example: "1",
  } satisfies Filter<number>,
  status: {
    schema: z.enum(STATUSES).optional().openapi({ description: "The person's account status" }),
    where: (_ctx: Ctx, v: (typeof STATUSES)[number]) => person(eq(users.status, v)),
    example: "active",
  } satisfies Filter<(typeof STATUSES)[number]>,
};

export const listParents = resource.list({
  access: "member",
  filters,
  summary: "List the current school's parents (paginated), oldest first",
  description:
    "Holders of parent.read see every parent of the school; anyone else, their own parent profile only. " +
    "Phones and emails are masked without user.contact or parent.contact (except one's own).",
});

export const getParent = resource.get({ access: "member" });

const CreateBody = z.strictObject({
  phone: Phone.openapi({
    description: "E.164; a known number makes that person a parent here (the name sent is this school's own for them)",
  }),
  firstName: FirstName,
  lastName: LastName.optional(),
  email: Email.nullable().optional(),
  relationship: Relationship,
  language: z
    .enum(["es", "en"])
    .optional()
    .openapi({ description: "A new user's app language (default: the school's)" }),
});

/**
 * Gives the person the parent role here, in one batch: the invited user (when the number is new),
 * the role membership (a plain INSERT: a parent already here is the unique index's 409, also when
 * two requests race), the profile the trigger made given its relationship, the audit rows, and the
 * record read back.
 */
export async function createParent(ctx: SchoolCtx, input: z.infer<typeof CreateBody>) {
  // A parent here already is the membership's unique index: 409.
  const { userId, statements } = await addPerson(ctx, input, { roles: ["parent"], held: "conflict" });
  const profile = eq(parents.userId, userId);
  const batch = new Batch(ctx).add(
    ...statements,
    // The role's trigger made the profile: its relationship completes it, audited as its creation.
    ...Parents.completed(ctx, profile, { relationship: input.relationship }, { userId }),
  );
  const created = batch.read(resource.readOne(ctx, sql<number>`${Parents.pick(ctx, parents.id, profile)}`));
  const [row] = (await batch.commit(resource.messages)).get(created);
  if (!row) throw new Error("parent: the created profile was not read back");
  return resource.toRecord(ctx, row);
}

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/parent",
  tag: "People",
  operationId: "createParent",
  summary: "Make a person a parent in the current school",
  description:
    "Finds the person by phone (a new, invited user when the number is unknown; a known number: the name sent is this school's own for them) " +
    "and gives them the parent role here. 409 if they are already a parent of this school.",
  access: permissions.write,
  audit: "parent",
  errors: [409],
  examples: { 409: "This person is already a parent in this school" },
  request: { body: jsonBody(CreateBody, "ParentCreate") },
  responses: { 201: json(resource.record, "The new parent") },
});
export const createParentOperation = operation(createRoute, (ctx, { body }: InputOf<typeof createRoute>) =>
  createParent(ctx, body),
);

const UpdateBody = nonEmpty(
  z.strictObject({
    relationship: Relationship.optional(),
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    email: Email.nullable().optional(),
  }),
);

/**
 * Sets the relationship (the profile) and the name or email (the person's, the same in every school
 * they belong to), in one batch: the profile's guarded update first, so a parent removed meanwhile
 * is a 404 and changes nothing.
 */
export async function updateParent(ctx: SchoolCtx, id: number, input: z.infer<typeof UpdateBody>) {
  const { relationship, ...personal } = input;
  const batch = new Batch(ctx).add(...resource.writes.update(ctx, id, relationship ? { relationship } : {}));
  if (Object.values(personal).some((v) => v !== undefined)) {
    const { userId } = await resource.find(ctx, id);
    await personEdit(batch, ctx, userId, personal);
  }
  await resource.commit(ctx, id, batch);
}

const updateRoute = defineRoute({
  method: "put",
  path: "/api/v1/parent/{id}",
  tag: "People",
  operationId: "updateParent",
  summary: "Update a parent's relationship, name or email",
  access: permissions.write,
  audit: "parent",
  ifMatch: resource.ifMatch,
  errors: [409],
  examples: { 409: "Another user already has this value" },
  request: { params: IdParams, body: jsonBody(UpdateBody, "ParentUpdate") },
  responses: { 204: noContent },
});
export const updateParentOperation = operation(
  updateRoute,
  async (ctx, { params, body }: InputOf<typeof updateRoute>) => {
    await updateParent(ctx, params.id, body);
    return undefined;
  },
);

/**
 * Takes the parent role away here (the user stays): the role membership is deleted and the trigger
 * of migration 0017 deletes the profile, whose delegates cascade. One batch with the audit rows of
 * the profile, the membership and each delegate; a profile already gone is a 404.
 */
export async function removeParent(ctx: SchoolCtx, id: number) {
  const profile = Parents.where(ctx, resource.scoped(ctx, eq(parents.id, id), "write"));
  await mayTake(ctx, [PARENT_ROLE], sql`SELECT ${parents.userId} FROM ${parents} WHERE ${profile}`);
  const membership = and(
    eq(roleUsers.roleId, PARENT_ROLE),
    sql`${roleUsers.userId} = (SELECT ${parents.userId} FROM ${parents} WHERE ${profile})`,
  );
  const [membershipAudit, removal] = RoleUsers.delete(ctx, membership);
  const batch = new Batch(ctx).add(
    Parents.auditRemoved(ctx, profile),
    Delegates.auditRemoved(ctx, eq(delegates.parentId, id)),
    Guardians.auditRemoved(ctx, eq(guardians.parentId, id)),
    membershipAudit,
    removal,
    guard(ctx.deps.db),
  );
  await resource.commit(ctx, id, batch);
}

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/parent/{id}",
  tag: "People",
  operationId: "deleteParent",
  summary: "Remove a parent from the current school (the person stays)",
  description: "Takes the parent role away here; the parent's delegates go with it.",
  access: permissions.write,
  audit: "parent",
  request: { params: IdParams },
  responses: { 204: noContent },
});
export const deleteParentOperation = operation(deleteRoute, async (ctx, { params }: InputOf<typeof deleteRoute>) => {
  await removeParent(ctx, params.id);
  return undefined;
});

export const exportParents = resource.export({
  access: permissions.read,
  list: listParents,
  filename: m`parents.xlsx`,
  sheet: m`Parents`,
  columns: [
    m`Id`,
    m`User id`,
    m`First name`,
    m`Last name`,
    m`Phone`,
    m`Email`,
    m`Relationship`,
    m`Family id`,
    m`Status`,
    m`Created at`,
  ],
  cells: (ctx, r) => {
    const { phone, email } = parentContact(ctx, r.userId, { phone: r.phone, email: r.email });
    return [r.id, r.userId, r.firstName, r.lastName, phone, email, r.relationship, r.familyId, r.status, r.createdAt];
  },
  description:
    "The list's filters apply (`page` and `pageSize` are accepted and ignored: the file has every row); " +
    "phones and emails are masked without user.contact or parent.contact. The file is streamed as it is read.",
  file: "An .xlsx workbook with one sheet, Parents",
});

/** The export's rows, page by page in the list's order (a keyset), with the list's filters and visibility. */
export const exportRows = exportParents.rows;

/** The parent profile of the caller in the current school, or undefined. */
export function ownParent(ctx: SchoolCtx) {
  return Parents.select(ctx, { id: parents.id, userId: parents.userId })
    .where(eq(parents.userId, ctx.userId ?? 0))
    .first();
}

/** A parent of this school by id (404 otherwise), as a delegate's parent. */
export async function parentOf(ctx: SchoolCtx, id: number, onlyOwn: boolean) {
  const row = await Parents.select(ctx, { id: parents.id, userId: parents.userId })
    .where(eq(parents.id, id), onlyOwn ? eq(parents.userId, ctx.userId ?? 0) : undefined)
    .first();
  if (!row) throw notFound(m`Parent ${id} not found`);
  return row;
}
