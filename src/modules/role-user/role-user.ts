/**
 * Role memberships (`role-user`): which users hold which roles in the current school. A
 * membership's `id` is the role_user row's. Giving a role needs the user to be one of the school's
 * people (404 otherwise) and every permission the role grants; changing or taking one also needs
 * everything the user holds here (./grants.ts); the same user and role
 * twice is a 409 (the unique index decides, so two racing requests give one 201 and one 409).
 * Taking or changing a role never leaves the school without a school admin (422): the count is
 * part of the DELETE's or UPDATE's condition, so two admins removed at once leave one.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools, Users, users } from "../../db/schema/core";
import { SchoolPeople, SchoolUsers, schoolUsers } from "../../db/schema/user";
import { eq, isNull, ne, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { idFilter, idList, recordId } from "../../lib/params";
import { defineResource, RecordBase, type Rule } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { permissions as access, mayAssign, mayTake, SCHOOL_ADMIN_ROLE } from "../role/api";
import { giveRole, identity, takenRoleAudits } from "../user/api";

const Record = RecordBase.extend({
  userId: z.number().int().openapi({ example: 3 }),
  roleId: z.number().int().openapi({ example: 4 }),
  roleName: z.string().openapi({ example: "Teacher", description: "The role's name" }),
  roleKey: z.string().nullable().openapi({ description: "The built-in role's key; null for a custom role" }),
  firstName: z.string(),
  lastName: z.string(),
}).openapi({ description: "A role held by a user in the current school; `id` is the membership's" });

// The person's name as this school knows them (src/modules/user/identity.ts): its copy, if any.
const namedCopy = SchoolPeople.alias("role_user_copy");
const named = identity(users, namedCopy.table);

export const roleUserResource = defineResource({
  name: "roleUser",
  plural: "roleUsers",
  label: m`Role membership`,
  path: "/api/v1/role-user",
  tag: "People",
  scope: "school",
  data: RoleUsers,
  record: Record,
  view: {
    fields: {
      id: roleUsers.id,
      createdAt: roleUsers.createdAt,
      updatedAt: roleUsers.updatedAt,
      userId: roleUsers.userId,
      roleId: roleUsers.roleId,
      roleName: roles.name,
      roleKey: roles.key,
      firstName: named.firstName,
      lastName: named.lastName,
    },
    join: (q) =>
      q
        .join(Roles, eq(roles.id, roleUsers.roleId))
        .join(Users, eq(users.id, roleUsers.userId))
        .join(namedCopy, eq(namedCopy.table.userId, roleUsers.userId), "left"),
  },
  toRecord: (_ctx, row) => ({ ...row }),
  conflictMessage: m`The user already holds this role in this school`,
});

const resource = roleUserResource;

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const listRoleUsers = resource.list({
  access: access.read,
  filters: {
    userId: {
      schema: idFilter("The user's memberships"),
      where: (_ctx, v: number) => eq(roleUsers.userId, v),
      example: "3",
    },
    roleId: {
      schema: idFilter("Who holds the role"),
      where: (_ctx, v: number) => eq(roleUsers.roleId, v),
      example: "4",
    },
  },
  // By role, then oldest first: the order of role_user_school_idx (school, role) and of
  // role_user_uq (user, school, role), with the rowid last: no sort step for any filter.
  defaultOrder: [{ by: roleUsers.roleId }, { by: roleUsers.id }],
  summary: "List the role memberships of the current school (paginated)",
});

export const getRoleUser = resource.get({ access: access.read });

/** The user is one of the school's people (a school_user row not deleted), else 404. */
export async function member(ctx: SchoolCtx, userId: number) {
  const row = await SchoolUsers.select(ctx, { id: schoolUsers.id })
    .where(eq(schoolUsers.userId, userId), isNull(schoolUsers.deletedAt))
    .first();
  if (!row) throw notFound(m`User ${userId} not found`);
}

