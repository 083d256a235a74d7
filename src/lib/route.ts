/**
 * `defineRoute`: `createRoute` plus what every operation of this API must declare — its tag,
 * operationId, access, security scheme and error responses — and, for the code that serves it, the
 * context it needs. Machine-readable facts go into the OpenAPI document as extensions —
 * `x-access`, `x-scope`, `x-audit` (the entity whose audit row a successful call writes),
 * `x-module` (the application module the route belongs to: 403 where the school switched it off),
 * and for lists `x-filters` / `x-sort` — which is how the generated suites know what to expect of
 * each route. The app checks the declared access (src/middleware/authorize.ts) before any input is
 * parsed.
 *
 * `operation(route, verb)` serves a route with a service verb `verb(ctx, input)`: the input is
 * what the route's schemas parsed (`{ params, query, body }`, typed from the route) and the verb's
 * answer is the route's success response; a verb that must answer something else (a header, a
 * redirect, a 503) returns its own `Response`.
 */
import { createRoute, type RouteConfig, type z, z as zod } from "@hono/zod-openapi";
import type { Context, Handler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type Access, accessName, type Scope } from "./access";
import type { AppModuleKey } from "./app-modules";
import { type AppEnv, ctxOf, type MemberCtx, type PublicCtx, type UserCtx } from "./context";
import {
  D1_BOOKMARK_HEADER,
  errorResponses,
  isProblemStatus,
  type ProblemCase,
  type ProblemStatus,
  say,
} from "./errors";
import { answerTagged, jsonBytes } from "./etag";
import { type IfMatch, IfMatchHeaders, unchangedSince } from "./if-match";
import { Message, m } from "./message";
import { Listing, type Page } from "./pagination";
import {
  answersETag,
  ETAG_HEADER,
  FILE_HEADERS,
  IDEMPOTENCY_HEADER,
  IF_NONE_MATCH_HEADER,
  LOCALISED_FILES,
  REPLAYED_HEADER,
  SCHOOL_HEADER,
  type Tag,
  takesIdempotencyKey,
} from "./route-headers";

export { ACCEPT_LANGUAGE, answersETag, SECURITY_SCHEMES, TAGS, type Tag, takesIdempotencyKey } from "./route-headers";

/**
 * Prepares the service context of a request before its verb runs: what a route's readers need
 * read first (who a caller acts for). Declared on the route.
 */
export type ContextLoader = (ctx: MemberCtx) => Promise<MemberCtx>;

/**
 * The context a route's verb gets, from the access the route declares: a public route's has no
 * user; a `user` route's has a user and no school; a school route's has both (`authorize` resolved
 * them before the verb runs); a platform route's has a user and the school when one was named.
 */
export type CtxOf<R> = R extends { access: "public" }
  ? PublicCtx<null>
  : R extends { access: "user" }
    ? UserCtx<null>
    : R extends { scope: "platform" }
      ? UserCtx
      : MemberCtx;

/** Who may call a route, where, and behind which application module: what `authorize` checks. */
export interface RouteGuard {
  access: Access;
  scope: Scope;
  module?: AppModuleKey;
}

/** Keys of what the route carries for the code that serves it (symbols: never in the document). */
const GUARD = Symbol("guard");
const CONTEXT = Symbol("context");
const UNEXAMPLED = Symbol("unexampled");
const PRECONDITION = Symbol("precondition");

/** A route as `defineRoute` makes it. */
export type ApiRoute = RouteConfig & Served;

/** What `defineRoute` adds to a route for the code that serves it. */
interface Served {
  operationId: string;
  readonly [GUARD]: RouteGuard;
  readonly [CONTEXT]?: ContextLoader;
  readonly [UNEXAMPLED]: readonly ProblemStatus[];
  readonly [PRECONDITION]?: IfMatch<never>;
}

/** What `authorize` checks for a route. */
export const guardOf = (route: ApiRoute): RouteGuard => route[GUARD];

/**
 * The statuses a route declares for reasons of its own (409, 422, 429) without saying what it
 * answers then: its document shows only a generic example (test/openapi-errors.test.ts lists them).
 */
export const unexampledOf = (route: ApiRoute): readonly ProblemStatus[] => route[UNEXAMPLED];

