/**
 * Assembles the HTTP app: request id -> dependencies -> body limit -> routers (each route runs
 * `authorize`, then zod validation, then its handler) -> one error path. See docs/architecture.md.
 */
import { swaggerUI } from "@hono/swagger-ui";
import { bodyLimit } from "hono/body-limit";
import { version as swaggerUiVersion } from "swagger-ui-dist/package.json";
import type { Deps } from "./deps";
import type { AppEnv } from "./lib/context";
import { ApiError, problemResponse } from "./lib/errors";
import { SECURITY_SCHEMES, TAGS } from "./lib/route";
import { createRouter } from "./lib/router";
import { authRouter } from "./modules/auth/routes";
import { bulkProcessRouter } from "./modules/bulk-process/routes";
import { devRouter } from "./modules/dev/routes";
import { deviceTokenRouter } from "./modules/device-token/resource";
import { documentResource } from "./modules/document/resource";
import { documentSignedUrlRouter } from "./modules/document/signed-url";
import { healthRouter } from "./modules/health/routes";
import { holidayCycleResource } from "./modules/holiday-cycle/resource";
import { permissionResource } from "./modules/permission/resource";
import { scheduleConfigurationResource } from "./modules/schedule-configuration/resource";
import { schoolConfigurationResource } from "./modules/school-configuration/resource";
import { transportRulesRouter } from "./modules/transport-rules/routes";
import { userRouter } from "./modules/user/routes";
import { versionRouter } from "./modules/version/routes";

export interface AppOptions {
  /** Builds the request's dependencies from the runtime's env (bindings, vars, secrets). */
  deps: (env: Env) => Deps | Promise<Deps>;
  /** Mounts the development-only routes (the SMS outbox). */
  development: boolean;
}

export const MAX_BODY_BYTES = 1024 * 1024;
const REQUEST_ID = /^[\w.:-]{1,64}$/;
/** Where Workers Static Assets serve Swagger UI's files (wrangler.toml [assets]). */
export const DOCS_ASSETS = "/api/docs/assets";

export function createApp(options: AppOptions) {
  const app = createRouter();

  app.use(async function requestId(c, next) {
    const incoming = c.req.header("x-request-id");
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    await next();
    c.res.headers.set("x-request-id", id);
  });
  app.use(async function dependencies(c, next) {
    c.set("deps", await options.deps(c.env));
    await next();
  });
  app.use(
    "/api/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );

  app.route("/", healthRouter);
  app.route("/", versionRouter);
  app.route("/", authRouter);
  app.route("/", userRouter);
  permissionResource.mount(app);
  app.route("/", deviceTokenRouter);
  app.route("/", transportRulesRouter);
  app.route("/", bulkProcessRouter);
  schoolConfigurationResource.mount(app);
  holidayCycleResource.mount(app);
  scheduleConfigurationResource.mount(app);
  documentResource.mount(app);
  app.route("/", documentSignedUrlRouter);
  if (options.development) app.route("/", devRouter);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", SECURITY_SCHEMES.bearerAuth);
  app.doc31("/api/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "School administration and transport API",
      version: "1.0.0",
      description:
        "Schools, families, classes, transport and the daily exit permissions. Errors are RFC 9457 problem details. " +
        "Sign in with POST /api/v1/auth/send-verification-code then /api/v1/auth/verify-code.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: new URL(c.req.url).origin, description: "This server" }],
    tags: [...TAGS].filter((t) => options.development || t.name !== "Development"),
  }));
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

  app.notFound((c) => problemResponse(c, new ApiError(404, `No route for ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => problemResponse(c, err));
  return app;
}

export type App = ReturnType<typeof createApp>;
export type { AppEnv };