/** The roles the school may give (built-in or its own) among `ids`; a missing one is a 404. */
export async function givable(ctx: SchoolCtx, ids: readonly number[]) {
  const found = await Roles.select(ctx, { id: roles.id }).where(inList(roles.id, ids)).all();
  const missing = ids.find((id) => !found.some((r) => r.id === id));
  if (missing !== undefined) throw notFound(m`Role ${missing} not found`);
}

const others = RoleUsers.alias("other_admin");

/** The row is not the school's last school-admin membership (for the WHERE of a DELETE or UPDATE). */
export function notLastAdmin(ctx: SchoolCtx): Rule {
  const another = others.exists(
    ctx,
    eq(others.table.roleId, SCHOOL_ADMIN_ROLE),
    sql`${others.table.id} <> ${roleUsers.id}`,
  );
  return {
    when: sql`(${ne(roleUsers.roleId, SCHOOL_ADMIN_ROLE)} or ${another})`,
    message: m`This is the school's last school admin; give the role to someone else first`,
  };
}

const created = resource.create({
  access: access.write,
  input: z.object({ userId: Id.openapi({ example: 3 }), roleId: Id.openapi({ example: 4 }) }),
  summary: "Give a user a role in the current school",
  description:
    "The user must be one of the school's people (404), the role built in or the school's own (404). The caller " +
    "must hold every permission the role grants (403); the super-admin role is never given (403). 409 if held.",
  errors: [403],
});

export async function assignRole(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  await Promise.all([member(ctx, body.userId), givable(ctx, [body.roleId])]);
  await mayAssign(ctx, [body.roleId]);
  const batch = new Batch(ctx).add(...resource.writes.insert(ctx, body));
  const read = batch.read(resource.readOne(ctx, RoleUsers.insertedId()));
  const [row] = (await batch.commit({ conflict: resource.config.conflictMessage })).get(read);
  if (!row) throw new Error("roleUser: the membership was not read back");
  return resource.toRecord(ctx, row);
}

export const createRoleUser = operation(created.route, assignRole);

const updated = resource.update({
  access: access.write,
  input: z.object({ roleId: Id.openapi({ example: 3 }) }),
  summary: "Change the role of a membership",
  description:
    "The caller must hold the permissions of both the old and the new role (403). Never the school's last school " +
    "admin (422). 409 if the user already holds the new role.",
  errors: [403, 422],
  examples: { 422: "This is the school's last school admin; give the role to someone else first" },
});

export async function changeRole(ctx: SchoolCtx, { params, body }: InputOf<typeof updated.route>): Promise<undefined> {
  const { id } = params;
  const before = await resource.find(ctx, id);
  await givable(ctx, [body.roleId]);
  await mayTake(ctx, [before.roleId, body.roleId], [before.userId], m`change`);
  const rule = notLastAdmin(ctx);
  await resource.change(ctx, id, {
    action: "update",
    set: { roleId: body.roleId },
    // The old role's profile (and a parent's delegates and guardianships) goes with it.
    before: takenRoleAudits(ctx, RoleUsers.where(ctx, eq(roleUsers.id, id))),
    // Leaving the school-admin role is the same as removing it.
    rules: body.roleId === SCHOOL_ADMIN_ROLE ? [] : [rule],
  });
}

export const updateRoleUser = operation(updated.route, changeRole);

const deleted = resource.delete({
  access: access.write,
  summary: "Take a role from a user (never the school's last school admin: 422)",
  errors: [403, 422],
  examples: { 422: "This is the school's last school admin; give the role to someone else first" },
});

/** Removes a membership, guarded by the last-admin rule inside the DELETE's condition. */
export async function removeMembership(ctx: SchoolCtx, id: number): Promise<undefined> {
  const before = await resource.find(ctx, id);
  await mayTake(ctx, [before.roleId], [before.userId], m`remove`);
  await resource.change(ctx, id, {
    action: "delete",
    remove: true,
    rules: [notLastAdmin(ctx)],
    before: takenRoleAudits(ctx, RoleUsers.where(ctx, eq(roleUsers.id, id))),
  });
}