/** What an operation says for a status of its own: a detail, or whole cases. */
export type ProblemExamples = {
  readonly [S in ProblemStatus]?: string | Message | ProblemCase | readonly ProblemCase[];
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
   * What the operation answers for its own statuses (the detail its verb throws), shown as that
   * status's example in the document: `{ 409: "A family with this number already exists" }`.
   * Give one for every 409, 422 and 429 it declares.
   */
  examples?: ProblemExamples;
  /**
   * What each path parameter names, for the 404's example (`{ id: "Student" }`). Unnamed, an
   * `{id}` is named after the path segment before it (`exit-permission` -> "Exit permission") and
   * an `{xId}` after `x` (`routeId` -> "Route").
   */
  labels?: Record<string, string | Message>;
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
  /** What the verb's context needs read first (who the caller acts for). */
  context?: ContextLoader;
  /** Further machine-readable facts (`x-filters`, `x-sort`). */
  extensions?: Record<`x-${string}`, unknown>;
  /**
   * An update of the record `{id}` that honours `If-Match`: the route declares the header and its
   * 412, and `serve` checks it before the verb runs (`IfMatch`).
   */
  ifMatch?: IfMatch<never>;
};

type RouteInput = Omit<RouteConfig, "tags" | "security" | "middleware" | "operationId" | "summary">;

/** The query of a route that takes no query parameters: any is an unknown field (400). */
const NO_QUERY = zod.strictObject({});

/**
 * @example
 * export const getPermission = defineRoute({
 *   method: "get", path: "/api/v1/permission/{id}", tag: "Access control",
 *   operationId: "getPermission", summary: "Get a permission by id", access: permissions.read,
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
    context,
    extensions,
    responses,
    examples: given = {},
    labels = {},
    ifMatch,
    ...route
  } = config;
  const scope: Scope = declaredScope ?? "school";
  if (module && (access === "public" || access === "user")) {
    // No school is resolved for these: the module could not be checked, so refuse to pretend.
    throw new Error(`${route.operationId}: a route with module ${module} needs a school (not ${access} access)`);
  }
  if (context && (access === "public" || access === "user" || scope === "platform")) {
    throw new Error(`${route.operationId}: a context loader is for school routes`);
  }
  if (ifMatch && (route.request?.headers || !route.path.includes("{id}"))) {
    throw new Error(`${route.operationId}: If-Match is for a route of one record ({id}) without headers of its own`);
  }
  // If-Match: the header, its 412 and what it says (unless the operation says more).
  const examples: ProblemExamples = ifMatch
    ? { 412: say.changedSinceRead(ifMatch.label, EXAMPLE_ID), ...given }
    : given;
  const statuses = new Set<ProblemStatus>([...errors, ...(ifMatch ? [412 as const] : []), 500]);
  // A database hiccup the data layer could not wait out; a route that answers 503 with a body of
  // its own (health's report) keeps it.
  if (database && !(responses && Object.hasOwn(responses, 503))) statuses.add(503);
  // Query strings are strict (docs/decisions.md): a signed-in route that takes none refuses any
  // (400), so a filter sent to a list that has none (`/group/mine?name=`) is not silently ignored.
  // Public routes (health, sign-in) stay lenient: monitors and probes may add cache-busting ones.
  const strictQuery: RouteConfig["request"] =
    access === "public" ? route.request : { ...route.request, query: route.request?.query ?? NO_QUERY };
  const request: RouteConfig["request"] = ifMatch ? { ...strictQuery, headers: IfMatchHeaders } : strictQuery;
  if (request?.params || request?.query || request?.body || request?.headers) statuses.add(400);
  if (request?.body) statuses.add(413).add(415);
  if (request?.params) statuses.add(404);
  if (access !== "public") statuses.add(401);
  const idempotent = takesIdempotencyKey(route.method, access);
  if (idempotent) statuses.add(400).add(409).add(422);
  if (access !== "public" && access !== "user") {
    statuses.add(403);
    statuses.add(400); // a malformed or missing X-School-Id
    statuses.add(404); // an X-School-Id naming no school
  }
  const sorted = [...statuses].sort((a, b) => a - b);
  const cacheable = answersETag({ method: route.method, responses });
  const ok = responses?.[200];
  const cached: NonNullable<RouteConfig["responses"]> =
    cacheable && ok && "content" in ok
      ? {
          200: { ...ok, headers: { ...ETAG_HEADER, ...("headers" in ok ? ok.headers : {}) } },
          304: { description: "Not modified: the `If-None-Match` ETag is the current answer's", headers: ETAG_HEADER },
        }
      : {};
  // Typed as the config given (see the cast's note below), not as createRoute's wider RouteConfig.
  const created = createRoute({
    ...route,
    request,
    tags: [tag],
    security: access === "public" ? [] : [{ bearerAuth: [] }],
    parameters: [
      ...(access === "public" || access === "user" ? [] : [SCHOOL_HEADER]),
      ...(idempotent ? [IDEMPOTENCY_HEADER] : []),
      ...(cacheable ? [IF_NONE_MATCH_HEADER] : []),
      { $ref: "#/components/parameters/AcceptLanguage" },
      { $ref: "#/components/parameters/D1Bookmark" },
    ],
    responses: answerHeaders(
      {
        ...responses,
        ...cached,
        ...errorResponses(
          sorted,
          problemCases({ ...route, access, module, request, idempotent, examples, labels }),
          route.path.replace(/\{[^}]+\}/g, String(EXAMPLE_ID)),
        ),
      },
      idempotent,
    ),
    "x-access": accessName(access),
    "x-scope": access === "public" ? undefined : access === "user" ? declaredScope : scope,
    ...(audit ? { "x-audit": audit } : {}),
    ...(module ? { "x-module": module } : {}),
    ...extensions,
    // The config as given (less the meta, which is not description), so a handler's input and
    // output are typed from the route's own schemas, not from RouteConfig's wider ones.
  } as R & Pick<RouteConfig, "tags" | "security">);
  const own = new Set<ProblemStatus>([409, 422, 429]);
  const unexampled = errors.filter((s) => own.has(s) && !Object.hasOwn(examples, s));
  return Object.assign(created, {
    [GUARD]: { access, scope, module },
    [CONTEXT]: context,
    [UNEXAMPLED]: unexampled,
    [PRECONDITION]: ifMatch,
  });
}

/**
 * The headers an operation's answers carry beyond their own, declared so a typed client types them:
 * a file's name and language; on a route that takes `Idempotency-Key`, `idempotent-replayed` on
 * every answer that may be a kept one (all but those refused before the key is claimed: no or bad
 * credentials, no permission, a body too large or not JSON, a rate limit); the D1 bookmark on every
 * answer. A problem's `content-language` comes with it (src/lib/errors.ts).
 */
