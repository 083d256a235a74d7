/**
 * The one error path. Services throw `ApiError`; the app's `onError` and the validation hook turn
 * every failure into RFC 9457 problem details (`application/problem+json`). Error responses are
 * declared once here and spread into each route's OpenAPI definition by `defineRoute`.
 *
 * A problem's title, detail and field messages are messages (src/lib/message.ts), never plain
 * strings: `problemResponse` writes them in the request's language (and says which in
 * `content-language`).
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ConfigError } from "../config";
import { unavailable } from "../db/transient";
import { currentLanguage } from "./language";
import { errorFields, log } from "./log";
import { anyOf, Message, m, verbatim } from "./message";
import { moduleName, stateName } from "./names";

export const PROBLEMS = {
  400: { type: "validation-error", title: m`Invalid request` },
  401: { type: "unauthorized", title: m`Authentication required` },
  403: { type: "forbidden", title: m`Not allowed` },
  404: { type: "not-found", title: m`Not found` },
  405: { type: "method-not-allowed", title: m`Method not allowed` },
  409: { type: "conflict", title: m`Conflict` },
  412: { type: "precondition-failed", title: m`Precondition failed` },
  413: { type: "payload-too-large", title: m`Payload too large` },
  415: { type: "unsupported-media-type", title: m`Unsupported media type` },
  422: { type: "business-rule", title: m`Request refused by a business rule` },
  429: { type: "rate-limited", title: m`Too many requests` },
  500: { type: "internal-error", title: m`Internal server error` },
  503: { type: "unavailable", title: m`Service unavailable` },
} as const;

export type ProblemStatus = keyof typeof PROBLEMS;
export type ProblemType = `/problems/${(typeof PROBLEMS)[ProblemStatus]["type"]}`;

/** Problem type URIs are relative references, documented in docs/errors.md. */
export const problemType = (status: ProblemStatus): ProblemType => `/problems/${PROBLEMS[status].type}`;

/** Whether a status is one the API answers problems with. */
export const isProblemStatus = (status: number): status is ProblemStatus => Object.hasOwn(PROBLEMS, status);

/** Every problem type the API answers with: the enum of `Problem.type`. */
const [firstType, ...otherTypes] = Object.keys(PROBLEMS).map(Number).filter(isProblemStatus).map(problemType);
export const PROBLEM_TYPES: [ProblemType, ...ProblemType[]] = [firstType ?? problemType(400), ...otherTypes];

export type FieldError = { path: string; message: Message };

export class ApiError extends Error {
  constructor(
    readonly status: ProblemStatus,
    readonly detail: Message,
    readonly options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      title?: Message;
      /**
       * Further members of the problem (RFC 9457 extension members): a refusal's failed rules. A
       * message among them is written in the request's language too.
       */
      members?: Record<string, unknown>;
    } = {},
  ) {
    super(detail.toString());
    this.name = "ApiError";
  }
}

/** Shorthands for the errors services throw most: `throw notFound(m`Student ${id} not found`)`. */
export const badRequest = (detail: Message, errors?: FieldError[]) => new ApiError(400, detail, { errors });
export const notFound = (detail: Message) => new ApiError(404, detail);
export const conflict = (detail: Message) => new ApiError(409, detail);
export const unprocessable = (detail: Message) => new ApiError(422, detail);
export const forbidden = (detail: Message) => new ApiError(403, detail);

