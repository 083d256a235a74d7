/**
 * What the app answers when no operation matched: 405 with `allow` when the path is one the API
 * serves with other methods (`PATCH /api/v1/documents/1`), else 404.
 */
import type { NotFoundHandler } from "hono";
import type { AppEnv } from "../lib/context";
import { ApiError, problemResponse } from "../lib/errors";
import { m } from "../lib/message";
import type { RouteTable } from "../lib/route-table";

export function routeNotFound(routes: () => RouteTable): NotFoundHandler<AppEnv> {
  return function notFound(c) {
    const { method, path } = c.req;
    const allowed = routes().allowedMethods(path);
    if (!allowed) return problemResponse(c, new ApiError(404, m`No route for ${method} ${path}`));
    const allow = allowed.join(", ");
    return problemResponse(
      c,
      new ApiError(405, m`${method} is not supported on ${path}; it supports ${allow}`, { headers: { allow } }),
    );
  };
}