function answerHeaders(responses: NonNullable<RouteConfig["responses"]>, idempotent: boolean) {
  const beforeTheKey = new Set(["401", "403", "413", "415", "429"]);
  return Object.fromEntries(
    Object.entries(responses).map(([status, answer]) => {
      if ("$ref" in answer) return [status, answer];
      const file = Object.keys(answer.content ?? {}).some((type) => LOCALISED_FILES.has(type)) && status < "300";
      const replay = idempotent && status < "500" && !beforeTheKey.has(status);
      const headers = { ...(file ? FILE_HEADERS : {}), ...(replay ? REPLAYED_HEADER : {}) };
      Object.assign(headers, D1_BOOKMARK_HEADER, answer.headers);
      return [status, { ...answer, headers }];
    }),
  );
}

/** The school and the record id the document's examples name. */
const EXAMPLE_SCHOOL = 1;
const EXAMPLE_ID = 42;
const UNKNOWN_SCHOOL = 999;

/** `exit-permission` or `schoolConfiguration` as a label: "Exit permission", "School configuration". */
const labelOf = (name: string) => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/-/g, " ")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The examples of an operation's error answers, made from its definition: the permission it needs
 * (403), the records its path names (404), what it says of its own 409 / 422 / 429, and the
 * Idempotency-Key answers of a signed-in POST or PATCH. A status without cases gets the generic
 * example of src/lib/errors.ts.
 */
