/**
 * The escalation rules, in one place: every write that grants permissions (a role's permissions,
 * a role given to a user) asks `mayGrant` first.
 *
 * - Platform permissions (those no built-in school role is granted: school.write, permission.manage,
 *   application-module.manage and .toggle, legal-document.write) can never be in a custom role (422).
 * - Nobody grants a built-in permission they do not hold in the current school (403 naming it);
 *   super-admins hold them all. Custom permissions (ids from 1000) gate no route of the service,
 *   so `role.write` is enough to grant them.
 * - The super-admin role (id 1) is never given, taken or changed through the API (403), not even
 *   by a super-admin: being one is the user's `is_super_admin` flag.
 * - Giving, changing or taking a role needs every permission the role grants: nobody promotes
 *   someone beyond themselves, nor demotes someone who holds more than they do.
 */
import { and, eq, ne, sql } from "drizzle-orm";
import { permissions, rolePermissions, roles } from "../../db/core";
import { BUILTIN_ROLES, FIRST_CUSTOM_PERMISSION_ID, type PermissionDef } from "../../lib/access";
import { type Ctx, schoolOf } from "../../lib/context";
import { forbidden, unprocessable } from "../../lib/errors";
import { inList } from "../../lib/write";
import { permissionCatalogue } from "..";

export const SUPER_ADMIN_ROLE = BUILTIN_ROLES["super-admin"].id;
export const SCHOOL_ADMIN_ROLE = BUILTIN_ROLES["school-admin"].id;

/** A role the current school may give: a built-in one (not super-admin) or one of its own. */
export const usableRole = (ctx: Ctx) =>
  and(ne(roles.id, SUPER_ADMIN_ROLE), sql`(${roles.schoolId} IS NULL OR ${roles.schoolId} = ${schoolOf(ctx)})`);

export interface Granted {
  id: number;
  name: string;
}

const builtIn = (id: number): PermissionDef | undefined => permissionCatalogue().find((p) => p.id === id);

/** Platform-level: a built-in permission that no built-in school role is granted. */
export const isPlatform = (id: number) => (builtIn(id)?.grants.length ?? 1) === 0;

/** Refuses permissions a custom role may not hold (422) or the caller may not grant (403). */
export function mayGrant(ctx: Ctx, granted: readonly Granted[]): void {
  const platform = granted.find((p) => isPlatform(p.id));
  if (platform) {
    throw unprocessable(`Permission ${platform.name} is a platform permission and cannot be in a school's role`);
  }
  mayHold(ctx, granted, "grant");
}

/** Refuses when the caller lacks one of the permissions (403 naming the first). */
function mayHold(ctx: Ctx, granted: readonly Granted[], verb: string): void {
  if (ctx.isSuperAdmin) return;
  for (const p of granted) {
    if (p.id >= FIRST_CUSTOM_PERMISSION_ID) continue;
    const def = builtIn(p.id);
    if (!def || !ctx.can(def)) {
      throw forbidden(`You cannot ${verb} permission ${p.name}: you do not hold it in school ${ctx.schoolId}`);
    }
  }
}

/** The permissions a role grants (id and name), read in one query. */
export async function permissionsOfRole(ctx: Ctx, roleId: number): Promise<Granted[]> {
  return ctx.deps.db
    .select({ id: permissions.id, name: permissions.name })
    .from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(eq(rolePermissions.roleId, roleId));
}

/**
 * Refuses giving, changing or taking roles the caller could not grant: the super-admin role
 * always (403), any role with a permission the caller does not hold (403 naming it and the role).
 * One query for all the roles.
 */
export async function mayAssign(ctx: Ctx, roleIds: readonly number[], verb = "assign"): Promise<void> {
  if (roleIds.includes(SUPER_ADMIN_ROLE)) {
    throw forbidden("The super-admin role cannot be assigned or removed through the API");
  }
  if (ctx.isSuperAdmin || roleIds.length === 0) return;
  const rows = await ctx.deps.db
    .select({ roleId: rolePermissions.roleId, role: roles.name, id: permissions.id, name: permissions.name })
    .from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .innerJoin(roles, eq(roles.id, rolePermissions.roleId))
    .where(inList(rolePermissions.roleId, roleIds));
  for (const row of rows) {
    if (row.id >= FIRST_CUSTOM_PERMISSION_ID) continue;
    const def = builtIn(row.id);
    if (!def || !ctx.can(def)) {
      throw forbidden(
        `You cannot ${verb} role ${row.role} (${row.roleId}): it grants ${row.name}, which you do not hold in school ${ctx.schoolId}`,
      );
    }
  }
}
