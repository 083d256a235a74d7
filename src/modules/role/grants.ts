/**
 * The escalation rules, in one place: every write that grants permissions (a role's permissions,
 * a role given to a user) asks `mayGrant` first, every write that gives, changes or takes a role
 * asks `mayAssign`, and every write that changes or removes a person asks `mayActOn`.
 *
 * - Platform permissions (those no built-in school role is granted: school.write, permission.manage,
 *   application-module.manage and .toggle, legal-document.write) can never be in a custom role (422).
 * - Nobody grants a built-in permission they do not hold in the current school (403 naming it);
 *   super-admins hold them all. Custom permissions (ids from 1000) gate no route of the service,
 *   so `role.write` is enough to grant them.
 * - The super-admin role (id 1) is never given, taken or changed through the API (403), not even
 *   by a super-admin: being one is the user's `is_super_admin` flag.
 * - Giving, changing or taking a role needs every permission the role grants: nobody promotes
 *   someone beyond themselves, nor demotes someone who holds more than they do. A delegation is the
 *   parent role's (a delegate acts with its permissions); an import gives its role when it starts.
 * - Nobody changes or removes a member who holds more than they do in the school: a person whose
 *   roles here grant a permission the caller lacks (a platform super-admin holds them all) is
 *   refused (403 naming it). Everyone may act on themselves where a route allows it.
 */
