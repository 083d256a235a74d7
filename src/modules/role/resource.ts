/**
 * Roles: sets of permissions. The five built-in roles (super-admin, school admin, administrative
 * staff, teacher, parent) belong to no school and are read-only (422 on PUT and DELETE); a school
 * creates its own custom roles, whose names are unique in the school (409, also with a built-in
 * role's name). Another school's custom role is a 404. Permissions are named by name or id; what
 * a role may grant is decided by `mayGrant` (./grants.ts). The roles table shares its built-in rows
 * with every school (its accessor's tenancy): reads see them, writes touch the school's own only.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  Permissions,
  permissions,
  Roles,
  RoleUsers,
  roleOwner,
  rolePermissions,
  roles,
  roleUsers,
} from "../../db/schema/core";
import { asc, eq, or, type SQL, sql } from "../../db/sql";
import type { Change } from "../../db/table";
import { inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, conflict, unprocessable } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { m } from "../../lib/message";
import { defineResource, type Filter, RecordBase } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { type Granted, givableRole, mayGrant } from "./grants";
import { permissions as access } from "./permissions";

const Permission = z.object({
  id: z.number().int().openapi({ description: "The permission's id" }),
  name: z.string().openapi({ example: "student.read", description: "The permission's name" }),
});

const Record = RecordBase.extend({
  name: z.string().openapi({ example: "Librarian", description: "The role's name, unique in the school" }),
  key: z
    .string()
    .nullable()
    .openapi({ description: "The built-in role's key (school-admin, staff, teacher, parent); null for a custom role" }),
  builtIn: z.boolean().openapi({ description: "Defined by the service: read-only" }),
  permissions: z.array(Permission).openapi({ description: "What the role grants, by name" }),
});

/** The role's permissions as a JSON array, read in the same query. */
// Written out with qualified names: drizzle leaves columns unqualified in a one-table query, and an
// unqualified `id` inside the sub-select would be the permission's, not the role's.
const permissionsJson = sql<string>`(SELECT json_group_array(json_object('id', p.id, 'name', p.name)) FROM role_permission rp JOIN permission p ON p.id = rp.permission_id WHERE rp.role_id = "role"."id")`;

const PermissionList = z.array(Permission);
const toPermissions = (raw: string | null): Granted[] =>
  parseJson(PermissionList, raw ?? "[]").sort((a, b) => a.name.localeCompare(b.name));

export const roleResource = defineResource({
  name: "role",
  plural: "roles",
  label: m`Role`,
  path: "/api/v1/role",
  tag: "People",
  scope: "school",
  data: Roles,
  record: Record,
  view: {
    fields: {
      id: roles.id,
      createdAt: roles.createdAt,
      updatedAt: roles.updatedAt,
      name: roles.name,
      key: roles.key,
      permissions: permissionsJson,
    },
  },
  toRecord: (_ctx, row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    name: row.name,
    key: row.key,
    builtIn: row.key !== null,
    permissions: toPermissions(row.permissions),
  }),
  conflictMessage: m`A role with this name already exists in this school`,
});

const resource = roleResource;

const yes = z.enum(["true", "false"]).optional();

const filters = {
  name: {
    schema: searchTerm("Part of the role's name"),
    where: (_ctx, v: string) => contains(roles.nameSearch, v),
    example: "a",
  } satisfies Filter<string>,
  builtIn: {
    schema: yes.openapi({ description: "true: the built-in roles only; false: the school's custom roles only" }),
    // Built-in roles are those of no school (owner 0): a condition on role_scope_idx's first key.
    where: (_ctx, v: "true" | "false") => (v === "true" ? sql`${roleOwner} = 0` : sql`${roleOwner} <> 0`),
    example: "false",
  } satisfies Filter<"true" | "false">,
};

export const listRoles = resource.list({
  access: access.read,
  filters,
  // Built-in roles (school 0 in role_scope_idx) then the school's own, each by id: the order of
  // role_scope_idx, so no sort step.
  defaultOrder: [{ by: roleOwner }, { by: roles.id }],
  summary: "List the built-in roles and the school's custom roles (paginated), built-in first",
});

export const getRole = resource.get({ access: access.read, summary: "Get a role with its permissions" });

const AllRoles = z.array(resource.record).openapi("RoleList");

/** Every role the school may give, unpaginated (for pickers): at most the 5 built-ins and its own. */
export async function allRoles(ctx: SchoolCtx) {
  const rows = await resource.select(ctx).where(givableRole).orderBy(asc(roleOwner), asc(roles.id)).all();
  return rows.map((row) => resource.toRecord(ctx, row));
}

