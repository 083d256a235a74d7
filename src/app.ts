/**
 * Assembles the HTTP app: request id + access log -> dependencies -> CORS -> body limit -> the
 * module whose paths the request is under -> its operation (`authorize`, then zod validation, then
 * its handler) -> one error path. See docs/architecture.md.
 *
 * Modules are loaded on demand: the first request under a module's paths imports its operations
 * and builds its own app (once per isolate), which serves that request and every later one
 * under its paths on its own. The OpenAPI document loads them all.
 */
import { swaggerUI } from "@hono/swagger-ui";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { METHOD_NAME_ALL } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { getPath } from "hono/utils/url";
import { version as swaggerUiVersion } from "swagger-ui-dist/package.json";
import { bookmarkOf, openSession } from "./db/client";
import type { Deps } from "./deps";
import type { AppEnv } from "./lib/context";
import { ApiError, D1_BOOKMARK_SCHEMA, HEADER_COMPONENTS, problemResponse, UNAVAILABLE } from "./lib/errors";
import { loadIsolateData } from "./lib/isolate-data";
import { fromAcceptLanguage } from "./lib/language";
import { log } from "./lib/log";
import { m } from "./lib/message";
import { type RequestMetrics, withMetrics } from "./lib/metrics";
import type { Module } from "./lib/module";
import { describeFields } from "./lib/openapi-fields";
import { rateLimitHeaders } from "./lib/rate-limit";
import { ACCEPT_LANGUAGE, guardOf, type Operation, SECURITY_SCHEMES, TAGS, takesIdempotencyKey } from "./lib/route";
import { D1_BOOKMARK } from "./lib/route-headers";
import { routeTable } from "./lib/route-table";
import { type AppRouter, createRouter } from "./lib/router";
import { s3Signer } from "./lib/s3";
import { authorize } from "./middleware/authorize";
import { browserCors } from "./middleware/cors";
import { idempotency } from "./middleware/idempotency";
import { jsonBody } from "./middleware/json-body";
import { routeNotFound } from "./middleware/route-not-found";
import { MODULES } from "./modules";

export interface AppOptions {
  /** Builds the request's dependencies from the runtime's env (bindings, vars, secrets). */
  deps: (env: Env) => Deps | Promise<Deps>;
  /** Mounts the development-only modules (the SMS outbox). */
  development: boolean;
  /** Modules served besides the registry's (a test's throwaway resource: test/recipe/). */
  modules?: readonly Module[];
}

export const MAX_BODY_BYTES = 1024 * 1024;
/** Requests slower than this get an access-log line even when only problems are logged. */
const SLOW_REQUEST_MS = 1000;
const REQUEST_ID = /^[\w.:-]{1,64}$/;
/** The D1 session's bookmark, asked with and answered (src/db/client.ts). */
const BOOKMARK_HEADER = D1_BOOKMARK.name;
/** Where Workers Static Assets serve Swagger UI's files (wrangler.toml [assets]). */
export const DOCS_ASSETS = "/api/docs/assets";

/** Serves an operation on an app: its route behind the guard it declares, then its handler. */
export function mountOperation(app: AppRouter, { route, handler }: Operation) {
  const { access, scope, module: appModule } = guardOf(route);
  const guard = authorize(access, scope, appModule);
  // A signed-in POST or PATCH answers a repeat with the same Idempotency-Key from its first answer.
  // (A GET's JSON answer carries an ETag, and If-None-Match may make it a 304: `serve` answers so.)
  const guards = takesIdempotencyKey(route.method, access) ? [guard, idempotency] : [guard];
  app.openapi({ ...route, middleware: guards }, handler);
}

