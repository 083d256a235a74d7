/**
 * `POST /api/v1/user/{id}/roles`: sets exactly these roles for the user in the current school.
 * Roles not listed are taken (each removal obeys the last-admin rule), listed ones not held are
 * given (giveRole: INSERT OR IGNORE, audited when written); one batch. The caller must hold every
 * permission of each role given or taken, and, when a role is taken, everything the user holds
 * here (403). One audit row on the user records the old and new role ids.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Roles, RoleUsers, roles, roleUsers, Users, users } from "../../db/schema/core";
import { eq } from "../../db/sql";
import { GuardFailed, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { idList } from "../../lib/params";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { permissions as access, mayTake, SCHOOL_ADMIN_ROLE } from "../role/api";
import { giveRole, takenRoleAudits } from "../user/api";
import { givable, member, notLastAdmin, roleUserResource } from "./role-user";

const Body = z.strictObject({
  roleIds: idList({ max: 20, what: "Role" }).openapi({
    description: "Every role the user is to hold in this school",
    example: [4],
  }),
});

const Result = z
  .object({
    userId: z.number().int(),
    roles: z
      .array(
        z.object({
          id: z.number().int().openapi({ description: "The role's id" }),
          name: z.string().openapi({ description: "The role's name" }),
          key: z.string().nullable().openapi({ description: "A built-in role's key; null for the school's own" }),
        }),
      )
      .openapi({ description: "The roles the user holds here now" }),
    added: z.array(z.number().int()).openapi({ description: "Role ids given by this call" }),
    removed: z.array(z.number().int()).openapi({ description: "Role ids taken by this call" }),
  })
  .openapi("UserRoles");

const route = defineRoute({
  method: "post",
  path: "/api/v1/user/{id}/roles",
  tag: "People",
  operationId: "assignUserRoles",
  summary: "Set a user's roles in the current school (exactly these: unlisted roles are taken)",
  description:
    "The user must be one of the school's people (404); every role built in or the school's own (404). The caller " +
    "must hold every permission of each role given or taken (403; the super-admin role never). Taking the school's " +
    "last school admin is a 422. Members get the change at their next token refresh.",
  access: access.write,
  audit: "user",
  errors: [403, 409, 422],
  examples: {
    409: "A record with these values already exists",
    422: "This is the school's last school admin; give the role to someone else first",
  },
  request: { params: IdParams, body: jsonBody(Body, "UserRolesSet") },
  responses: { 200: json(Result, "The user's roles in this school now, and what changed") },
});

export async function setUserRoles(ctx: SchoolCtx, { params, body }: InputOf<typeof route>) {
  const userId = params.id;
  const wanted = [...new Set(body.roleIds)];
  await Promise.all([member(ctx, userId), givable(ctx, wanted)]);
  const held = await RoleUsers.select(ctx, { id: roleUsers.id, roleId: roleUsers.roleId })
    .where(eq(roleUsers.userId, userId))
    .all();
  const added = wanted.filter((r) => !held.some((h) => h.roleId === r));
  const removed = held.filter((h) => !wanted.includes(h.roleId));
  await mayTake(ctx, [...added, ...removed.map((r) => r.roleId)], removed.length ? [userId] : [], m`assign or remove`);

  const ids = (list: readonly number[]) => [...list].sort((a, b) => a - b);
  const batch = new Batch(ctx).add(
    ...Users.action(ctx, eq(users.id, userId), {
      action: "roles",
      changes: { roleIds: { old: ids(held.map((h) => h.roleId)), new: ids(wanted) } },
    }),
  );
  const rule = notLastAdmin(ctx);
  for (const r of removed) {
    batch.add(
      ...takenRoleAudits(ctx, RoleUsers.where(ctx, eq(roleUsers.id, r.id))),
      ...roleUserResource.writes.delete(ctx, r.id, null, r.roleId === SCHOOL_ADMIN_ROLE ? rule.when : undefined),
    );
  }
  for (const roleId of added) batch.add(...giveRole(ctx, userId, roleId));
  const now = batch.read(
    RoleUsers.select(ctx, { id: roles.id, name: roles.name, key: roles.key })
      .join(Roles, eq(roles.id, roleUsers.roleId))
      .where(eq(roleUsers.userId, userId), inList(roleUsers.roleId, wanted)),
  );
  let current: { id: number; name: string; key: string | null }[];
  try {
    current = (await batch.commit()).get(now);
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    // A removal matched nothing: the last admin, or a membership gone meanwhile.
    if (removed.some((r) => r.roleId === SCHOOL_ADMIN_ROLE)) throw unprocessable(rule.message);
    throw err;
  }
  current.sort((a, b) => a.id - b.id);
  return { userId, roles: current, added, removed: removed.map((r) => r.roleId) };
}

export const assignUserRoles = operation(route, setUserRoles);