export const ProblemSchema = z
  .object({
    type: z.enum(PROBLEM_TYPES).openapi({ description: "The kind of problem; one per status (docs/errors.md)" }),
    title: z.string().openapi({
      description: "A short summary of the problem type (some errors say more), in the request's language",
    }),
    status: z.number().int().openapi({ description: "The HTTP status code, repeated" }),
    detail: z.string().openapi({
      description:
        "What went wrong with this request, in the request's language (Accept-Language es or en, else the caller's, else the school's; content-language says which)",
    }),
    instance: z.string().openapi({ description: "The path and query of the request" }),
    requestId: z.string().optional().openapi({ description: "Quote it when reporting a problem" }),
    errors: z
      .array(
        z.object({
          path: z.string().openapi({ description: "The field, dotted (`address.street`, `items.2.name`)" }),
          message: z.string().openapi({ description: "What is wrong with it" }),
        }),
      )
      .optional()
      .openapi({ description: "One entry per invalid field" }),
    failures: z
      .array(
        z.looseObject({
          code: z.string().openapi({ description: "The rule that failed, stable across versions and languages" }),
          message: z.string().openapi({ description: "Why, in the caller's language" }),
        }),
      )
      .optional()
      .openapi({
        description:
          "A refusal by business rules (422): every rule that failed, with a stable code, a message in the caller's language and the facts behind it",
      }),
  })
  .openapi("Problem");

export type Problem = z.infer<typeof ProblemSchema>;

const DESCRIPTIONS: Record<ProblemStatus, string> = {
  400: "Invalid input: malformed JSON, a wrong type, a value out of range, an unknown field",
  401: "No credentials, or credentials that are invalid or expired",
  403: "Authenticated, but not allowed (missing permission, not a member of the school, the school's module disabled)",
  404: "No such record in this school",
  405: "Method not allowed",
  409: "Conflict with the current state (duplicate unique value, stale state)",
  412: "The record changed since it was read: its ETag is no longer the one in `If-Match`",
  413: "The request body is too large",
  415: "The request body is not application/json",
  422: "Well-formed, but refused by a business rule",
  429: "Rate limited; retry after the number of seconds in `retry-after`",
  500: "Unexpected failure (logged with the request id)",
  503: "A dependency is failing: the database is briefly unavailable (`retry-after` says when to try again), or the SMS provider or the queue is down",
};

/**
 * Response headers many answers carry, each declared once among the document's components
 * (src/app.ts registers them) and referenced by every answer that carries it. Only headers always
 * sent: a typed client (openapi-typescript) takes a referenced header as required.
 */
export const HEADER_COMPONENTS = {
  ContentLanguage: {
    description: "The language of the texts for people in this answer: es or en",
    required: true,
    schema: { type: "string" as const, enum: ["es", "en"] },
  },
  ContentDisposition: {
    description: "`attachment` with the file's name, in the request's language (`filename*` when it is not ASCII)",
    required: true,
    schema: { type: "string" as const },
  },
};

/**
 * The D1 session's bookmark (read replication: src/db/client.ts, src/app.ts). The schema is a
 * component (src/app.ts registers it) that carries the description; the header is written out on
 * every answer, not referenced: it is optional (none on libSQL, nor before any query when the
 * request brought none), and a typed client takes a referenced header as required.
 */
export const D1_BOOKMARK_SCHEMA = {
  name: "D1Bookmark",
  schema: {
    type: "string" as const,
    pattern: "^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$",
    description:
      "Where this request's D1 session got to (read replication): send it back as `x-d1-bookmark` to read at " +
      "least this state on any replica. None from libSQL, nor from an answer that read nothing.",
    example: "00000000-00000041-00000000-00000000000000000000000000000000",
  },
} as const;
export const D1_BOOKMARK_HEADER = {
  "x-d1-bookmark": { required: false, schema: { $ref: `#/components/schemas/${D1_BOOKMARK_SCHEMA.name}` } },
};

/** A reference to a header of `HEADER_COMPONENTS`. */
export const headerRef = (name: keyof typeof HEADER_COMPONENTS) => ({ $ref: `#/components/headers/${name}` });

/** Every problem is written in the request's language (`problemResponse`), and says which. */
export const CONTENT_LANGUAGE = { "content-language": headerRef("ContentLanguage") };

