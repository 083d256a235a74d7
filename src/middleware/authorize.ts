/**
 * The one auth check. Every route declares its access (see `defineRoute`); this middleware
 * authenticates the bearer token, resolves the current school from `X-School-Id`, checks that the
 * route's application module (if it declares one) is enabled in that school, and checks the
 * declared permission, before any input is parsed or any handler runs. None of it costs a D1
 * round trip for a member: the token carries, per school, the permission bitmap and the set of
 * disabled modules; a school the token does not list is looked up once (current-school.ts), its
 * disabled modules and language in the same query. It also settles the language the request is
 * answered in, when its header names none: the user's, else the school's (src/lib/language.ts).
 */
import type { MiddlewareHandler } from "hono";
import { type Access, PermissionSet, type Scope } from "../lib/access";
import { APP_MODULES, type AppModuleKey, ModuleSet, moduleDisabled } from "../lib/app-modules";
import type { AppEnv, Principal } from "../lib/context";
import { ApiError, say } from "../lib/errors";
import { chooseLanguage } from "../lib/language";
import { type Message, m } from "../lib/message";
import { currentRequest } from "../lib/metrics";
import { verifyAccessToken } from "../lib/tokens";
import { currentSchool } from "./current-school";

export type { Access, Scope };

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;

export function authorize(access: Access, scope: Scope, module?: AppModuleKey): MiddlewareHandler<AppEnv> {
  return async function authorizeRequest(c, next) {
    if (access === "public") return next();
    const { config, clock } = c.get("deps");
    const match = BEARER.exec(c.req.header("authorization") ?? "");
    if (!match?.[1]) throw unauthorized(m`Missing bearer token`, m`Send \`Authorization: Bearer <accessToken>\`.`);
    const claims = await verifyAccessToken(config.authSecret, match[1], clock.now());
    if (!claims) throw unauthorized(m`Invalid or expired access token`, m`Refresh it or sign in again.`);

    // The request's language, settled here once: its header's (set by the access log), else the
    // user's, else the school's (src/lib/language.ts); a token minted before these claims has neither.
    const request = currentRequest();
    if (request) request.language = chooseLanguage(request.language, claims.lng, undefined);

    const isSuperAdmin = claims.sa === 1;
    const memberships = claims.sch;
    const school = access === "user" ? null : await currentSchool(c, claims, access, scope);
    const schoolId = school?.id ?? null;
    if (request && schoolId !== null) {
      request.schoolLanguage = school?.language ?? claims.sl?.[String(schoolId)];
      request.language = chooseLanguage(request.language, undefined, request.schoolLanguage);
    }

    if (module && schoolId !== null) {
      // Read from the school lookup when there was one, else from the token (as of its issue).
      const disabled = school?.disabledModules ?? claims.off?.[String(schoolId)] ?? "";
      if (ModuleSet.has(disabled, APP_MODULES[module].id)) throw moduleDisabled(module, schoolId);
    }

    const bitmap = schoolId === null ? "" : (memberships[String(schoolId)] ?? "");
    const principal: Principal = {
      userId: Number(claims.sub),
      isSuperAdmin,
      schoolId,
      can: (permission) => isSuperAdmin || PermissionSet.has(bitmap, permission.id),
    };
    if (typeof access !== "string" && !principal.can(access)) {
      throw new ApiError(403, say.missingPermission(access.name, schoolId));
    }
    c.set("principal", principal);
    if (request) {
      request.userId = principal.userId;
      request.schoolId = principal.schoolId;
    }
    return next();
  };
}

function unauthorized(title: Message, detail: Message) {
  return new ApiError(401, detail, { title, headers: { "www-authenticate": 'Bearer realm="api"' } });
}