function problemCases(route: {
  path: string;
  access: Access;
  module?: AppModuleKey;
  request: RouteConfig["request"];
  idempotent: boolean;
  examples: ProblemExamples;
  labels: Record<string, string | Message>;
}): Partial<Record<ProblemStatus, ProblemCase[]>> {
  const { path, access, module, request, examples, labels } = route;
  const instance = path.replace(/\{[^}]+\}/g, String(EXAMPLE_ID));
  const cases: Partial<Record<ProblemStatus, ProblemCase[]>> = {};
  const add = (status: ProblemStatus, ...more: ProblemCase[]) => {
    cases[status] = [...(cases[status] ?? []), ...more.map((c) => ({ instance, ...c }))];
  };
  for (const [code, given] of Object.entries(examples)) {
    const status = Number(code);
    if (!isProblemStatus(status) || given === undefined) continue;
    const list: readonly ProblemCase[] =
      typeof given === "string" || given instanceof Message ? [{ detail: given }] : "detail" in given ? [given] : given;
    // An unnamed case is the operation's own: named so, and summarised by what it says.
    add(
      status,
      ...list.map((c, i) => {
        const detail = String(c.detail);
        return {
          ...c,
          name: c.name ?? (i === 0 ? "operation" : `operation${i + 1}`),
          summary: c.summary ?? (detail.length > 90 ? `${detail.slice(0, 87)}...` : detail),
        };
      }),
    );
  }
  const school = access !== "public" && access !== "user";

  // 400: what any operation of its kind refuses.
  if (request?.body) {
    add(400, {
      name: "unknownField",
      summary: "A field the body does not have (bodies are strict: nothing can be mass-assigned)",
      detail: "Invalid body: schoolId: Unknown field",
      errors: [{ path: "schoolId", message: m`Unknown field` }],
    });
  } else if (/\{id\}/.test(path)) {
    const message = "Invalid input: expected number, received string";
    add(400, {
      name: "badId",
      summary: "An id that is not a positive integer in plain digits",
      detail: `Invalid path parameter: id: ${message}`,
      instance: path.replace("{id}", "abc").replace(/\{[^}]+\}/g, String(EXAMPLE_ID)),
      errors: [{ path: "id", message }],
    });
  } else if (
    request?.query &&
    "shape" in request.query &&
    typeof request.query.shape === "object" &&
    request.query.shape !== null &&
    "pageSize" in request.query.shape
  ) {
    const message = "Too big: expected number to be <=100";
    add(400, {
      name: "pageSize",
      summary: "A page size above 100",
      detail: `Invalid query: pageSize: ${message}`,
      instance: `${instance}?pageSize=1000`,
      errors: [{ path: "pageSize", message }],
    });
  } else if (school) {
    add(400, {
      name: "schoolHeader",
      summary: "An X-School-Id that is not a positive integer",
      detail: "X-School-Id must be a positive integer",
      errors: [{ path: "X-School-Id", message: m`Expected a positive integer` }],
    });
  }

  if (school) {
    add(
      403,
      typeof access === "string"
        ? { name: "noRole", summary: "The caller has no role in the school", detail: say.noRoleIn(EXAMPLE_SCHOOL) }
        : {
            name: "missingPermission",
            summary: `The caller's roles in the school do not grant ${access.name}`,
            detail: say.missingPermission(access.name, EXAMPLE_SCHOOL),
          },
    );
    if (module) {
      add(403, {
        name: "moduleDisabled",
        summary: `The school has switched the ${module} module off`,
        title: "Module disabled",
        detail: say.moduleDisabled(module, EXAMPLE_SCHOOL),
      });
    }
  }

  // 404: each record the path names, the last one first; then a school that does not exist.
  const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? "").reverse();
  for (const param of params) {
    const segment = path.split("/").at(path.split("/").indexOf(`{${param}}`) - 1) ?? param;
    const given = labels[param];
    const label =
      (given === undefined ? undefined : String(given)) ??
      (param === "id" ? labelOf(segment) : param.endsWith("Id") ? labelOf(param.slice(0, -2)) : undefined);
    if (label)
      add(404, {
        name: param,
        summary: `No such ${label.toLowerCase()} in this school`,
        detail: say.notFound(label, EXAMPLE_ID),
      });
  }
  if (school) {
    add(404, {
      name: "school",
      summary: "X-School-Id names no school",
      detail: say.notFound("School", UNKNOWN_SCHOOL),
    });
  }

  if (route.idempotent) {
    add(409, {
      name: "idempotencyRunning",
      summary: "A repeat while the first request with this Idempotency-Key still runs",
      title: "Request in progress",
      detail: say.idempotencyRunning,
    });
    add(422, {
      name: "idempotencyReused",
      summary: "An Idempotency-Key used before with another request",
      title: "Idempotency-Key reused",
      detail: say.idempotencyReused,
    });
  }
  return cases;
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

type Parsed<S> = S extends z.ZodType ? z.output<S> : never;

/** What a route's schemas parse: `{ params, query, body }`, each present when the route declares it. */
export type InputOf<R> = (R extends { request: { params: infer P } } ? { params: Parsed<P> } : unknown) &
  (R extends { request: { query: infer Q } } ? { query: Parsed<Q> } : unknown) &
  (R extends { request: { body: { content: { "application/json": { schema: infer B } } } } }
    ? { body: Parsed<B> }
    : unknown);

type Answer<Res> = Res extends { content: { "application/json": { schema: infer S } } }
  ? S extends z.ZodType
    ? z.input<S> | (z.input<S> extends Page<infer I> ? Listing<I> : never)
    : never
  : Res extends { content: object }
    ? Response
    : undefined;

/** What a route answers on success: its JSON body, a `Response` (a file), or nothing (204). */
export type OutputOf<R> = R extends { responses: infer Rs }
  ? 200 extends keyof Rs
    ? Answer<Rs[200]>
    : 201 extends keyof Rs
      ? Answer<Rs[201]>
      : 202 extends keyof Rs
        ? Answer<Rs[202]>
        : undefined
  : never;