/** Every 429 says when to come back; a 503 does when the database is what failed. */
const RETRY_AFTER = {
  "retry-after": {
    description: "Seconds to wait before trying again",
    required: true,
    schema: { type: "integer" as const, minimum: 1 },
  },
};
const RETRY_AFTER_UNAVAILABLE = {
  "retry-after": {
    description: "Seconds to wait before trying again; sent when the database is briefly unavailable",
    required: false,
    schema: { type: "integer" as const, minimum: 1 },
  },
};

/**
 * What the shared checks say, in one place: the middleware and the building block answer with
 * these, and the OpenAPI document's examples are made from the same functions (rendered in
 * English, the document's language), so an example is what the API really answers.
 */
export const say = {
  missingPermission: (permission: string, schoolId: number | null) =>
    schoolId === null ? m`Missing permission ${permission}` : m`Missing permission ${permission} in school ${schoolId}`,
  noRoleIn: (schoolId: number) => m`You have no role in school ${schoolId}`,
  noRoleAnywhere: m`You have no role in any school`,
  moduleDisabled: (module: string, schoolId: number) =>
    m`The ${moduleName(module)} module is disabled in school ${schoolId}`,
  /**
   * The document's 404 of a record its path names (a label and an id, English): each verb throws
   * its own whole sentence (`` notFound(m`Student ${id} not found`) ``), which reads the same in English.
   */
  notFound: (what: string, id?: number | string) =>
    id === undefined ? `${what} not found` : `${what} ${id} not found`,
  /** A guarded change from a state the action does not start from. */
  wrongState: (label: Message, id: number, state: string, action: string, states: readonly string[]) =>
    m`${label} ${id} is ${stateName(state)}; ${action} needs it to be ${anyOf(states.map(stateName))}`,
  /** `If-Match` naming a version that is no longer current. */
  changedSinceRead: (label: Message, id: number) =>
    m`${label} ${id} changed since it was read (If-Match); read it again and reapply the change`,
  idempotencyReused: m`This Idempotency-Key was used with another request; use a new key for a new request`,
  idempotencyRunning: m`A request with this Idempotency-Key is still running; retry in a moment`,
} as const;

/** One example of an error answer in the OpenAPI document (messages are rendered in English). */
export interface ProblemCase {
  /** The example's key and one-line summary (several cases of one status each get one). */
  name?: string;
  summary?: string;
  detail: string | Message;
  instance?: string;
  title?: string | Message;
  errors?: { path: string; message: string | Message }[];
  /** Further members of the problem (a refusal's `failures`). */
  members?: Record<string, unknown>;
}

/** What each status looks like when an operation says nothing of its own: a body this API really answers with. */
const EXAMPLES: Record<ProblemStatus, ProblemCase & { instance: string }> = {
  400: {
    detail: "Invalid query: pageSize: Too big: expected number to be <=100",
    instance: "/api/v1/permission?pageSize=1000",
    errors: [{ path: "pageSize", message: "Too big: expected number to be <=100" }],
  },
  401: {
    title: "Invalid or expired access token",
    detail: "Refresh it or sign in again.",
    instance: "/api/v1/user/me",
  },
  403: { detail: say.missingPermission("permission.read", 1), instance: "/api/v1/permission" },
  404: { detail: say.notFound("Document", 42), instance: "/api/v1/documents/42" },
  405: { detail: "Method not allowed", instance: "/api/v1/version" },
  409: { detail: "Permission already exists", instance: "/api/v1/permission" },
  412: { detail: say.changedSinceRead(m`Document`, 42), instance: "/api/v1/documents/42" },
  413: { detail: "The request body exceeds 1048576 bytes", instance: "/api/v1/documents" },
  415: { detail: "Send the body as application/json", instance: "/api/v1/documents" },
  422: { detail: "Permission 3 is built in and cannot be renamed", instance: "/api/v1/permission/3" },
  429: {
    title: "Too many attempts",
    detail: "Too many wrong attempts; request a new code",
    instance: "/api/v1/auth/verify-code",
  },
  500: {
    detail: "An unexpected error occurred. Quote the request id when reporting it.",
    instance: "/api/v1/documents",
  },
  503: {
    detail: "The database is briefly unavailable; try again in 2 seconds. Quote the request id if it persists.",
    instance: "/api/v1/student?page=2",
  },
};

