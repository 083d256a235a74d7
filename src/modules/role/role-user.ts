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
import { and, asc, eq, exists, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { roles, roleUsers, schools, users } from "../../db/schema/core";
import { schoolUsers } from "../../db/schema/user";
import { commit, inList, insertedId, type Statement } from "../../db/write";
import { type Ctx, ctxOf, schoolOf, tenant } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { idFilter, recordId } from "../../lib/params";
import { defineResource, RecordBase, type Rule } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody, noContent } from "../../lib/route";
import { copyOf, copyTable, giveRole, identity, takenRoleAudits } from "../user/api";
import { mayAssign, mayTake, SCHOOL_ADMIN_ROLE } from "./grants";
import { permissions as access } from "./permissions";

const Record = RecordBase.extend({
  userId: z.number().int().openapi({ example: 3 }),
  roleId: z.number().int().openapi({ example: 4 }),
  roleName: z.string().openapi({ example: "Teacher" }),
  roleKey: z.string().nullable().openapi({ description: "The built-in role's key; null for a custom role" }),
  firstName: z.string(),
  lastName: z.string(),
}).openapi({ description: "A role held by a user in the current school; `id` is the membership's" });

const namedCopy = copyTable("role_user_copy");
const named = identity(users, namedCopy);

export const roleUserResource = defineResource({
  name: "roleUser",
  plural: "roleUsers",
  label: "Role membership",
  entity: "role-user",
  path: "/api/v1/role-user",
  tag: "People",
  scope: "school",
  table: roleUsers,
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
      // The person's name as this school knows them (src/modules/user/identity.ts).
      firstName: named.firstName,
      lastName: named.lastName,
    },
    join: (q) =>
      q
        .innerJoin(roles, eq(roles.id, roleUsers.roleId))
        .innerJoin(users, eq(users.id, roleUsers.userId))
        .leftJoin(namedCopy, copyOf(namedCopy, roleUsers.userId, roleUsers.schoolId)),
  },
  toRecord: (row) => ({ ...row }),
  conflictMessage: "The user already holds this role in this school",
});

const resource = roleUserResource;

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const listRoleUsers = resource.list({
  access: access.read,
  filters: {
    userId: { schema: idFilter("The user's memberships"), where: (v: number) => eq(roleUsers.userId, v), example: "3" },
    roleId: { schema: idFilter("Who holds the role"), where: (v: number) => eq(roleUsers.roleId, v), example: "4" },
  },
  // By role, then oldest first: the order of role_user_school_idx (school, role) and of
  // role_user_uq (user, school, role), with the rowid last: no sort step for any filter.
  defaultOrder: [asc(roleUsers.roleId), asc(roleUsers.id)],
  summary: "List the role memberships of the current school (paginated)",
});

export const getRoleUser = resource.get({ access: access.read });

/** The user is one of the school's people (a school_user row not deleted), else 404. */
export async function member(ctx: Ctx, userId: number) {
  const [row] = await ctx.deps.db
    .select({ id: schoolUsers.id })
    .from(schoolUsers)
    .where(and(tenant(ctx, schoolUsers), eq(schoolUsers.userId, userId), isNull(schoolUsers.deletedAt)))
    .limit(1);
  if (!row) throw notFound("User", userId);
}

/** The roles the school may give (built-in or its own) among `ids`; a missing one is a 404. */
export async function givable(ctx: Ctx, ids: readonly number[]) {
  const found = await ctx.deps.db
    .select({ id: roles.id })
    .from(roles)
    .where(and(inList(roles.id, ids), or(isNull(roles.schoolId), eq(roles.schoolId, schoolOf(ctx)))));
  const missing = ids.find((id) => !found.some((r) => r.id === id));
  if (missing !== undefined) throw notFound("Role", missing);
}

const others = alias(roleUsers, "other_admin");

