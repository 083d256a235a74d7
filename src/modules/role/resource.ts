/**
 * Roles: sets of permissions. The five built-in roles (super-admin, school admin, administrative
 * staff, teacher, parent) belong to no school and are read-only (422 on PUT and DELETE); a school
 * creates its own custom roles, whose names are unique in the school (409, also with a built-in
 * role's name). Another school's custom role is a 404. Permissions are named by name or id; what
 * a role may grant is decided by `mayGrant` (./grants.ts).
 */
import { z } from "@hono/zod-openapi";
import { and, asc, eq, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import { auditAction } from "../../db/audit";
import { permissions, rolePermissions, roles, roleUsers } from "../../db/schema/core";
import { withSearch } from "../../db/search";
import { commit, guard, inList, insertedId, type Statement } from "../../db/write";
import { type Ctx, ctxOf, schoolOf } from "../../lib/context";
import { conflict, unprocessable } from "../../lib/errors";
import { defineResource, type Filter, RecordBase } from "../../lib/resource/old";
import { defineRoute, handled, json } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { type Granted, mayGrant, usableRole } from "./grants";
import { permissions as access } from "./permissions";

/**
 * `role` without its `school_id` property: the block would otherwise scope every query to the
 * school's own rows, hiding the built-in roles. `visibleTo` scopes instead (built-ins are read
 * only), and a create writes the school itself.
 */
const table = new Proxy(roles, {
  get: (target, prop) => (prop === "schoolId" ? undefined : Reflect.get(target, prop, target)),
}) as Omit<typeof roles, "schoolId"> as typeof roles;

const Permission = z.object({ id: z.number().int(), name: z.string() });

const Record = RecordBase.extend({
  name: z.string().openapi({ example: "Librarian" }),
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

const toPermissions = (raw: string | null) =>
  (JSON.parse(raw ?? "[]") as Granted[]).sort((a, b) => a.name.localeCompare(b.name));

export const roleResource = defineResource({
  name: "role",
  plural: "roles",
  label: "Role",
  entity: "role",
  path: "/api/v1/role",
  tag: "People",
  scope: "school",
  table,
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
  toRecord: (row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    name: row.name,
    key: row.key,
    builtIn: row.key !== null,
    permissions: toPermissions(row.permissions),
  }),
  // Reads: the built-in roles and the school's own; writes: the school's own only.
  visibleTo: (ctx, how) => (how === "read" ? visibleHere(schoolOf(ctx)) : eq(roles.schoolId, schoolOf(ctx))),
  conflictMessage: "A role with this name already exists in this school",
});

const resource = roleResource;

/** Built-in roles (no school) count as school 0: the key of role_scope_idx. */
const scopeOf = sql<number>`ifnull(${roles.schoolId}, 0)`;
const visibleHere = (schoolId: number) => sql`${scopeOf} IN (0, ${schoolId})`;

const yes = z.enum(["true", "false"]).optional();

const filters = {
  name: {
    schema: searchTerm("Part of the role's name"),
    where: (v: string) => contains(roles.nameSearch, v),
    example: "a",
  } satisfies Filter<string>,
  builtIn: {
    schema: yes.openapi({ description: "true: the built-in roles only; false: the school's custom roles only" }),
    where: (v: "true" | "false") => (v === "true" ? isNull(roles.schoolId) : isNotNull(roles.schoolId)),
    example: "false",
  } satisfies Filter<"true" | "false">,
};

export const listRoles = resource.list({
  access: access.read,
  filters,
  // Built-in roles (school 0 in role_scope_idx) then the school's own, each by id: the order of
  // role_scope_idx, so no sort step.
  defaultOrder: [{ by: scopeOf }, { by: roles.id }],
  summary: "List the built-in roles and the school's custom roles (paginated), built-in first",
});

export const getRole = resource.get({ access: access.read, summary: "Get a role with its permissions" });

const AllRoles = z.array(resource.record).openapi("RoleList");

/** Every role the school may give, unpaginated (for pickers): at most the 5 built-ins and its own. */
export async function allRoles(ctx: Ctx) {
  const rows = await ctx.deps.db
    .select({
      id: roles.id,
      createdAt: roles.createdAt,
      updatedAt: roles.updatedAt,
      name: roles.name,
      key: roles.key,
      permissions: permissionsJson.as("permissions"),
    })
    .from(roles)
    .where(and(visibleHere(schoolOf(ctx)), usableRole(ctx)))
    .orderBy(asc(scopeOf), asc(roles.id));
  return rows.map((row) => resource.toRecord(row, ctx));
}

export const listAllRoles = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/role/all",
    tag: "People",
    operationId: "listAllRoles",
    summary: "Every role the school may give (built-in and its own), unpaginated, for pickers",
    description: "Not the super-admin role, which is never given through the API (being one is a user's flag).",
    access: access.read,
    responses: { 200: json(AllRoles, "The roles, built-in first") },
  }),
  async (c) => c.json(await allRoles(ctxOf(c)), 200),
);