const listAllRolesRoute = defineRoute({
  method: "get",
  path: "/api/v1/role/all",
  tag: "People",
  operationId: "listAllRoles",
  summary: "Every role the school may give (built-in and its own), unpaginated, for pickers",
  description: "Not the super-admin role, which is never given through the API (being one is a user's flag).",
  access: access.read,
  responses: { 200: json(AllRoles, "The roles, built-in first") },
});

export const listAllRoles = operation(listAllRolesRoute, (ctx) => allRoles(ctx));

const Name = text({ max: 100 }).openapi({
  example: "Librarian",
  description: "The role's name, unique in the school and none of the built-in roles' names",
});
const PermissionRef = z
  .union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), z.string().min(1).max(100)])
  .openapi({ description: "A permission's id or name", example: "student.read" });
const PermissionRefs = z
  .array(PermissionRef)
  .max(200)
  .openapi({ description: "The permissions it grants, by id or name (the whole set)", example: ["student.read"] });

/** Resolves permission ids and names against the catalogue (built-in and custom); unknown ones: 422. */
async function resolvePermissions(ctx: SchoolCtx, refs: readonly (number | string)[]): Promise<Granted[]> {
  if (refs.length === 0) return [];
  const ids = refs.filter((r): r is number => typeof r === "number");
  const names = refs.filter((r): r is string => typeof r === "string");
  const found = await Permissions.select(ctx, { id: permissions.id, name: permissions.name })
    .where(
      or(
        ids.length ? inList(permissions.id, ids) : undefined,
        names.length ? inList(permissions.name, names) : undefined,
      ),
    )
    .all();
  const unknown = refs.filter((r) => !found.some((p) => p.id === r || p.name === r));
  if (unknown.length)
    throw unprocessable(
      unknown.length > 1 ? m`Unknown permissions: ${unknown.join(", ")}` : m`Unknown permission: ${unknown.join(", ")}`,
    );
  return found;
}

/** A custom role may not take a built-in role's name (which the unique index cannot see). */
const BUILTIN_NAMES = ["super admin", "school admin", "administrative staff", "teacher", "parent"];
function refuseBuiltinName(name: string) {
  if (BUILTIN_NAMES.includes(name.trim().toLowerCase())) throw conflict(m`${name} is the name of a built-in role`);
}

const namesOf = (granted: readonly Granted[]) => granted.map((p) => p.name).sort();

/** Replaces the role's permissions (delete, then insert from one JSON parameter). */
function setPermissions(ctx: SchoolCtx, roleId: number | SQL<number>, granted: readonly Granted[]): Statement[] {
  const { db } = ctx.deps;
  return [db.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId)), grantPermissions(ctx, roleId, granted)];
}

/** Gives the role the permissions, from one JSON parameter. */
function grantPermissions(ctx: SchoolCtx, roleId: number | SQL<number>, granted: readonly Granted[]): Statement {
  const ids = JSON.stringify(granted.map((p) => p.id));
  return ctx.deps.db.insert(rolePermissions).select(sql`SELECT ${roleId}, value FROM json_each(${ids})`);
}

const created = resource.create({
  access: access.write,
  input: z.object({ name: Name, permissions: PermissionRefs.default([]) }),
  summary: "Create a custom role in the current school",
  description:
    "Permissions by id or name. 422 for an unknown or platform permission, 403 for one the caller does not hold, " +
    "409 for a name the school (or a built-in role) already has.",
  errors: [403, 422],
  examples: { 422: "Unknown permission: report.export" },
});

/** Creates a custom role with its permissions in one batch (the audit row lists them by name). */
export async function createRole(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  refuseBuiltinName(body.name);
  const granted = await resolvePermissions(ctx, body.permissions);
  mayGrant(ctx, granted);
  const id = Roles.insertedId();
  const changes = { name: { old: null, new: roles.name }, permissions: { old: null, new: namesOf(granted) } };
  const batch = new Batch(ctx)
    .add(...Roles.insert(ctx, { name: body.name, key: null }, { changes }))
    .add(grantPermissions(ctx, id, granted));
  const read = batch.read(resource.readOne(ctx, id));
  const [row] = (await batch.commit({ conflict: resource.config.conflictMessage })).get(read);
  if (!row) throw new Error("role: the created role was not read back");
  return resource.toRecord(ctx, row);
}

