/**
 * The one error path. Services throw `ApiError`; the app's `onError` and the validation hook turn
 * every failure into RFC 9457 problem details (`application/problem+json`). Error responses are
 * declared once here and spread into each route's OpenAPI definition by `defineRoute`.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConfigError } from "../config";
import { errorFields, log } from "./log";

export const PROBLEMS = {
  400: { type: "validation-error", title: "Invalid request" },
  401: { type: "unauthorized", title: "Authentication required" },
  403: { type: "forbidden", title: "Not allowed" },
  404: { type: "not-found", title: "Not found" },
  405: { type: "method-not-allowed", title: "Method not allowed" },
  409: { type: "conflict", title: "Conflict" },
  413: { type: "payload-too-large", title: "Payload too large" },
  415: { type: "unsupported-media-type", title: "Unsupported media type" },
  422: { type: "business-rule", title: "Request refused by a business rule" },
  429: { type: "rate-limited", title: "Too many requests" },
  500: { type: "internal-error", title: "Internal server error" },
  503: { type: "unavailable", title: "Service unavailable" },
} as const;

export type ProblemStatus = keyof typeof PROBLEMS;

/** Problem type URIs are relative references, documented in docs/errors.md. */
export const problemType = (status: ProblemStatus) => `/problems/${PROBLEMS[status].type}`;

export type FieldError = { path: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly status: ProblemStatus,
    readonly detail: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string>; title?: string } = {},
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

/** Shorthands for the errors services throw most. */
export const badRequest = (detail: string, errors?: FieldError[]) => new ApiError(400, detail, { errors });
export const notFound = (what: string, id?: number | string) =>
  new ApiError(404, id === undefined ? `${what} not found` : `${what} ${id} not found`);
export const conflict = (detail: string) => new ApiError(409, detail);
export const unprocessable = (detail: string) => new ApiError(422, detail);
export const forbidden = (detail: string) => new ApiError(403, detail);

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "/problems/validation-error" }),
    title: z.string().openapi({ example: "Invalid request" }),
    status: z.number().int().openapi({ example: 400 }),
    detail: z.string().openapi({ example: "pageSize: Too big: expected number to be <=100" }),
    instance: z.string().openapi({ example: "/api/v1/permission?pageSize=1000" }),
    requestId: z.string().optional(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: "One entry per invalid field" }),
  })
  .openapi("Problem");

const DESCRIPTIONS: Record<ProblemStatus, string> = {
  400: "Invalid input: malformed JSON, a wrong type, a value out of range, an unknown field",
  401: "No credentials, or credentials that are invalid or expired",
  403: "Authenticated, but not allowed (missing permission, not a member of the school)",
  404: "No such record in this school",
  405: "Method not allowed",
  409: "Conflict with the current state (duplicate unique value, stale state)",
  413: "The request body is too large",
  415: "The request body is not application/json",
  422: "Well-formed, but refused by a business rule",
  429: "Rate limited; retry after the number of seconds in `retry-after`",
  500: "Unexpected failure (logged with the request id)",
  503: "A dependency is failing",
};

/** Every 429 says when to come back. */
const RETRY_AFTER = {
  "retry-after": {
    description: "Seconds to wait before trying again",
    required: true,
    schema: { type: "integer" as const, minimum: 1 },
  },
};

/** OpenAPI response objects for the given statuses, to spread into a route's `responses`. */
export function errorResponses(statuses: readonly ProblemStatus[]) {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: DESCRIPTIONS[s],
        ...(s === 429 ? { headers: RETRY_AFTER } : {}),
        content: { "application/problem+json": { schema: ProblemSchema } },
      },
    ]),
  );
}

/** Turns a zod error into field errors with dotted paths (`address.street`, `items.2.name`). */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return { path: issue.keys.map((k) => (path ? `${path}.${k}` : k)).join(", "), message: "Unknown field" };
    }
    return { path, message: issue.message };
  });
}

export function validationError(error: z.ZodError, where: string): ApiError {
  const errors = fieldErrors(error);
  const detail = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
  return new ApiError(400, `Invalid ${where}: ${detail}`, { errors });
}

/** Renders any thrown value as problem+json. Unknown errors become a 500 that reveals nothing. */
export function problemResponse(c: Context, err: unknown): Response {
  let status: ProblemStatus = 500;
  let detail = "An unexpected error occurred. Quote the request id when reporting it.";
  let errors: FieldError[] | undefined;
  let headers: Record<string, string> = {};
  let title: string | undefined;
  if (err instanceof ApiError) {
    ({ status, detail } = err);
    errors = err.options.errors;
    headers = err.options.headers ?? {};
    title = err.options.title;
  } else if (err instanceof HTTPException && Object.hasOwn(PROBLEMS, err.status) && err.status < 500) {
    status = err.status as ProblemStatus;
    detail = err.message || PROBLEMS[status].title;
  } else {
    if (err instanceof ConfigError) {
      // The Worker refuses to serve: the log names the setting, the answer reveals nothing.
      status = 503;
      detail = "The service is not configured correctly and refuses to serve. Quote the request id when reporting it.";
    }
    log.error("unhandled error", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      ...errorFields(err),
    });
  }
  const url = new URL(c.req.url);
  const body = {
    type: problemType(status),
    title: title ?? PROBLEMS[status].title,
    status,
    detail,
    instance: url.pathname + url.search,
    requestId: c.get("requestId") as string | undefined,
    ...(errors ? { errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: status as ContentfulStatusCode,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}