const Name = text({ max: 100 }).openapi({ example: "Librarian" });
const PermissionRef = z
  .union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), z.string().min(1).max(100)])
  .openapi({ description: "A permission's id or name", example: "student.read" });
const PermissionRefs = z
  .array(PermissionRef)
  .max(200)
  .openapi({ description: "The permissions it grants, by id or name (the whole set)", example: ["student.read"] });

/** Resolves permission ids and names against the catalogue (built-in and custom); unknown ones: 422. */
async function resolvePermissions(ctx: Ctx, refs: readonly (number | string)[]): Promise<Granted[]> {
  if (refs.length === 0) return [];
  const ids = refs.filter((r): r is number => typeof r === "number");
  const names = refs.filter((r): r is string => typeof r === "string");
  const found = await ctx.deps.db
    .select({ id: permissions.id, name: permissions.name })
    .from(permissions)
    .where(
      or(
        ids.length ? inList(permissions.id, ids) : undefined,
        names.length ? inList(permissions.name, names) : undefined,
      ),
    );
  const unknown = refs.filter((r) => !found.some((p) => p.id === r || p.name === r));
  if (unknown.length) throw unprocessable(`Unknown permission${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`);
  return found;
}

/** A custom role may not take a built-in role's name (which the unique index cannot see). */
const BUILTIN_NAMES = ["super admin", "school admin", "administrative staff", "teacher", "parent"];
function refuseBuiltinName(name: string) {
  if (BUILTIN_NAMES.includes(name.trim().toLowerCase())) throw conflict(`${name} is the name of a built-in role`);
}

const namesJson = (granted: readonly Granted[]) => JSON.stringify(granted.map((p) => p.name).sort());

/** Replaces the role's permissions (delete, then insert from one JSON parameter). */
function setPermissions(ctx: Ctx, roleId: number | SQL<number>, granted: readonly Granted[]): Statement[] {
  const { db } = ctx.deps;
  const ids = JSON.stringify(granted.map((p) => p.id));
  return [
    db.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId)),
    db.insert(rolePermissions).select(sql`SELECT ${roleId}, value FROM json_each(${ids})`),
  ];
}

const created = resource.create({
  access: access.write,
  input: z.object({ name: Name, permissions: PermissionRefs.default([]) }),
  summary: "Create a custom role in the current school",
  description:
    "Permissions by id or name. 422 for an unknown or platform permission, 403 for one the caller does not hold, " +
    "409 for a name the school (or a built-in role) already has.",
  errors: [403, 422],
});

/** Creates a custom role with its permissions in one batch (the audit row lists them by name). */
export async function createRole(ctx: Ctx, input: { name: string; permissions: (number | string)[] }) {
  refuseBuiltinName(input.name);
  const granted = await resolvePermissions(ctx, input.permissions);
  mayGrant(ctx, granted);
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const id = insertedId(roles);
  const results = await commit(
    ctx,
    [
      db
        .insert(roles)
        .values(
          withSearch(roles, { name: input.name, key: null, schoolId: schoolOf(ctx), createdAt: at, updatedAt: at }),
        ),
      ...setPermissions(ctx, id, granted).slice(1),
      auditAction(
        ctx,
        resource.audit,
        eq(roles.id, id),
        "create",
        sql`json_object('name', json_object('old', NULL, 'new', ${roles.name}), 'permissions', json_object('old', NULL, 'new', json(${namesJson(granted)})))`,
      ),
      resource.readOne(ctx, id),
    ],
    { conflict: resource.config.conflictMessage },
  );
  const [row] = results.at(-1) as unknown[];
  if (!row) throw new Error("role: the created role was not read back");
  return resource.toRecord(row, ctx);
}

export const createRoleOperation = handled(created.route, async (c) =>
  c.json(await createRole(ctxOf(c), c.req.valid("json")), 201),
);

