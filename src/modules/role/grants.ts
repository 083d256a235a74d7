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
import { and, eq, isNull, lt, ne, type SQL, sql } from "drizzle-orm";
import { permissions, rolePermissions, roles, roleUsers, users } from "../../db/schema/core";
import { schoolUsers } from "../../db/schema/user";
import { inList, type Statement } from "../../db/write";
import { BUILTIN_ROLES, type BuiltinRole, FIRST_CUSTOM_PERMISSION_ID, type PermissionDef } from "../../lib/access";
import { type Ctx, schoolOf, tenant } from "../../lib/context";
import { forbidden, unprocessable } from "../../lib/errors";
import { grantsOf, permissionCatalogue } from "..";

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

/**
 * Whether the caller holds a permission here, as every rule of this file counts it: custom
 * permissions (ids from 1000) gate no route, so anyone holds them; super-admins hold everything.
 */
function holds(ctx: Ctx, permissionId: number): boolean {
  if (ctx.isSuperAdmin || permissionId >= FIRST_CUSTOM_PERMISSION_ID) return true;
  const def = builtIn(permissionId);
  return def !== undefined && ctx.can(def);
}

/** Refuses when the caller lacks one of the permissions (403 naming the first). */
function mayHold(ctx: Ctx, granted: readonly Granted[], verb: string): void {
  const lacking = granted.find((p) => !holds(ctx, p.id));
  if (lacking) {
    throw forbidden(`You cannot ${verb} permission ${lacking.name}: you do not hold it in school ${ctx.schoolId}`);
  }
}

/**
 * Refuses giving, changing or taking roles the caller could not grant: the super-admin role
 * always (403), any role with a permission the caller does not hold (403 naming it and the role).
 * A built-in role's permissions are the catalogue's (no query); custom roles' are read in one query.
 */