const EXAMPLE_REQUEST_ID = "3f6c1a2e-8d4b-4f6e-9a57-0c2d9b1e7a10";

/** The problem body of a case (`instance` defaults to the status's generic example's). */
function problemOf(status: ProblemStatus, { title, errors, detail, instance, members }: ProblemCase): Problem {
  return {
    ...members,
    type: problemType(status),
    title: title === undefined ? PROBLEMS[status].title.render("en") : String(title),
    status,
    detail: String(detail),
    instance: instance ?? EXAMPLES[status].instance,
    requestId: EXAMPLE_REQUEST_ID,
    ...(errors ? { errors: errors.map((e) => ({ path: e.path, message: String(e.message) })) } : {}),
  };
}

/** An example problem body for a status (the OpenAPI document shows one per error response). */
export function problemExample(status: ProblemStatus): Problem {
  return problemOf(status, EXAMPLES[status]);
}

/**
 * The OpenAPI response object of a status: its cases as examples (one: `example`; several:
 * `examples`, each named and summarised), or the status's generic example.
 */
function errorResponse(s: ProblemStatus, cases?: readonly ProblemCase[], instance?: string) {
  const [only, ...more] = cases ?? [];
  const media =
    only && more.length > 0
      ? {
          examples: Object.fromEntries(
            [only, ...more].map((c, i) => [
              c.name ?? `case${i + 1}`,
              { ...(c.summary ? { summary: c.summary } : {}), value: problemOf(s, c) },
            ]),
          ),
        }
      : { example: problemOf(s, only ?? { ...EXAMPLES[s], instance: instance ?? EXAMPLES[s].instance }) };
  return {
    description: DESCRIPTIONS[s],
    headers: {
      ...CONTENT_LANGUAGE,
      ...(s === 429 ? RETRY_AFTER : s === 503 ? RETRY_AFTER_UNAVAILABLE : {}),
      ...D1_BOOKMARK_HEADER,
    },
    content: { "application/problem+json": { schema: ProblemSchema, ...media } },
  };
}

/**
 * The 503 nearly every operation declares (the database may be briefly unavailable), stated once
 * in the document's components (src/app.ts registers it) and referenced by each operation.
 */
export const UNAVAILABLE = {
  name: "Unavailable",
  // A component is plain OpenAPI: the Problem schema by its reference (every operation's other
  // errors register it).
  response: () => ({
    ...errorResponse(503),
    content: {
      "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" }, example: problemExample(503) },
    },
  }),
} as const;

/**
 * OpenAPI response objects for the given statuses, to spread into a route's `responses`, each with
 * the operation's own cases where it has some (`defineRoute` makes them from the route).
 */
export function errorResponses(
  statuses: readonly ProblemStatus[],
  cases: Partial<Record<ProblemStatus, readonly ProblemCase[]>> = {},
  instance?: string,
) {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      s === 503 && !cases[s]
        ? { $ref: `#/components/responses/${UNAVAILABLE.name}` }
        : errorResponse(s, cases[s], instance),
    ]),
  );
}

/**
 * Turns a zod error into field errors with dotted paths (`address.street`, `items.2.name`). zod
 * wrote its messages in the language of the parse (src/lib/message.ts): they are kept verbatim.
 */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return { path: issue.keys.map((k) => (path ? `${path}.${k}` : k)).join(", "), message: m`Unknown field` };
    }
    return { path, message: verbatim(issue.message) };
  });
}

