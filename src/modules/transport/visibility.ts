/**
 * Who sees which routes. Staff (`transport.read`), teachers and jobs see every route of the school.
 * A caller who holds the built-in `driver` role here and not `transport.read` sees only the routes
 * whose vehicle they drive (`transport.driver_user_id`): every other route is a 404 to them, and
 * lists hold only theirs. The route-student and availability modules apply the same rule
 * (`routeVisible` in ./api.ts).
 */
import { RoleUsers, roleUsers } from "../../db/schema/core";
import { Transports, transports } from "../../db/schema/transport";
import { eq, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { permissions } from "./permissions";

/** The vehicles the caller drives in this school (a sub-select of transport ids). */
export const drivenBy = (ctx: SchoolCtx, userId: number) =>
  Transports.pick(ctx, transports.id, eq(transports.driverUserId, userId));

/**
 * The condition on a route's vehicle column (`route.transport_id`) that keeps a driver to the routes
 * of the vehicles they drive; undefined for whoever sees every route.
 */
export function routeVisible(ctx: SchoolCtx, transportId: SQLWrapper): SQL | undefined {
  if (ctx.userId === null || ctx.isSuperAdmin || ctx.can(permissions.read)) return undefined;
  const driver = RoleUsers.exists(ctx, eq(roleUsers.userId, ctx.userId), eq(roleUsers.roleId, BUILTIN_ROLES.driver.id));
  return sql`(NOT ${driver} OR ${inList(transportId, drivenBy(ctx, ctx.userId))})`;
}