/**
 * A service verb serving route `R`: the one shape `verb(ctx, input)`. A verb of a 204 route
 * answers nothing (`Promise<void>`). A `Response` is answered as it is: for the few answers a
 * value cannot give (a header, another status the route declares).
 */
export type Verb<R> = (
  ctx: CtxOf<R>,
  input: InputOf<R>,
) =>
  | Promise<OutputOf<R> | Response | undefined>
  | OutputOf<R>
  | Response
  | undefined
  | (OutputOf<R> extends undefined ? Promise<void> : never);

/** A route and its handler: what a module registers (the app mounts each with `openapi`). */
export interface Operation {
  readonly route: ApiRoute;
  readonly handler: Handler<AppEnv>;
}

/** The context a route's verb gets: the request's, prepared as the route declares. */
export function contextOf<R extends ApiRoute>(c: Context<AppEnv>, route: R): Promise<CtxOf<R>> | CtxOf<R> {
  // `authorize` ran the route's declared access first: its user and school are the ones `CtxOf`
  // names (test/conformance-suite.ts calls every route as each kind of caller).
  const ctx = ctxOf(c) as CtxOf<R>;
  const load = route[CONTEXT];
  // A loader is declared on school routes only (`defineRoute` refuses it elsewhere).
  return load ? (load(ctx as MemberCtx) as Promise<CtxOf<R>>) : ctx;
}

type Validated = { out: { param: unknown; query: unknown; json: unknown; header: unknown } };

/** What the route's validators parsed, as its verb takes it. */
function inputOf(c: Context<AppEnv, string, Validated>, route: ApiRoute) {
  const request = route.request;
  return {
    ...(request?.params ? { params: c.req.valid("param") } : {}),
    ...(request?.query ? { query: c.req.valid("query") } : {}),
    ...(request?.body ? { body: c.req.valid("json") } : {}),
    ...(request?.headers ? { headers: c.req.valid("header") } : {}),
  };
}

/** The route's success status: its first 2xx response. */
function successOf(route: ApiRoute): ContentfulStatusCode | 204 {
  const code = Object.keys(route.responses)
    .map(Number)
    .find((n) => n >= 200 && n < 300);
  if (code === 204) return 204;
  if (code === 200 || code === 201 || code === 202) return code;
  throw new Error(`${route.operationId}: no 200, 201, 202 or 204 response`);
}

/**
 * Serves a route with a service verb.
 * @example
 * export const getRules = operation(getRulesRoute, (ctx) => rules.read(ctx));
 */
export function operation<R extends ApiRoute>(route: R, verb: Verb<R>): Operation {
  return serve(route, verb);
}

/**
 * `operation` for a generic builder (src/lib/resource): the input is typed from the route, the
 * answer is not checked against it (TypeScript cannot relate a generic record schema's output to
 * the route's response type; the builder's `toRecord` is typed against the record instead).
 */
export function serve<R extends ApiRoute>(
  route: R,
  verb: (ctx: never, input: InputOf<R>) => Promise<unknown> | unknown,
): Operation {
  const status = successOf(route);
  const etagged = answersETag(route);
  // A resource builder's verbs take its table's context (`Data<T, C>`: `SchoolCtx` or `Ctx`), which
  // the context of its routes' declared scope is (`defineResource` pairs school tables with school routes).
  const run = verb as (ctx: CtxOf<R>, input: InputOf<R>) => unknown;
  return {
    route,
    handler: async (c: Context<AppEnv, string, Validated>) => {
      // The validators parsed each part with this route's own schemas: the verb's input type.
      const input = inputOf(c, route) as InputOf<R>;
      const ctx = await contextOf(c, route);
      const ifMatch = route[PRECONDITION];
      // The route's If-Match reads its record as the route's own verbs do: with the route's context.
      const precondition = ifMatch as IfMatch<CtxOf<R>> | undefined;
      const checked = precondition
        ? await unchangedSince(ctx, precondition, c.req.valid("param"), c.req.header("if-match"))
        : ctx;
      const answer: unknown = await run(checked, input);
      if (answer instanceof Response) return etagged ? answerTagged(c, answer) : answer;
      const listing = answer instanceof Listing;
      if (status === 204 && !listing) return c.body(null, 204);
      const value = listing ? answer.envelope(c.req.url) : answer;
      const code = listing || status === 204 ? 200 : status;
      if (!etagged) return c.json(value, code);
      // The bytes are encoded once: digested for the tag, then given to the Response as they are.
      return answerTagged(c, { bytes: jsonBytes(value), code });
    },
  };
}
