/**
 * Who acts for whom. A delegate acts for a parent in the app on the days from `valid_from` to
 * `valid_until` (inclusive), as the school's wall clocks read them (its time zone), with the
 * built-in parent role's permissions in that school and no more (the access token:
 * `delegatedMemberships` below, used by src/modules/auth/service.ts).
 */
import { rolePermissions, Schools, schools, Users, users } from "../../db/schema/core";
import { Delegates, delegates, delegationsAround } from "../../db/schema/delegate";
import { Parents, parents } from "../../db/schema/parent";
import { eq, type SQLWrapper, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { Deps } from "../../deps";
import { BUILTIN_ROLES, type PermissionDef } from "../../lib/access";
import type { MemberCtx, SchoolCtx } from "../../lib/context";
import { validToday } from "../../lib/zoned-time";

/**
 * The delegations of a user that may be valid today somewhere (`delegationsAround`), each with its
 * school's time zone and the parent role's permission ids (one row per permission).
 */
export function delegationsQuery(deps: Deps, userId: number) {
  return deps.db
    .select({
      schoolId: Delegates.schoolOf(),
      timeZone: schools.timeZone,
      language: schools.language,
      validFrom: delegates.validFrom,
      validUntil: delegates.validUntil,
      permissionId: rolePermissions.permissionId,
    })
    .from(delegates)
    .innerJoin(schools, eq(schools.id, Delegates.schoolOf()))
    .innerJoin(parents, eq(parents.id, delegates.parentId))
    .innerJoin(users, eq(users.id, parents.userId))
    .leftJoin(rolePermissions, eq(rolePermissions.roleId, BUILTIN_ROLES.parent.id))
    .where(delegationsAround(userId, deps.clock.now()));
}

/** The memberships a user's delegations give at `now`: the parent role's permissions per school. */
export function delegatedMemberships<L extends string>(
  rows: {
    schoolId: number;
    timeZone: string;
    language: L;
    validFrom: string;
    validUntil: string;
    permissionId: number | null;
  }[],
  now: Date,
): { schoolId: number; permissionId: number | null; language: L }[] {
  return rows
    .filter((r) => validToday(r, now))
    .map((r) => ({ schoolId: r.schoolId, permissionId: r.permissionId, language: r.language }));
}

/**
 * The user ids the caller may act for in the current school today: themself, and every parent
 * whose valid delegate they are. Parent-scoped visibility (a family's children and records) is
 * `inList(<the record's parent user>, await actingFor(ctx))`. One D1 call.
 */
export async function actingFor(ctx: SchoolCtx): Promise<number[]> {
  const self = ctx.userId;
  if (self === null) return [];
  const now = ctx.deps.clock.now();
  return actedForBy(self, await delegationsHere(ctx, self, now).all(), now);
}

/**
 * The context loader of the routes whose records a caller without `seeAll` sees through their
 * children: whom they act for today (one D1 call), in `ctx.actingFor` (`actedUsers` reads it).
 */
export const actingLoader =
  (seeAll: PermissionDef) =>
  async (ctx: MemberCtx): Promise<MemberCtx> =>
    ctx.can(seeAll) ? ctx : { ...ctx, actingFor: await actingFor(ctx) };

/**
 * The read behind `actingFor`, for a caller that puts it in a batch of its own: `self`'s
 * delegations in the current school that may be valid at `now`, each with the school's time zone.
 */
export function delegationsHere(ctx: SchoolCtx, self: number, now: Date) {
  return Delegates.select(ctx, {
    parentUserId: parents.userId,
    timeZone: schools.timeZone,
    validFrom: delegates.validFrom,
    validUntil: delegates.validUntil,
  })
    .join(Parents, eq(parents.id, delegates.parentId))
    .join(Users, eq(users.id, parents.userId))
    .join(Schools, eq(schools.id, ctx.schoolId))
    .where(delegationsAround(self, now));
}

/** `actingFor`'s answer from `delegationsHere`'s rows: `self` and the parents of the delegations valid today. */
export function actedForBy(
  self: number,
  rows: readonly { parentUserId: number; timeZone: string; validFrom: string; validUntil: string }[],
  now: Date,
): number[] {
  return [self, ...new Set(rows.filter((r) => validToday(r, now)).map((r) => r.parentUserId))];
}

/** `column IN (the users the caller acts for)`, for a query already holding `actingFor`'s answer. */
export const actedFor = (column: SQLWrapper, ids: readonly number[]) => (ids.length ? inList(column, ids) : sql`0`);