export const deleteRoleUser = operation(deleted.route, (ctx, { params }) => removeMembership(ctx, params.id));

const RemoveQuery = z.strictObject({
  userId: recordId().openapi({ type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, example: 3 }),
  roleId: recordId().openapi({ type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, example: 4 }),
});

const removeRoleFromUserRoute = defineRoute({
  method: "delete",
  path: "/api/v1/role-user/remove",
  tag: "People",
  operationId: "removeRoleFromUser",
  summary: "Take a role from a user, named by user and role (404 if they do not hold it)",
  access: access.write,
  audit: "role-user",
  errors: [403, 422],
  examples: { 422: "This is the school's last school admin; give the role to someone else first" },
  request: { query: RemoveQuery },
  responses: { 204: noContent },
});

/** Takes the role `roleId` from the user `userId` (404 if they do not hold it here). */
export async function removeRole(
  ctx: SchoolCtx,
  { query }: InputOf<typeof removeRoleFromUserRoute>,
): Promise<undefined> {
  const { userId, roleId } = query;
  const row = await RoleUsers.select(ctx, { id: roleUsers.id })
    .where(eq(roleUsers.userId, userId), eq(roleUsers.roleId, roleId))
    .first();
  if (!row) throw new ApiError(404, m`User ${userId} does not hold role ${roleId} in this school`);
  await removeMembership(ctx, row.id);
}

export const removeRoleFromUser = operation(removeRoleFromUserRoute, removeRole);

const AssignMultipleBody = z.strictObject({
  userId: Id.openapi({ example: 3 }),
  roleIds: idList({ max: 20, what: "Role" }).openapi({
    example: [3, 4],
    description: "The roles to give, 1 to 20 (those already held are kept)",
  }),
});

const Assigned = z
  .object({
    userId: z.number().int(),
    added: z.array(z.number().int()).openapi({ description: "Role ids the user did not hold before" }),
    kept: z.array(z.number().int()).openapi({ description: "Role ids the user already held (left as they were)" }),
  })
  .openapi("RolesAssigned");

const assignMultipleRoute = defineRoute({
  method: "post",
  path: "/api/v1/role-user/assign-multiple",
  tag: "People",
  operationId: "assignMultipleRolesToUser",
  summary: "Give a user several roles at once (roles already held are kept; the answer says which were new)",
  access: access.write,
  audit: "role-user",
  errors: [403],
  request: { body: jsonBody(AssignMultipleBody, "RoleUserAssignMultiple") },
  responses: { 200: json(Assigned, "Which roles were added and which the user already held") },
});

/**
 * Gives a user several roles in one batch (`INSERT OR IGNORE` each, via giveRole: audit rows only
 * for the new ones). After each insert and its audit row, `changes()` is the audit row's count,
 * which is 1 exactly when the membership was new: the batch itself says which were added.
 */
export async function assignRoles(ctx: SchoolCtx, { body }: InputOf<typeof assignMultipleRoute>) {
  const { userId } = body;
  const ids = [...new Set(body.roleIds)];
  await Promise.all([member(ctx, userId), givable(ctx, ids)]);
  await mayAssign(ctx, ids);
  const batch = new Batch(ctx);
  const written = ids.map((roleId) => {
    batch.add(...giveRole(ctx, userId, roleId));
    return batch.read(Schools.select(ctx, { added: sql<number>`changes()` }).where(eq(schools.id, ctx.schoolId)));
  });
  const results = await batch.commit();
  const added: number[] = [];
  const kept: number[] = [];
  ids.forEach((roleId, i) => {
    const slot = written[i];
    const [row] = slot ? results.get(slot) : [];
    (row?.added === 1 ? added : kept).push(roleId);
  });
  return { userId, added, kept };
}

export const assignMultipleRoles = operation(assignMultipleRoute, assignRoles);
