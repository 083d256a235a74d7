/**
 * `defineRoute`: `createRoute` plus what every operation of this API must declare — its tag,
 * operationId, access (checked by the `authorize` middleware), security scheme and error
 * responses. Machine-readable facts go into the OpenAPI document as extensions — `x-access`,
 * `x-scope`, `x-audit` (the entity whose audit row a successful call writes), `x-module` (the
 * application module the route belongs to: 403 where the school switched it off), and for lists
 * `x-filters` / `x-sort` — which is how the generated suites know what to expect of each route.
 *
 * `operation(route, handler)` pairs a route with its typed handler: the unit a module registers.
 */
import { createRoute, type RouteConfig, type RouteHandler, type z, z as zod } from "@hono/zod-openapi";
import { authorize, type Scope } from "../middleware/authorize";
import { type Access, accessName } from "./access";
import type { AppModuleKey } from "./app-modules";
import type { AppEnv } from "./context";
import { errorResponses, type ProblemStatus } from "./errors";

/** One tag per functional area of the product (plus Auth and Development): how the docs page groups operations. */
export const TAGS = [
  { name: "Auth", description: "Sign-in by verification code, token refresh and revocation" },
  { name: "People", description: "Users, roles, parents, teachers, students, families" },
  { name: "Schools", description: "Schools, configurations, schedules, holiday cycles" },
  { name: "Groups", description: "Classes and their members" },
  { name: "Transport", description: "Vehicles, routes, availability, rules and the daily summary" },
  { name: "Permissions and tasks", description: "Access control, exit permissions, tasks, appointments" },
  { name: "Communication", description: "Notifications, device tokens, events, invitations, lost articles" },
  { name: "Documents", description: "Documents with signed URLs, legal documents, exports" },
  { name: "Operations", description: "Health, version, bulk processes, cron history" },
  { name: "Development", description: "Present only when ENVIRONMENT=development" },
] as const;

export type Tag = (typeof TAGS)[number]["name"];

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: "http" as const,
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "The accessToken from POST /api/v1/auth/verify-code or /api/v1/auth/refresh-token",
  },
};

const SCHOOL_HEADER = {
  name: "X-School-Id",
  in: "header" as const,
  required: false,
  description:
    "The current school. Required when the caller has roles in more than one school, and from super-admins on " +
    "school routes. A school that does not exist is a 404.",
  schema: { type: "integer" as const, minimum: 1 },
};

type RouteMeta = {
  tag: Tag;
  operationId: string;
  summary: string;
  access: Access;
  /**
   * Default `school` for routes that need a permission or membership. A `user` route (no school
   * resolved) may declare `platform` when it reads or writes platform records, not a school's.
   */
  scope?: Scope;
  /** Extra problem statuses this route can answer (409, 413, 422, 429). */
  errors?: readonly ProblemStatus[];
  /**
   * Whether the operation reads or writes the database (default true): if so it may answer 503
   * with `retry-after` when the database is briefly unavailable (src/db/transient.ts). `false`
   * for the few that never touch it.
   */
  database?: boolean;
  /** The audit entity a successful call writes one row for (`x-audit`). */
  audit?: string;
  /**
   * The application module the route belongs to (`x-module`): where the current school has it
   * disabled, `authorize` answers 403 naming it. Needs a school, so not for `public`/`user` access.
   */
  module?: AppModuleKey;
  /** Further machine-readable facts (`x-filters`, `x-sort`). */
  extensions?: Record<`x-${string}`, unknown>;
};

type RouteInput = Omit<RouteConfig, "tags" | "security" | "middleware" | "operationId" | "summary">;

/** The query of a route that takes no query parameters: any is an unknown field (400). */
const NO_QUERY = zod.strictObject({});

/**
 * @example
 * export const getPermission = defineRoute({
 *   method: "get", path: "/api/v1/permission/{id}", tag: "Permissions and tasks",
 *   operationId: "getPermission", summary: "Get a permission by id", access: "permission.read",
 *   request: { params: IdParams }, responses: { 200: json(PermissionSchema, "The permission") },
 * });
 */
export function defineRoute<const R extends RouteInput>(config: R & RouteMeta) {
  const {
    tag,
    access,
    scope: declaredScope,
    errors = [],
    database = true,
    audit,
    module,
    extensions,
    responses,
    ...route
  } = config;
  const scope: Scope = declaredScope ?? "school";
  if (module && (access === "public" || access === "user")) {
    // No school is resolved for these: the module could not be checked, so refuse to pretend.
    throw new Error(`${route.operationId}: a route with module ${module} needs a school (not ${access} access)`);
  }
  const statuses = new Set<ProblemStatus>([...errors, 500]);
  // A database hiccup the data layer could not wait out; a route that answers 503 with a body of
  // its own (health's report) keeps it.
  if (database && !(responses && Object.hasOwn(responses, 503))) statuses.add(503);
  // Query strings are strict (docs/decisions.md): a signed-in route that takes none refuses any
  // (400), so a filter sent to a list that has none (`/group/mine?name=`) is not silently ignored.
  // Public routes (health, sign-in) stay lenient: monitors and probes may add cache-busting ones.
  const request: RouteConfig["request"] =
    access === "public" ? route.request : { ...route.request, query: route.request?.query ?? NO_QUERY };
  if (request?.params || request?.query || request?.body || request?.headers) statuses.add(400);
  if (request?.body) statuses.add(413).add(415);
  if (request?.params) statuses.add(404);
  if (access !== "public") statuses.add(401);
  if (access !== "public" && access !== "user") {
    statuses.add(403);
    statuses.add(400); // a malformed or missing X-School-Id
    statuses.add(404); // an X-School-Id naming no school
  }
  const sorted = [...statuses].sort((a, b) => a - b);
  const created = createRoute({
    ...route,
    request,
    tags: [tag],
    security: access === "public" ? [] : [{ bearerAuth: [] }],
    parameters: access === "public" || access === "user" ? undefined : [SCHOOL_HEADER],
    middleware: [authorize(access, scope, module)],
    responses: { ...responses, ...errorResponses(sorted) },
    "x-access": accessName(access),
    "x-scope": access === "public" ? undefined : access === "user" ? declaredScope : scope,
    ...(audit ? { "x-audit": audit } : {}),
    ...(module ? { "x-module": module } : {}),
    ...extensions,
  } as R & Pick<RouteConfig, "tags" | "security" | "middleware">);
  return created as typeof created & R;
}

/** A JSON response object for `responses`. */
export function json<T>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/**
 * A JSON request body, always required (an empty body is a 400, not `{}`), registered as the named
 * schema `name` in the document's components.
 */
export function jsonBody<T extends z.ZodType>(schema: T, name: string, description?: string) {
  return { required: true, description, content: { "application/json": { schema: schema.openapi(name) } } } as const;
}

export const noContent = { description: "Done; no content" } as const;

/** A route and its handler: what a module registers (the app mounts each with `openapi`). */
export interface Operation {
  readonly route: RouteConfig & { operationId: string };
  readonly handler: (c: any) => Response | Promise<Response>;
}

/**
 * Pairs a route with its typed handler. Handlers parse nothing and query nothing: they read
 * `c.req.valid(...)`, build the context with `ctxOf(c)` and call a service verb.
 * @example
 * export const getRules = operation(getRulesRoute, async (c) => c.json(await rules.read(ctxOf(c)), 200));
 */
export function operation<R extends RouteConfig & { operationId: string }>(route: R, handler: RouteHandler<R, AppEnv>) {
  return { route, handler: handler as unknown as Operation["handler"] };
}
