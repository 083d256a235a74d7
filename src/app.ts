/**
 * Assembles the HTTP app: request id + access log -> dependencies -> body limit -> the operations
 * of every registered module (each runs `authorize`, then zod validation, then its handler) -> one
 * error path. See docs/architecture.md.
 */
import { swaggerUI } from "@hono/swagger-ui";
import { bodyLimit } from "hono/body-limit";
import { version as swaggerUiVersion } from "swagger-ui-dist/package.json";
import type { Deps } from "./deps";
import type { AppEnv } from "./lib/context";
import { ApiError, problemResponse } from "./lib/errors";
import { log } from "./lib/log";
import { type RequestMetrics, withMetrics } from "./lib/metrics";
import { SECURITY_SCHEMES, TAGS } from "./lib/route";
import { routeTable } from "./lib/route-table";
import { createRouter } from "./lib/router";
import { browserCors } from "./middleware/cors";
import { jsonBody } from "./middleware/json-body";
import { routeNotFound } from "./middleware/route-not-found";
import { MODULES } from "./modules";

export interface AppOptions {
  /** Builds the request's dependencies from the runtime's env (bindings, vars, secrets). */
  deps: (env: Env) => Deps | Promise<Deps>;
  /** Mounts the development-only modules (the SMS outbox). */
  development: boolean;
}

export const MAX_BODY_BYTES = 1024 * 1024;
const REQUEST_ID = /^[\w.:-]{1,64}$/;
/** Where Workers Static Assets serve Swagger UI's files (wrangler.toml [assets]). */
export const DOCS_ASSETS = "/api/docs/assets";

export function createApp(options: AppOptions) {
  const app = createRouter();
  const routes = routeTable(app.openAPIRegistry); // read at the first request, once every router is mounted

  app.use(async function accessLog(c, next) {
    const incoming = c.req.header("x-request-id");
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    const started = performance.now();
    const metrics: RequestMetrics = { d1Calls: 0 };
    await withMetrics(metrics, next);
    c.res.headers.set("x-request-id", id);
    const principal = c.var.principal;
    log.info("request", {
      requestId: id,
      method: c.req.method,
      route: c.req.routePath,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      d1Calls: metrics.d1Calls,
      userId: principal?.userId,
      schoolId: principal?.schoolId ?? undefined,
    });
  });
  app.use(async function dependencies(c, next) {
    c.set("deps", await options.deps(c.env));
    await next();
  });
  app.use(browserCors);
  app.use(
    "/api/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );
  app.use("/api/*", jsonBody(routes));

  for (const module of MODULES) {
    if (module.developmentOnly && !options.development) continue;
    for (const { route, handler } of module.operations ?? []) app.openapi(route, handler);
    if (module.router) app.route("/", module.router);
  }

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", SECURITY_SCHEMES.bearerAuth);
  // Built once per isolate, on first request: generating it costs tens of milliseconds.
  let document: unknown;
  app.get("/api/openapi.json", (c) => {
    if (!document) {
      const generated = app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "School administration and transport API",
          version: "1.0.0",
          description:
            "Schools, families, classes, transport and the daily exit permissions. Errors are RFC 9457 problem details. " +
            "Sign in with POST /api/v1/auth/send-verification-code then /api/v1/auth/verify-code.",
        },
        servers: [{ url: "/", description: "This server" }],
        tags: [...TAGS].filter((t) => options.development || t.name !== "Development"),
      });
      // OpenAPI 3.1 licenses take an SPDX identifier (the generator's config type predates it).
      const license = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };
      document = { ...generated, info: { ...generated.info, license } };
    }
    return c.json(document);
  });
  // Swagger UI's files are Workers Static Assets (public/, filled by scripts/docs-assets.mjs), not a CDN.
  app.get(
    "/api/docs",
    swaggerUI({
      url: "/api/openapi.json",
      title: "School API",
      baseUrl: `${DOCS_ASSETS}/${swaggerUiVersion}`,
      validatorUrl: "none",
    }),
  );

  app.notFound(routeNotFound(routes));
  app.onError((err, c) => problemResponse(c, err));
  return app;
}

export type App = ReturnType<typeof createApp>;
export type { AppEnv };