/** "path: message; path: message", each message in the language of the answer. */
export function fieldsDetail(errors: readonly FieldError[]): Message {
  const parts = [""];
  const values: (string | Message)[] = [];
  for (const [i, e] of errors.entries()) {
    if (i > 0) parts[parts.length - 1] += "; ";
    if (e.path) {
      values.push(e.path);
      parts.push(": ");
    }
    values.push(e.message);
    parts.push("");
  }
  return new Message(parts, values);
}

/** What the validation hook says, by the part of the request zod refused (hono's validation targets). */
function invalid(target: string, detail: Message): Message {
  switch (target) {
    case "query":
      return m`Invalid query: ${detail}`;
    case "param":
      return m`Invalid path parameter: ${detail}`;
    case "header":
      return m`Invalid header: ${detail}`;
    default:
      return m`Invalid body: ${detail}`;
  }
}

/** A 400 for fields a verb found invalid itself (after zod): "Invalid body: path: message; ...". */
export const invalidBody = (errors: FieldError[]) => badRequest(invalid("json", fieldsDetail(errors)), errors);

export function validationError(error: z.ZodError, target: string): ApiError {
  const errors = fieldErrors(error);
  return new ApiError(400, invalid(target, fieldsDetail(errors)), { errors });
}

/** Hono's own refusals (its validators' parse of a body), in our words. */
const HONO_MESSAGES: Record<string, Message> = {
  "Malformed JSON in request body": m`Malformed JSON in request body`,
};

/** Renders any thrown value as problem+json. Unknown errors become a 500 that reveals nothing. */
/** The request's id, when the access log gave it one (a bare context has none). */
function requestIdOf(c: Context): string | undefined {
  const id: unknown = c.get("requestId");
  return typeof id === "string" ? id : undefined;
}

export function problemResponse(c: Context, err: unknown): Response {
  let status: ProblemStatus = 500;
  let detail = m`An unexpected error occurred. Quote the request id when reporting it.`;
  let errors: FieldError[] | undefined;
  let headers: Record<string, string> = {};
  let title: Message | undefined;
  let members: Record<string, unknown> = {};
  const down = unavailable(err);
  if (err instanceof ApiError) {
    ({ status, detail } = err);
    errors = err.options.errors;
    headers = err.options.headers ?? {};
    title = err.options.title;
    members = err.options.members ?? {};
  } else if (err instanceof HTTPException && isProblemStatus(err.status) && err.status < 500) {
    status = err.status;
    detail = err.message ? (HONO_MESSAGES[err.message] ?? verbatim(err.message)) : PROBLEMS[status].title;
  } else if (down) {
    // A database hiccup the data layer could not wait out (src/db/transient.ts): not a bug.
    status = 503;
    detail = m`The database is briefly unavailable; try again in ${down.retryAfterSeconds} seconds. Quote the request id if it persists.`;
    headers = { "retry-after": String(down.retryAfterSeconds) };
    log.error("database unavailable", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      reason: down.hiccup.reason,
      ...errorFields(down.cause),
    });
  } else {
    const config = err instanceof ConfigError;
    if (config) {
      // The Worker refuses to serve: the log names every setting at fault, the answer reveals nothing.
      status = 503;
      detail = m`The service is not configured correctly and refuses to serve. Quote the request id when reporting it.`;
    }
    log.error(config ? "configuration refused" : "unhandled error", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      ...(config ? { settings: err.settings } : {}),
      ...errorFields(err),
    });
  }
  const url = new URL(c.req.url);
  const language = currentLanguage();
  const body = {
    ...members,
    type: problemType(status),
    title: (title ?? PROBLEMS[status].title).render(language),
    status,
    detail: detail.render(language),
    instance: url.pathname + url.search,
    requestId: requestIdOf(c),
    ...(errors ? { errors: errors.map((e) => ({ path: e.path, message: e.message.render(language) })) } : {}),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json", "content-language": language, ...headers },
  });
}
