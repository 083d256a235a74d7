/**
 * The one auth check. Every route declares its access (see `defineRoute`); this middleware
 * authenticates the bearer token, resolves the current school from `X-School-Id`, and checks the
 * declared permission, before any input is parsed or any handler runs.
 */
import type { MiddlewareHandler } from "hono";
import { type Access, PermissionSet } from "../lib/access";
import type { AppEnv, Principal } from "../lib/context";
import { ApiError } from "../lib/errors";
import { verifyAccessToken } from "../modules/auth/tokens";

export type { Access };

/**
 * - `school`: tenant data; the current school must be known (header, or the caller's only school).
 * - `platform`: data shared by every school (the permission catalogue); the school only decides
 *   which roles apply.
 */
export type Scope = "school" | "platform";

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;
const SCHOOL_ID = /^[1-9]\d{0,9}$/;

export function authorize(access: Access, scope: Scope): MiddlewareHandler<AppEnv> {
  return async function authorizeRequest(c, next) {
    if (access === "public") return next();
    const { config, clock } = c.var.deps;
    const match = BEARER.exec(c.req.header("authorization") ?? "");
    if (!match?.[1]) throw unauthorized("Missing bearer token", "Send `Authorization: Bearer <accessToken>`.");
    const claims = await verifyAccessToken(config.authSecret, match[1], clock.now());
    if (!claims) throw unauthorized("Invalid or expired access token", "Refresh it or sign in again.");

    const isSuperAdmin = claims.sa === 1;
    const memberships = claims.sch;
    let schoolId: number | null = null;
    if (access !== "user") {
      const header = c.req.header("x-school-id");
      const schools = Object.keys(memberships);
      if (header !== undefined) {
        if (!SCHOOL_ID.test(header)) {
          throw new ApiError(400, "X-School-Id must be a positive integer", {
            errors: [{ path: "X-School-Id", message: "Expected a positive integer" }],
          });
        }
        if (!isSuperAdmin && !(header in memberships)) throw new ApiError(403, `You have no role in school ${header}`);
        schoolId = Number(header);
      } else if (schools.length === 1) {
        schoolId = Number(schools[0]);
      } else if (schools.length === 0 && !isSuperAdmin) {
        throw new ApiError(403, "You have no role in any school");
      } else if (scope === "school" || (access !== "member" && !isSuperAdmin)) {
        // Even platform data needs a school to know which of the caller's roles apply.
        throw new ApiError(400, "X-School-Id header is required: you belong to more than one school", {
          errors: [{ path: "X-School-Id", message: "Required" }],
        });
      }
    }

    const bitmap = schoolId === null ? "" : (memberships[String(schoolId)] ?? "");
    const principal: Principal = {
      userId: Number(claims.sub),
      isSuperAdmin,
      schoolId,
      can: (permission) => isSuperAdmin || PermissionSet.has(bitmap, permission.id),
    };
    if (typeof access !== "string" && !principal.can(access)) {
      throw new ApiError(403, `Missing permission ${access.name}${schoolId === null ? "" : ` in school ${schoolId}`}`);
    }
    c.set("principal", principal);
    return next();
  };
}

function unauthorized(title: string, detail: string) {
  return new ApiError(401, detail, { title, headers: { "www-authenticate": 'Bearer realm="api"' } });
}