export async function mayAssign(ctx: Ctx, roleIds: readonly number[], verb = "assign"): Promise<void> {
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
export async function mayActOn(ctx: Ctx, people: People, action = "change"): Promise<void> {
  await judge(ctx, [actingOn(ctx, people, action)]);
}

/** User ids, or a sub-query selecting them (`SELECT user_id FROM teacher WHERE id = ?`). */
export type People = readonly number[] | SQL;

/**
 * Taking or changing roles of people: `mayAssign` for the roles and `mayActOn` for the people,
 * read in one round trip.
 */
export async function mayTake(ctx: Ctx, roleIds: readonly number[], people: People, verb = "remove"): Promise<void> {
  await judge(ctx, [assigning(ctx, roleIds, verb), actingOn(ctx, people, verb)]);
}

/** A check: the queries it needs (none when it decides without), and how it judges their rows. */
interface Check {
  queries: Statement[];
  decide: (rows: unknown[][]) => void;
}

/** Runs the checks' queries in one round trip (one batch), then judges in order. */
async function judge(ctx: Ctx, checks: Check[]): Promise<void> {
  const queries = checks.flatMap((c) => c.queries);
  let results: unknown[][] = [];
  const [first, ...rest] = queries;
  if (first) results = (await ctx.deps.db.batch([first, ...rest])) as unknown[][];
  let at = 0;
  for (const check of checks) {
    check.decide(results.slice(at, at + check.queries.length));
    at += check.queries.length;
  }
}

const BUILTIN_KEYS = Object.keys(BUILTIN_ROLES) as BuiltinRole[];
const builtInKey = (roleId: number) => BUILTIN_KEYS.find((k) => BUILTIN_ROLES[k].id === roleId);

function assigning(ctx: Ctx, roleIds: readonly number[], verb: string): Check {
  if (roleIds.includes(SUPER_ADMIN_ROLE)) {
    throw forbidden("The super-admin role cannot be assigned or removed through the API");
  }
  const refuse = (roleId: number, role: string, permission: string) =>
    forbidden(
      `You cannot ${verb} role ${role} (${roleId}): it grants ${permission}, which you do not hold in school ${ctx.schoolId}`,
    );
  if (ctx.isSuperAdmin || roleIds.length === 0) return { queries: [], decide: () => {} };
  // Built-in roles grant what the catalogue says (test/access.test.ts checks the database agrees).
  for (const roleId of roleIds) {
    const key = builtInKey(roleId);
    if (!key) continue;
    const lacking = grantsOf(key).find((p) => !holds(ctx, p.id));
    if (lacking) throw refuse(roleId, BUILTIN_ROLES[key].name, lacking.name);
  }
  const custom = roleIds.filter((id) => !builtInKey(id));
  if (custom.length === 0) return { queries: [], decide: () => {} };
  const query = ctx.deps.db
    .select({ roleId: rolePermissions.roleId, role: roles.name, id: permissions.id, name: permissions.name })
    .from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .innerJoin(roles, eq(roles.id, rolePermissions.roleId))
    .where(inList(rolePermissions.roleId, custom));
  return {
    queries: [query],
    decide: ([rows]) => {
      for (const row of (rows ?? []) as { roleId: number; role: string; id: number; name: string }[]) {
        if (!holds(ctx, row.id)) throw refuse(row.roleId, row.role, row.name);
      }
    },
  };
}

function actingOn(ctx: Ctx, people: People, action: string): Check {
  if (ctx.isSuperAdmin) return { queries: [], decide: () => {} };
  let among: (column: typeof roleUsers.userId | typeof users.id) => SQL;
  if (Array.isArray(people)) {
    const others = [...new Set(people as readonly number[])].filter((id) => id !== ctx.userId);
    if (others.length === 0) return { queries: [], decide: () => {} };
    among = (column) => inList(column, others);
  } else {
    among = (column) => sql`${column} IN (${people}) AND ${column} <> ${ctx.userId ?? 0}`;
  }
  const { db } = ctx.deps;
  // What the caller holds here, as one JSON parameter: the query answers only what they lack
  // (custom permissions, which everyone holds, are left out by the query).
  const held = JSON.stringify(
    permissionCatalogue()
      .filter((p) => holds(ctx, p.id))
      .map((p) => p.id),
  );
  const lacking = db
    .select({ userId: roleUsers.userId, name: permissions.name })
    .from(roleUsers)
    .innerJoin(rolePermissions, eq(rolePermissions.roleId, roleUsers.roleId))
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(
      and(
        tenant(ctx, roleUsers),
        among(roleUsers.userId),
        lt(rolePermissions.permissionId, FIRST_CUSTOM_PERMISSION_ID),
        sql`${rolePermissions.permissionId} NOT IN (SELECT value FROM json_each(${held}))`,
      ),
    )
    .limit(1);
  const platform = db
    .select({ userId: users.id })
    .from(users)
    .where(
      and(
        among(users.id),
        eq(users.isSuperAdmin, true),
        sql`EXISTS (SELECT 1 FROM ${schoolUsers} WHERE ${and(
          eq(schoolUsers.userId, users.id),
          eq(schoolUsers.schoolId, schoolOf(ctx)),
          isNull(schoolUsers.deletedAt),
        )})`,
      ),
    )
    .limit(1);
  return {
    queries: [lacking, platform],
    decide: ([byRole, superAdmins]) => {
      const [row] = (byRole ?? []) as { userId: number; name: string }[];
      if (row) {
        throw forbidden(
          `You cannot ${action} user ${row.userId}: they hold ${row.name} in school ${ctx.schoolId}, which you do not`,
        );
      }
      const [platformAdmin] = (superAdmins ?? []) as { userId: number }[];
      if (platformAdmin) {
        throw forbidden(
          `You cannot ${action} user ${platformAdmin.userId}: they are a platform super-admin, holding every permission, which you do not`,
        );
      }
    },
  };
}
