/**
 * The one way to make a router: it carries the app's env types and the validation hook that
 * turns every zod failure into the same problem+json as any other error.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { validationError } from "./errors";

/**
 * @example
 * const router = createRouter();
 * router.openapi(listPermissionsRoute, listPermissions);
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
}

export type AppRouter = ReturnType<typeof createRouter>;
