/**
 * School administrators: the users who hold the built-in
 * school-admin role in the current school. The resource is their role memberships (role_user rows
 * with role 2): its `id` is the membership's, `userId` the person's. Creating one gives a user the
 * role (an existing member of the school by `userId`, or anyone by phone: a new, invited user when
 * the number is unknown); deleting one removes the role, never the user, and never the school's
 * last administrator (422). PUT edits the person's name and email. Giving or taking the role needs
 * every permission it grants, and editing or removing someone who holds more than the caller is
 * refused (403: src/modules/role/grants.ts).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { RoleUsers, roleUsers, Users, users } from "../../db/schema/core";
import { SchoolPeople } from "../../db/schema/user";
import { eq, type SQL, sql } from "../../db/sql";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { Phone } from "../../lib/phone";
import { defineResource, IdParams, nonEmpty, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { mayAssign, mayTake, permissions as role } from "../role/api";
import { Email } from "../school/api";
import {
  addPerson,
  contactOf,
  FirstName,
  giveRoles,
  identity,
  LastName,
  MASKED_CONTACT,
  nameContains,
  personEdit,
  permissions as user,
} from "../user/api";

const SCHOOL_ADMIN = BUILTIN_ROLES["school-admin"].id;

const Record = RecordBase.extend({
  userId: z.number().int().openapi({ example: 2 }),
  firstName: z.string().openapi({ example: "Alma" }),
  lastName: z.string().openapi({ example: "Admin" }),
  email: z.string().nullable().openapi({ description: MASKED_CONTACT }),
  phone: z.string().openapi({ example: "+15550000002", description: MASKED_CONTACT }),
  status: z.enum(["invited", "active", "inactive"]).openapi({ description: "invited: has never signed in" }),
  since: z.iso.datetime().openapi({ description: "When the user became an administrator of this school" }),
}).openapi({ description: "`id` is the membership's (the role assignment); `userId` the person's" });

/** The school's copy of the administrator's identity, when it has one (src/modules/user/identity.ts). */
const copy = SchoolPeople.alias("administrator_copy");
const identified = identity(users, copy.table);

/** The school-admin role's memberships, recorded in the trail as `school-administrator`. */
const Administrators = RoleUsers.as("school-administrator");

export const schoolAdministratorResource = defineResource({
  name: "schoolAdministrator",
  plural: "schoolAdministrators",
  label: m`School administrator`,
  path: "/api/v1/school-administrator",
  tag: "People",
  scope: "school",
  data: Administrators,
  record: Record,
  view: {
    fields: {
      id: roleUsers.id,
      createdAt: roleUsers.createdAt,
      updatedAt: roleUsers.updatedAt,
      userId: roleUsers.userId,
      firstName: identified.firstName,
      lastName: identified.lastName,
      email: identified.email,
      phone: users.phone,
      status: users.status,
    },
    join: (q) =>
      q.join(Users, eq(users.id, roleUsers.userId)).join(copy, eq(copy.table.userId, roleUsers.userId), "left"),
  },
  toRecord: (ctx, row) => ({
    ...timestamps(row),
    userId: row.userId,
    firstName: row.firstName,
    lastName: row.lastName,
    ...contactOf(ctx, row.userId, { email: row.email, phone: row.phone }),
    status: row.status,
    since: row.createdAt,
  }),
  // Only the school-admin role's memberships are this resource (role_user_school_idx serves it).
  visibleTo: () => eq(roleUsers.roleId, SCHOOL_ADMIN),
  conflictMessage: m`This user is already an administrator of this school`,
});

const resource = schoolAdministratorResource;

/** A person's name, as this school knows them, matches (a correlated lookup: the count query has no join). */
const nameMatches = (ctx: SchoolCtx, term: string): SQL => nameContains(roleUsers.userId, ctx.schoolId, term);

export const listSchoolAdministrators = resource.list({
  access: user.read,
  filters: {
    name: { schema: searchTerm("Part of the first or last name"), where: nameMatches, example: "Alma" },
  },
  // Memberships of one (school, role) come out of role_user_school_idx in id order: no sort step.
  defaultOrder: [{ by: roleUsers.id }],
  summary: "List the current school's administrators (paginated), oldest first",
});

export const getSchoolAdministrator = resource.get({ access: user.read });

const UserId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const CreateBody = z
  .object({
    userId: UserId.optional().openapi({ description: "An existing user with a role in this school", example: 3 }),
    phone: Phone.optional().openapi({ description: "Anyone's number (E.164): a new, invited user if unknown" }),
    firstName: FirstName.optional().openapi({ description: "With phone: the new user's first name (required)" }),
    lastName: LastName.optional(),
    email: Email.nullable().optional(),
  })
  .strict()
  .superRefine((v, issue) => {
    const add = (path: string, message: Message) =>
      issue.addIssue({ code: "custom", path: [path], message: message.render() });
    if (v.userId === undefined && v.phone === undefined) add("userId", m`Send userId, or phone and firstName`);
    if (v.userId !== undefined) {
      for (const key of ["phone", "firstName", "lastName", "email"] as const) {
        if (v[key] !== undefined) add(key, m`Not with userId: send userId alone, or phone and a name`);
      }
    } else if (v.phone !== undefined && v.firstName === undefined) {
      add("firstName", m`Required with phone`);
    }
  });

export type CreateInput = z.infer<typeof CreateBody>;

/**
 * Gives a user the school-admin role here, in one batch: the membership with its audit row (and,
 * for an unknown number, the invited user with its own), then the record read back. A user who is
 * already an administrator here is a 409, also when two requests race (the unique membership).
 */