/** The request's execution context; `app.request()` in tests has none. */
function executionCtxOf(c: Context<AppEnv>) {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/** `https://host:port` of a request's URL (which always has a path), without parsing it whole. */
const originOf = (url: string) => url.slice(0, url.indexOf("/", url.indexOf("://") + 3));

export function createApp(options: AppOptions) {
  const app = createRouter();
  const routes = routeTable(app.openAPIRegistry); // read at the first request, once every router is mounted

  /**
   * What every request passes before its route, on the main app and on each module's app alike:
   * request id and access log, dependencies, CORS, the body limit.
   */
  function common(target: AppRouter) {
    target.use(async function accessLog(c, next) {
      const incoming = c.req.header("x-request-id");
      const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      c.set("requestId", id);
      const started = performance.now();
      const metrics: RequestMetrics = {
        d1Calls: 0,
        requestId: id,
        clientAddress: c.req.header("cf-connecting-ip"),
        language: fromAcceptLanguage(c.req.header("accept-language")),
        origin: originOf(c.req.url),
      };
      await withMetrics(metrics, next);
      c.res.headers.set("x-request-id", id);
      if (metrics.limits?.length)
        for (const [k, v] of Object.entries(rateLimitHeaders(metrics.limits))) c.res.headers.set(k, v);
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      // Before the dependencies are built (a config error) there is no setting yet: log the line.
      const mode = c.get("deps")?.config?.accessLog ?? "all";
      if (mode === "problems" && c.res.status < 400 && durationMs < SLOW_REQUEST_MS) return;
      const principal = c.get("principal") ?? metrics;
      log.info("request", {
        requestId: id,
        method: c.req.method,
        route: metrics.route ?? c.req.routePath,
        status: c.res.status,
        durationMs,
        d1Calls: metrics.d1Calls,
        userId: principal?.userId,
        schoolId: principal?.schoolId ?? undefined,
      });
    });
    target.use(async function dependencies(c, next) {
      const deps = await options.deps(c.env);
      // The Spanish catalogue and the phone metadata, read once per isolate (src/lib/isolate-data.ts).
      // (The OpenAPI script's app and the bundle test's have no assets: they serve the document alone.)
      if (deps.assets) await loadIsolateData(deps.assets);
      // Development's S3 endpoint may be a path of the dev server: URLs are signed for the origin
      // this request reached (the port `wrangler dev` listens on), which also serves them.
      // (The OpenAPI script builds the app with a configuration of the access log alone: no s3; a
      // test of zod's messages builds it with no dependencies at all.)
      const s3: Deps["config"]["s3"] | undefined = deps.config?.s3;
      c.set(
        "deps",
        s3?.endpoint.startsWith("/")
          ? { ...deps, signer: s3Signer({ ...s3, endpoint: `${new URL(c.req.url).origin}${s3.endpoint}` }) }
          : deps,
      );
      // Every query of the request runs in one D1 session (read replication): from the bookmark the
      // client sent, so it reads at least what it wrote; else a read from any replica and anything
      // else from the primary. A header that is not a bookmark is ignored (docs/errors.md). The
      // answer, whatever it is, says where the session got to. libSQL has no sessions: no header.
      const session = deps.db
        ? openSession(
            deps.db,
            bookmarkOf(c.req.header(BOOKMARK_HEADER)) ??
              (c.req.method === "GET" || c.req.method === "HEAD" ? "first-unconstrained" : "first-primary"),
            // A request in a school answers its school's database's bookmark (docs/scaling.md).
            c.req.header("x-school-id") !== undefined,
          )
        : undefined;
      if (!session) return next();
      try {
        await session.run(next);
      } finally {
        const bookmark = session.bookmark();
        if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
      }
    });
    target.use(browserCors);
    target.use(
      "/api/*",
      bodyLimit({
        maxSize: MAX_BODY_BYTES,
        onError: () => {
          throw new ApiError(413, m`The request body exceeds ${MAX_BODY_BYTES} bytes`);
        },
      }),
    );
  }
  common(app);

  const modules = [...MODULES, ...(options.modules ?? [])].filter((m) => !m.developmentOnly || options.development);
  const subApps = new Map<Module, Promise<AppRouter>>();
  const loadedApps = new Map<Module, AppRouter>();

  /** A module's own app: its operations, behind the same checks and error path as every route. */
  function subAppOf(module: Module): Promise<AppRouter> {
    let sub = subApps.get(module);
    if (!sub) {
      sub = (async () => {
        const { operations, router } = module.load ? await module.load() : { operations: [] };
        const moduleApp = createRouter();
        const table = routeTable(moduleApp.openAPIRegistry);
        common(moduleApp);
        moduleApp.use("/api/*", jsonBody(table));
        for (const op of operations) mountOperation(moduleApp, op);
        if (router) moduleApp.route("/", router);
        moduleApp.notFound(routeNotFound(table));
        moduleApp.onError((err, c) => problemResponse(c, err));
        loadedApps.set(module, moduleApp);
        return moduleApp;
      })();
      sub.catch(() => subApps.delete(module));
      subApps.set(module, sub);
    }
    return sub;
  }

  // Each module's paths, and everything below them, go to its own app, which serves the request
  // alone: one Hono context and one middleware chain per request (the main app serves the rest:
  // the OpenAPI document, the docs page, unknown paths). More specific paths first
  // (`/school-configuration/:id/school-holiday-cycle` before `/school-configuration/*`); `path/*`
  // matches `path` itself too.
  const mounts = modules
    .flatMap((module) => (module.paths ?? []).map((path) => ({ path, module })))
    .sort((a, b) => b.path.split("/").length - a.path.split("/").length);
  // A trie: a module path with a parameter (`/group/:id/notification`) beside a literal one of
  // another module (`/group/upload-file`) is beyond RegExpRouter; matches come in the order added.
  const dispatcher = new TrieRouter<Module>();
  for (const { path, module } of mounts) {
    dispatcher.add(METHOD_NAME_ALL, `${path}/*`, module);
    // A module that failed to load is tried again through the main app, whose error path answers
    // (and logs) a second failure.
    app.all(`${path}/*`, async (c) => (await subAppOf(module)).fetch(c.req.raw, c.env, executionCtxOf(c)));
  }
  const serveMain = app.fetch;
  const serveModule = async (module: Module | undefined, ...args: Parameters<typeof serveMain>) => {
    const sub = module && (await subAppOf(module).catch(() => undefined));
    return sub ? sub.fetch(...args) : serveMain(...args);
  };
  app.fetch = (request, env, executionCtx) => {
    const [matched] = dispatcher.match(METHOD_NAME_ALL, getPath(request));
    const module = matched[0]?.[0];
    // A loaded module's app serves at once (no promise to wait for); the first request loads it.
    const ready = module && loadedApps.get(module);
    return ready ? ready.fetch(request, env, executionCtx) : serveModule(module, request, env, executionCtx);
  };

  /** Every module loaded: for the OpenAPI document and the checks that walk it. */
  async function allOperations() {
    const loaded = await Promise.all(modules.map((m) => (m.load ? m.load() : { operations: [] })));
    return loaded.flatMap((l) => l.operations);
  }

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", SECURITY_SCHEMES.bearerAuth);
  app.openAPIRegistry.registerComponent("responses", UNAVAILABLE.name, UNAVAILABLE.response());
  app.openAPIRegistry.registerComponent("parameters", "AcceptLanguage", ACCEPT_LANGUAGE);
  app.openAPIRegistry.registerComponent("parameters", "D1Bookmark", D1_BOOKMARK);
  app.openAPIRegistry.registerComponent("schemas", D1_BOOKMARK_SCHEMA.name, D1_BOOKMARK_SCHEMA.schema);
  for (const [name, header] of Object.entries(HEADER_COMPONENTS)) {
    app.openAPIRegistry.registerComponent("headers", name, header);
  }
  // Built once per isolate, on first request: generating it costs tens of milliseconds.
  let document: unknown;
  app.get("/api/openapi.json", async (c) => {
    if (!document) {
      // Every module's operations join this app's own definitions (the security scheme, test
      // probes) in its registry: described there, served by the modules' apps.
      for (const { route } of await allOperations()) {
        const { hide, ...described } = route;
        if (!hide) app.openAPIRegistry.registerPath(described);
      }
      const generated = app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "School administration and transport API",
          version: "1.0.0",
          description:
            "Schools, families, classes, transport and the daily exit permissions. Errors are RFC 9457 problem details. " +
            "Sign in with POST /api/v1/auth/send-verification-code then /api/v1/auth/verify-code. " +
            "Every text an answer carries for people (problem titles, details and field messages, labels, file names and " +
            "headers) is in Spanish or English: Accept-Language (es, en), else the signed-in user's language, else the " +
            "school's; content-language says which.",
        },
        servers: [{ url: "/", description: "This server" }],
        tags: [...TAGS].filter((t) => options.development || t.name !== "Development"),
      });
      // OpenAPI 3.1 licenses take an SPDX identifier (the generator's config type predates it).
      const license = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };
      // Field names that mean the same everywhere are described once (src/lib/openapi-fields.ts).
      describeFields(generated);
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
      // A filter box over the tags (300 operations), and a link per operation (`#/Tag/operationId`)
      // that opens it.
      filter: true,
      deepLinking: true,
    }),
  );

  app.notFound(routeNotFound(routes));
  app.onError((err, c) => problemResponse(c, err));
  return app;
}

export type App = ReturnType<typeof createApp>;
export type { AppEnv };