/** The row is not the school's last school-admin membership (for the WHERE of a DELETE or UPDATE). */
export function notLastAdmin(ctx: Ctx): Rule {
  const another = exists(
    ctx.deps.db
      .select({ id: others.id })
      .from(others)
      .where(and(tenant(ctx, others), eq(others.roleId, SCHOOL_ADMIN_ROLE), sql`${others.id} <> ${roleUsers.id}`)),
  );
  return {
    when: or(ne(roleUsers.roleId, SCHOOL_ADMIN_ROLE), another) as SQL,
    message: "This is the school's last school admin; give the role to someone else first",
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

export async function assignRole(ctx: Ctx, input: { userId: number; roleId: number }) {
  await Promise.all([member(ctx, input.userId), givable(ctx, [input.roleId])]);
  await mayAssign(ctx, [input.roleId]);
  const results = await commit(
    ctx,
    [...resource.writes.insert(ctx, input), resource.readOne(ctx, insertedId(roleUsers))],
    { conflict: resource.config.conflictMessage },
  );
  const [row] = results.at(-1) as unknown[];
  if (!row) throw new Error("roleUser: the membership was not read back");
  return resource.toRecord(row, ctx);
}

export const createRoleUser = handled(created.route, async (c) =>
  c.json(await assignRole(ctxOf(c), c.req.valid("json")), 201),
);

const updated = resource.update({
  access: access.write,
  input: z.object({ roleId: Id.openapi({ example: 3 }) }),
  summary: "Change the role of a membership",
  description:
    "The caller must hold the permissions of both the old and the new role (403). Never the school's last school " +
    "admin (422). 409 if the user already holds the new role.",
  errors: [403, 422],
});

export async function changeRole(ctx: Ctx, id: number, input: { roleId: number }) {
  const before = await resource.find(ctx, id);
  await givable(ctx, [input.roleId]);
  await mayTake(ctx, [before.roleId, input.roleId], [before.userId], "change");
  const rule = notLastAdmin(ctx);
  await resource.change(ctx, id, {
    action: "update",
    set: { roleId: input.roleId },
    // The old role's profile (and a parent's delegates and guardianships) goes with it.
    before: takenRoleAudits(ctx, and(tenant(ctx, roleUsers), eq(roleUsers.id, id))),
    // Leaving the school-admin role is the same as removing it.
    rules: input.roleId === SCHOOL_ADMIN_ROLE ? [] : [rule],
  });
}

export const updateRoleUser = handled(updated.route, async (c) => {
  await changeRole(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  return c.body(null, 204);
});

const deleted = resource.delete({
  access: access.write,
  summary: "Take a role from a user (never the school's last school admin: 422)",
  errors: [403, 422],
});

/** Removes a membership, guarded by the last-admin rule inside the DELETE's condition. */
export async function removeMembership(ctx: Ctx, id: number) {
  const before = await resource.find(ctx, id);
  await mayTake(ctx, [before.roleId], [before.userId], "remove");
  await resource.change(ctx, id, {
    action: "delete",
    remove: true,
    rules: [notLastAdmin(ctx)],
    before: takenRoleAudits(ctx, and(tenant(ctx, roleUsers), eq(roleUsers.id, id))),
  });
}

export const deleteRoleUser = handled(deleted.route, async (c) => {
  await removeMembership(ctxOf(c), c.req.valid("param").id);
  return c.body(null, 204);
});

const RemoveQuery = z.strictObject({
  userId: recordId().openapi({ type: "integer", example: 3 }),
  roleId: recordId().openapi({ type: "integer", example: 4 }),
});

export const removeRoleFromUser = handled(
  defineRoute({
    method: "delete",
    path: "/api/v1/role-user/remove",
    tag: "People",
    operationId: "removeRoleFromUser",
    summary: "Take a role from a user, named by user and role (404 if they do not hold it)",
    access: access.write,
    audit: "role-user",
    errors: [403, 422],
    request: { query: RemoveQuery },
    responses: { 204: noContent },
  }),
  async (c) => {
    const ctx = ctxOf(c);
    const { userId, roleId } = c.req.valid("query");
    const [row] = await ctx.deps.db
      .select({ id: roleUsers.id })
      .from(roleUsers)
      .where(and(eq(roleUsers.userId, userId), tenant(ctx, roleUsers), eq(roleUsers.roleId, roleId)))
      .limit(1);
    if (!row) throw new ApiError(404, `User ${userId} does not hold role ${roleId} in this school`);
    await removeMembership(ctx, row.id);
    return c.body(null, 204);
  },
);

const AssignMultipleBody = z.strictObject({
  userId: Id.openapi({ example: 3 }),
  roleIds: z
    .array(Id)
    .min(1)
    .max(20)
    .openapi({ example: [3, 4] }),
});

const Assigned = z
  .object({
    userId: z.number().int(),
    added: z.array(z.number().int()).openapi({ description: "Role ids the user did not hold before" }),
    kept: z.array(z.number().int()).openapi({ description: "Role ids the user already held (left as they were)" }),
  })
  .openapi("RolesAssigned");

/**
 * Gives a user several roles in one batch (`INSERT OR IGNORE` each, via giveRole: audit rows only
 * for the new ones). After each insert and its audit row, `changes()` is the audit row's count,
 * which is 1 exactly when the membership was new: the batch itself says which were added.
 */
export async function assignRoles(ctx: Ctx, userId: number, roleIds: readonly number[]) {
  const ids = [...new Set(roleIds)];
  await Promise.all([member(ctx, userId), givable(ctx, ids)]);
  await mayAssign(ctx, ids);
  const { db } = ctx.deps;
  const statements: Statement[] = [];
  for (const roleId of ids) {
    statements.push(
      ...giveRole(ctx, userId, roleId),
      db
        .select({ added: sql<number>`changes()`.as("added") })
        .from(schools)
        .where(eq(schools.id, schoolOf(ctx))),
    );
  }
  const results = await commit(ctx, statements as [Statement, ...Statement[]]);
  const added: number[] = [];
  const kept: number[] = [];
  ids.forEach((roleId, i) => {
    const [row] = results[i * 3 + 2] as { added: number }[];
    (row?.added === 1 ? added : kept).push(roleId);
  });
  return { userId, added, kept };
}

export const assignMultipleRoles = handled(
  defineRoute({
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
  }),
  async (c) => {
    const { userId, roleIds } = c.req.valid("json");
    return c.json(await assignRoles(ctxOf(c), userId, roleIds), 200);
  },
);