export async function createAdministrator(ctx: SchoolCtx, input: CreateInput) {
  const batch = new Batch(ctx);
  const held = { held: "conflict", entity: "school-administrator" } as const;
  if (input.userId !== undefined) {
    // Making someone an administrator (oneself included) needs every permission the role grants.
    await mayAssign(ctx, [SCHOOL_ADMIN]);
    // Someone of this school: another school's people are not this school's to see (404).
    const member = await RoleUsers.select(ctx, { id: roleUsers.id }).where(eq(roleUsers.userId, input.userId)).first();
    if (!member) throw notFound(m`User ${input.userId} not found`);
    batch.add(...giveRoles(ctx, eq(users.id, input.userId), [SCHOOL_ADMIN], held));
  } else {
    // The body takes no language: a new user gets the column's.
    const added = await addPerson(
      ctx,
      { phone: input.phone ?? "", firstName: input.firstName, lastName: input.lastName, email: input.email },
      { roles: [SCHOOL_ADMIN], ...held, language: null },
    );
    batch.add(...added.statements);
  }
  const person = input.userId ?? Users.pick(ctx, users.id, eq(users.phone, input.phone ?? ""));
  const membership = RoleUsers.pick(
    ctx,
    roleUsers.id,
    eq(roleUsers.roleId, SCHOOL_ADMIN),
    eq(roleUsers.userId, sql`${person}`),
  );
  const created = batch.read(resource.readOne(ctx, sql<number>`${membership}`));
  const [row] = (await batch.commit({ conflict: resource.messages.conflict })).get(created);
  if (!row) throw new Error("schoolAdministrator: the created membership was not read back");
  return resource.toRecord(ctx, row);
}

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/school-administrator",
  tag: "People",
  operationId: "createSchoolAdministrator",
  summary: "Make a user an administrator of the current school",
  description:
    "Send `userId` (someone with a role in this school) or `phone` and `firstName` (anyone: a new user, invited, " +
    "when the number is unknown; for a known number the name sent is this school's own for them). 409 if they " +
    "already administer this school.",
  access: role.write,
  audit: "school-administrator",
  errors: [409],
  examples: { 409: "This user is already an administrator of this school" },
  request: { body: jsonBody(CreateBody, "SchoolAdministratorCreate") },
  responses: { 201: json(resource.record, "The new administrator") },
});
export const createSchoolAdministrator = operation(createRoute, (ctx, { body }: InputOf<typeof createRoute>) =>
  createAdministrator(ctx, body),
);

const UpdateBody = nonEmpty(
  z.strictObject({
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    email: Email.nullable().optional(),
  }),
);

/**
 * Edits the administrator's name and email (the person's, wherever else they belong), in one
 * batch: the membership is touched first, guarded, so a membership removed meanwhile is a 404 and
 * changes nothing. Two audit rows: the administrator's and the user's (with the old and new values).
 */
export async function updateAdministrator(ctx: SchoolCtx, id: number, input: z.infer<typeof UpdateBody>) {
  const { userId } = await resource.find(ctx, id);
  const batch = new Batch(ctx).add(...resource.writes.update(ctx, id, {}));
  await personEdit(batch, ctx, userId, input);
  await resource.commit(ctx, id, batch);
}

const updateRoute = defineRoute({
  method: "put",
  path: "/api/v1/school-administrator/{id}",
  tag: "People",
  operationId: "updateSchoolAdministrator",
  summary: "Update an administrator's name or email",
  access: role.write,
  audit: "school-administrator",
  ifMatch: resource.ifMatch,
  errors: [409],
  examples: { 409: "Another user already has this value" },
  request: { params: IdParams, body: jsonBody(UpdateBody, "SchoolAdministratorUpdate") },
  responses: { 204: noContent },
});
export const updateSchoolAdministrator = operation(
  updateRoute,
  async (ctx, { params, body }: InputOf<typeof updateRoute>) => {
    await updateAdministrator(ctx, params.id, body);
    return undefined;
  },
);

const others = RoleUsers.alias("other_admin");

/**
 * Removes the school-admin role (the user stays), unless it is the school's last administrator
 * (422). The count is part of the DELETE's condition, so two admins removing each other at once
 * cannot leave the school with none: one of them is refused.
 */
export async function removeAdministrator(ctx: SchoolCtx, id: number) {
  // The administrator is read by the check's own query (one round trip); an unknown id is the DELETE's 404.
  const membership = RoleUsers.where(ctx, eq(roleUsers.id, id), eq(roleUsers.roleId, SCHOOL_ADMIN));
  await mayTake(ctx, [SCHOOL_ADMIN], sql`SELECT ${roleUsers.userId} FROM ${roleUsers} WHERE ${membership}`);
  const another = others.exists(ctx, eq(others.table.roleId, SCHOOL_ADMIN), sql`${others.table.id} <> ${roleUsers.id}`);
  await resource.change(ctx, id, {
    action: "delete",
    remove: true,
    rules: [
      {
        when: another,
        message: m`School administrator ${id} is the school's last administrator; add another one first`,
      },
    ],
  });
}

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/school-administrator/{id}",
  tag: "People",
  operationId: "deleteSchoolAdministrator",
  summary: "Remove an administrator (the role, not the user; never the last one: 422)",
  access: role.write,
  audit: "school-administrator",
  errors: [422],
  examples: { 422: "School administrator 42 is the school's last administrator; add another one first" },
  request: { params: IdParams },
  responses: { 204: noContent },
});
export const deleteSchoolAdministrator = operation(
  deleteRoute,
  async (ctx, { params }: InputOf<typeof deleteRoute>) => {
    await removeAdministrator(ctx, params.id);
    return undefined;
  },
);