import { Batch, type Results } from "../../db/batch";
import {
  Permissions,
  permissions,
  RolePermissions,
  Roles,
  RoleUsers,
  rolePermissions,
  roles,
  roleUsers,
  Users,
  users,
} from "../../db/schema/core";
import { SchoolUsers, schoolUsers } from "../../db/schema/user";
import { eq, isNull, lt, ne, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import {
  BUILTIN_ROLES,
  type BuiltinRole,
  FIRST_CUSTOM_PERMISSION_ID,
  grantsOf,
  type PermissionDef,
  permissionCatalogue,
} from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { forbidden, unprocessable } from "../../lib/errors";
import { type Message, m } from "../../lib/message";

export const SUPER_ADMIN_ROLE = BUILTIN_ROLES["super-admin"].id;
export const SCHOOL_ADMIN_ROLE = BUILTIN_ROLES["school-admin"].id;

/** A role anyone may be given: any but super-admin (being one is the user's flag). */
export const givableRole = ne(roles.id, SUPER_ADMIN_ROLE);

export interface Granted {
  id: number;
  name: string;
}

const builtIn = (id: number): PermissionDef | undefined => permissionCatalogue().find((p) => p.id === id);

/** Platform-level: a built-in permission that no built-in school role is granted. */
export const isPlatform = (id: number) => (builtIn(id)?.grants.length ?? 1) === 0;

/** Refuses permissions a custom role may not hold (422) or the caller may not grant (403). */
export function mayGrant(ctx: SchoolCtx, granted: readonly Granted[]): void {
  const platform = granted.find((p) => isPlatform(p.id));
  if (platform) {
    throw unprocessable(m`Permission ${platform.name} is a platform permission and cannot be in a school's role`);
  }
  mayHold(ctx, granted, m`grant`);
}

/**
 * Whether the caller holds a permission here, as every rule of this file counts it: custom
 * permissions (ids from 1000) gate no route, so anyone holds them; super-admins hold everything.
 */
function holds(ctx: SchoolCtx, permissionId: number): boolean {
  if (ctx.isSuperAdmin || permissionId >= FIRST_CUSTOM_PERMISSION_ID) return true;
  const def = builtIn(permissionId);
  return def !== undefined && ctx.can(def);
}

/** Refuses when the caller lacks one of the permissions (403 naming the first). */
function mayHold(ctx: SchoolCtx, granted: readonly Granted[], verb: Message): void {
  const lacking = granted.find((p) => !holds(ctx, p.id));
  if (lacking) {
    throw forbidden(m`You cannot ${verb} permission ${lacking.name}: you do not hold it in school ${ctx.schoolId}`);
  }
}

/**
 * Refuses giving, changing or taking roles the caller could not grant: the super-admin role
 * always (403), any role with a permission the caller does not hold (403 naming it and the role).
 * A built-in role's permissions are the catalogue's (no query); custom roles' are read in one query.
 */
export async function mayAssign(ctx: SchoolCtx, roleIds: readonly number[], verb: Message = m`assign`): Promise<void> {
  await judge(ctx, [assigning(ctx, roleIds, verb)]);
}

/**
 * Refuses changing or removing people who hold, in the current school, a built-in permission the
 * caller does not (403 naming the person and the permission): the permissions their roles grant
 * here, or every one for a platform super-admin who is a member here. The caller themself is never
 * refused (a route that allows acting on oneself decides), nor is a super-admin. `people` are user
 * ids, or a sub-query of them (the user of the record a route changes, read in the same query).
 * One round trip for all of them; people who are not members here hold nothing here (the route's
 * own 404 follows).
 */
export async function mayActOn(ctx: SchoolCtx, people: People, action: Message = m`change`): Promise<void> {
  await judge(ctx, [actingOn(ctx, people, action)]);
}

/** User ids, or a sub-query selecting them (`SELECT user_id FROM teacher WHERE id = ?`). */
export type People = readonly number[] | SQL;

/**
 * Taking or changing roles of people: `mayAssign` for the roles and `mayActOn` for the people,
 * read in one round trip.
 */
export async function mayTake(
  ctx: SchoolCtx,
  roleIds: readonly number[],
  people: People,
  verb: Message = m`remove`,
): Promise<void> {
  await judge(ctx, [assigning(ctx, roleIds, verb), actingOn(ctx, people, verb)]);
}

/** A check: it adds the reads it needs to the batch (none when it decides without) and judges their rows. */
type Check = (batch: Batch) => (results: Results) => void;

const decided: Check = () => () => {};

/** Runs the checks' reads in one round trip (one batch), then judges in order. */
async function judge(ctx: SchoolCtx, checks: Check[]): Promise<void> {
  const batch = new Batch(ctx);
  const decisions = checks.map((check) => check(batch));
  const results = await batch.commit();
  for (const decide of decisions) decide(results);
}

const builtInKey = (roleId: number): BuiltinRole | undefined => {
  for (const [key, role] of Object.entries(BUILTIN_ROLES)) if (role.id === roleId && isBuiltin(key)) return key;
  return undefined;
};
const isBuiltin = (key: string): key is BuiltinRole => key in BUILTIN_ROLES;

function assigning(ctx: SchoolCtx, roleIds: readonly number[], verb: Message): Check {
  if (roleIds.includes(SUPER_ADMIN_ROLE)) {
    throw forbidden(m`The super-admin role cannot be assigned or removed through the API`);
  }
  const refuse = (roleId: number, role: string, permission: string) =>
    forbidden(
      m`You cannot ${verb} role ${role} (${roleId}): it grants ${permission}, which you do not hold in school ${ctx.schoolId}`,
    );
  if (ctx.isSuperAdmin || roleIds.length === 0) return decided;
  // Built-in roles grant what the catalogue says (test/access.test.ts checks the database agrees).
  for (const roleId of roleIds) {
    const key = builtInKey(roleId);
    if (!key) continue;
    const lacking = grantsOf(key).find((p) => !holds(ctx, p.id));
    if (lacking) throw refuse(roleId, BUILTIN_ROLES[key].name, lacking.name);
  }
  const custom = roleIds.filter((id) => !builtInKey(id));
  if (custom.length === 0) return decided;
  const query = Roles.select(ctx, {
    roleId: rolePermissions.roleId,
    role: roles.name,
    id: permissions.id,
    name: permissions.name,
  })
    .join(RolePermissions, eq(rolePermissions.roleId, roles.id))
    .join(Permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(inList(rolePermissions.roleId, custom));
  return (batch) => {
    const granted = batch.read(query);
    return (results) => {
      for (const row of results.get(granted)) {
        if (!holds(ctx, row.id)) throw refuse(row.roleId, row.role, row.name);
      }
    };
  };
}

function actingOn(ctx: SchoolCtx, people: People, action: Message): Check {
  if (ctx.isSuperAdmin) return decided;
  let among: (column: typeof roleUsers.userId | typeof users.id) => SQL;
  if (isSubquery(people)) {
    among = (column) => sql`${column} IN (${people}) AND ${column} <> ${ctx.userId ?? 0}`;
  } else {
    const others = [...new Set(people)].filter((id) => id !== ctx.userId);
    if (others.length === 0) return decided;
    among = (column) => inList(column, others);
  }
  // What the caller holds here, as one JSON parameter: the query answers only what they lack
  // (custom permissions, which everyone holds, are left out by the query).
  const held = JSON.stringify(
    permissionCatalogue()
      .filter((p) => holds(ctx, p.id))
      .map((p) => p.id),
  );
  const lacking = RoleUsers.select(ctx, { userId: roleUsers.userId, name: permissions.name })
    .join(RolePermissions, eq(rolePermissions.roleId, roleUsers.roleId))
    .join(Permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(
      among(roleUsers.userId),
      lt(rolePermissions.permissionId, FIRST_CUSTOM_PERMISSION_ID),
      sql`${rolePermissions.permissionId} NOT IN (SELECT value FROM json_each(${held}))`,
    )
    .limit(1);
  const platform = Users.select(ctx, { userId: users.id })
    .where(
      among(users.id),
      eq(users.isSuperAdmin, true),
      SchoolUsers.exists(ctx, eq(schoolUsers.userId, users.id), isNull(schoolUsers.deletedAt)),
    )
    .limit(1);
  return (batch) => {
    const byRole = batch.read(lacking);
    const superAdmins = batch.read(platform);
    return (results) => {
      const [row] = results.get(byRole);
      if (row) {
        throw forbidden(
          m`You cannot ${action} user ${row.userId}: they hold ${row.name} in school ${ctx.schoolId}, which you do not`,
        );
      }
      const [platformAdmin] = results.get(superAdmins);
      if (platformAdmin) {
        throw forbidden(
          m`You cannot ${action} user ${platformAdmin.userId}: they are a platform super-admin, holding every permission, which you do not`,
        );
      }
    };
  };
}

/** People given as a sub-query rather than a list of ids. */
const isSubquery = (people: People): people is SQL => !Array.isArray(people);