export const createRoleOperation = operation(created.route, createRole);

/** Refuses writes to a built-in role (422); another school's role or an unknown one is a 404. */
async function customRole(ctx: SchoolCtx, id: number) {
  const record = await resource.find(ctx, id);
  if (record.builtIn) throw unprocessable(m`Role ${id} (${record.name}) is built in and cannot be changed or deleted`);
  return record;
}

const updated = resource.update({
  access: access.write,
  input: z.object({ name: Name.optional(), permissions: PermissionRefs.optional() }),
  summary: "Rename a custom role or replace its permissions",
  description:
    "`permissions` replaces the whole set. The caller must hold every permission the role grants, before and after " +
    "(403). Built-in roles are read-only (422). Members get the change at their next token refresh.",
  errors: [403, 422],
  examples: { 422: "Role 4 (Teacher) is built in and cannot be changed or deleted" },
});

export async function updateRole(ctx: SchoolCtx, { params, body }: InputOf<typeof updated.route>): Promise<undefined> {
  const { id } = params;
  const before = await customRole(ctx, id);
  // Managing a role needs what it grants now (no stripping a role one could not have made).
  mayGrant(ctx, before.permissions);
  if (body.name !== undefined) refuseBuiltinName(body.name);
  const granted = body.permissions ? await resolvePermissions(ctx, body.permissions) : undefined;
  if (granted) mayGrant(ctx, granted);
  const changes: Record<string, Change> = {};
  if (body.name !== undefined) changes.name = { old: roles.name, new: body.name, ifChanged: true };
  if (granted) changes.permissions = { old: namesOf(before.permissions), new: namesOf(granted) };
  const batch = new Batch(ctx).add(
    ...Roles.updateOne(ctx, id, body.name !== undefined ? { name: body.name } : {}, {
      changes,
    }),
    ...(granted ? setPermissions(ctx, id, granted) : []),
  );
  await resource.commit(ctx, id, batch);
}

export const updateRoleOperation = operation(updated.route, updateRole);

const deleted = resource.delete({
  access: access.write,
  summary: "Delete a custom role (not while users hold it: 409)",
  description: "Built-in roles are read-only (422). A role still held by users is a 409 naming how many.",
  errors: [403, 409, 422],
  examples: {
    409: "Role 42 is still held by 3 user(s); take it from them first",
    422: "Role 4 (Teacher) is built in and cannot be changed or deleted",
  },
});

/**
 * Deletes a custom role no one holds. The "no one holds it" check is part of the DELETE's
 * condition, so a membership given meanwhile makes it a 409 rather than a silent cascade.
 */
export async function deleteRole(ctx: SchoolCtx, { params }: InputOf<typeof deleted.route>): Promise<undefined> {
  const { id } = params;
  const before = await customRole(ctx, id);
  mayGrant(ctx, before.permissions);
  // Written out: inside the DELETE, "role"."id" is the row being deleted.
  const held = sql`NOT EXISTS (SELECT 1 FROM role_user ru WHERE ru.role_id = "role"."id")`;
  try {
    await resource.change(ctx, id, {
      action: "delete",
      remove: true,
      rules: [{ when: held, message: m`held` }],
    });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err;
    const n = await RoleUsers.select(ctx, { id: roleUsers.id }).where(eq(roleUsers.roleId, id)).count().first();
    throw conflict(m`Role ${id} is still held by ${n?.n ?? 0} user(s); take it from them first`);
  }
}

export const deleteRoleOperation = operation(deleted.route, deleteRole);

export const exportRoles = resource.export({
  access: access.read,
  list: listRoles,
  filename: (ctx) => m`roles-school-${ctx.schoolId}.xlsx`,
  sheet: m`Roles`,
  columns: [m`Id`, m`Name`, m`Built-in`, m`Permissions`, m`Users`],
  extra: {
    // How many users hold each role in this school.
    fields: (ctx) => ({
      users: sql<number>`${RoleUsers.pick(ctx, sql`count(*)`, eq(roleUsers.roleId, roles.id))}`,
    }),
  },
  cells: (_ctx, r) => [
    r.id,
    r.name,
    r.key !== null ? m`Yes` : m`No`,
    toPermissions(r.permissions)
      .map((p) => p.name)
      .join(", "),
    r.users,
  ],
  summary: "Export every role (built-in and the school's) to Excel, with the list's filters",
  description: "Columns: Id, Name, Built-in, Permissions, Users (how many hold it in this school).",
  file: "The roles as an .xlsx workbook",
});