/** Refuses writes to a built-in role (422); another school's role or an unknown one is a 404. */
async function customRole(ctx: Ctx, id: number) {
  const record = await resource.find(ctx, id);
  if (record.builtIn) throw unprocessable(`Role ${id} (${record.name}) is built in and cannot be changed or deleted`);
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
});

export async function updateRole(ctx: Ctx, id: number, input: { name?: string; permissions?: (number | string)[] }) {
  const before = await customRole(ctx, id);
  // Managing a role needs what it grants now (no stripping a role one could not have made).
  mayGrant(ctx, before.permissions);
  if (input.name !== undefined) refuseBuiltinName(input.name);
  const granted = input.permissions ? await resolvePermissions(ctx, input.permissions) : undefined;
  if (granted) mayGrant(ctx, granted);
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const where = and(eq(roles.id, id), eq(roles.schoolId, schoolOf(ctx)));
  const changes: SQL[] = [];
  if (input.name !== undefined) {
    changes.push(
      sql`'name', CASE WHEN ${roles.name} IS NOT ${input.name} THEN json_object('old', ${roles.name}, 'new', ${input.name}) END`,
    );
  }
  if (granted) {
    changes.push(
      sql`'permissions', json_object('old', json(${namesJson(before.permissions)}), 'new', json(${namesJson(granted)}))`,
    );
  }
  await resource.commit(ctx, id, [
    auditAction(
      ctx,
      resource.audit,
      where,
      "update",
      sql`json_patch('{}', json_object(${sql.join(changes, sql`, `)}))`,
    ),
    db
      .update(roles)
      .set(withSearch(roles, { ...(input.name !== undefined ? { name: input.name } : {}), updatedAt: at }))
      .where(where),
    guard(db),
    ...(granted ? setPermissions(ctx, id, granted) : []),
  ]);
}

export const updateRoleOperation = handled(updated.route, async (c) => {
  await updateRole(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  return c.body(null, 204);
});

const deleted = resource.delete({
  access: access.write,
  summary: "Delete a custom role (not while users hold it: 409)",
  description: "Built-in roles are read-only (422). A role still held by users is a 409 naming how many.",
  errors: [403, 409, 422],
});

/**
 * Deletes a custom role no one holds. The "no one holds it" check is part of the DELETE's
 * condition, so a membership given meanwhile makes it a 409 rather than a silent cascade.
 */
export async function deleteRole(ctx: Ctx, id: number) {
  const before = await customRole(ctx, id);
  mayGrant(ctx, before.permissions);
  const held = sql`NOT EXISTS (SELECT 1 FROM role_user ru WHERE ru.role_id = "role"."id")`;
  try {
    await resource.change(ctx, id, {
      action: "delete",
      remove: true,
      rules: [{ when: held, message: "held" }],
    });
  } catch (err) {
    if (!(err instanceof Error) || !("status" in err) || err.status !== 422) throw err;
    const [n] = await ctx.deps.db
      .select({ n: sql<number>`count(*)` })
      .from(roleUsers)
      .where(and(eq(roleUsers.schoolId, schoolOf(ctx)), eq(roleUsers.roleId, id)));
    throw conflict(`Role ${id} is still held by ${n?.n ?? 0} user(s); take it from them first`);
  }
}

export const deleteRoleOperation = handled(deleted.route, async (c) => {
  await deleteRole(ctxOf(c), c.req.valid("param").id);
  return c.body(null, 204);
});

export const exportRoles = resource.export({
  access: access.read,
  list: listRoles,
  filename: (ctx) => `roles-school-${schoolOf(ctx)}.xlsx`,
  sheet: "Roles",
  columns: ["Id", "Name", "Built-in", "Permissions", "Users"],
  extra: {
    // How many users hold each role in this school.
    fields: (ctx) => ({
      users: sql<number>`(SELECT count(*) FROM role_user ru WHERE ru.school_id = ${schoolOf(ctx)} AND ru.role_id = "role"."id")`,
    }),
  },
  cells: (r) => [
    r.id,
    r.name,
    r.key !== null ? "Yes" : "No",
    toPermissions(r.permissions)
      .map((p) => p.name)
      .join(", "),
    r.users,
  ],
  summary: "Export every role (built-in and the school's) to Excel, with the list's filters",
  description: "Columns: Id, Name, Built-in, Permissions, Users (how many hold it in this school).",
  file: "The roles as an .xlsx workbook",
});
