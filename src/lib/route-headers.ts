/**
 * What every operation's document says besides its own schemas: the tags (one per functional area),
 * the security schemes, and the headers a route declares by what it is (X-School-Id,
 * Idempotency-Key, If-None-Match, Accept-Language, Idempotent-Replayed, ETag, a file's
 * Content-Disposition). src/lib/route.ts's `defineRoute` puts them on each operation.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Access } from "./access";
import { CONTENT_LANGUAGE, headerRef } from "./errors";

/** One tag per functional area of the product (plus Auth and Development): how the docs page groups operations. */
export const TAGS = [
  { name: "Auth", description: "Sign-in by verification code, token refresh and revocation" },
  { name: "People", description: "Users, roles, parents, teachers, students, families" },
  { name: "Schools", description: "Schools, configurations, schedules, holiday cycles" },
  { name: "Groups", description: "Classes and their members" },
  { name: "Transport", description: "Vehicles, routes, availability, rules and the daily summary" },
  {
    name: "Access control",
    description: "The catalogue of permissions roles are made of (roles and who has them: People)",
  },
  {
    name: "Permissions and tasks",
    description: "Exit permissions (how a child goes home today), tasks for parents, appointments",
  },
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

export const SCHOOL_HEADER = {
  name: "X-School-Id",
  in: "header" as const,
  required: false,
  description:
    "The current school. Required when the caller has roles in more than one school, and from super-admins on " +
    "school routes. A school that does not exist is a 404.",
  // What src/middleware/current-school.ts accepts: 1 to 10 digits, no leading zero (else a 400).
  schema: { type: "integer" as const, minimum: 1, maximum: 9_999_999_999 },
};

/**
 * Safe retries of a signed-in POST or PATCH (src/middleware/idempotency.ts). No `example`, here or
 * on the other request headers a client fills from what it holds (If-None-Match, If-Match): the
 * docs page's "Try it out" pre-fills examples, and one fixed key sent with every write made each
 * later write of that user a 422 for a day (test/openapi-examples.test.ts).
 */
export const IDEMPOTENCY_HEADER = {
  name: "Idempotency-Key",
  in: "header" as const,
  required: false,
  description:
    "Makes a retry safe: the first answer to this request is kept for 24 hours (per user and key) and a repeat " +
    "of the same request gets it again, with `Idempotent-Replayed: true`. The same key with another request " +
    "is a 422; a repeat while the first still runs is a 409 (retry in a moment). 1 to 255 printable ASCII " +
    "characters, e.g. a UUID.",
  schema: { type: "string" as const, minLength: 1, maxLength: 255 },
};

/** Cheap refreshes of a GET's JSON answer (src/lib/etag.ts). */
export const IF_NONE_MATCH_HEADER = {
  name: "If-None-Match",
  in: "header" as const,
  required: false,
  description:
    'The `ETag` of an answer already held (e.g. `W/"3f9a1c07b2e4d865"`): when it is still current, the answer ' +
    "is a 304 with no body.",
  schema: { type: "string" as const },
};

/**
 * The language of the texts for people in an answer (src/lib/language.ts). Every operation takes it:
 * declared once among the document's components (src/app.ts registers it) and referenced.
 */
export const ACCEPT_LANGUAGE = {
  name: "Accept-Language",
  in: "header" as const,
  required: false,
  description:
    "The language of the texts for people in the answer (problems, labels, file names and headers): es or en, " +
    "q-values honoured (`es-MX, en;q=0.5`). Without it, the signed-in user's language, else the school's, else " +
    "English. `content-language` says which.",
  schema: { type: "string" as const, maxLength: 200 },
};

/**
 * The D1 bookmark a client last got (src/app.ts): the request's D1 session starts from it, so the
 * client reads what it wrote. Declared once among the document's components (src/app.ts registers
 * it) and referenced by every operation. No example (filled from what the client holds).
 */
export const D1_BOOKMARK = {
  name: "x-d1-bookmark",
  in: "header" as const,
  required: false,
  description:
    "The latest `x-d1-bookmark` this client got: the request reads at least that state (read replication). " +
    "Without it a GET reads from any replica, other methods from the primary. A malformed one is ignored.",
  schema: { type: "string" as const, maxLength: 100 },
};

/**
 * A kept answer given again (src/middleware/idempotency.ts). Written out on each answer, not
 * referenced: it is optional, and a typed client takes a referenced header as required.
 */
export const REPLAYED_HEADER = {
  "idempotent-replayed": {
    description: "`true`: the answer kept for an earlier request with this `Idempotency-Key` (nothing ran again)",
    required: false,
    schema: { type: "string" as const, enum: ["true"] },
  },
};

/** What a file download (an Excel export, a PDF) says of itself. */
export const FILE_HEADERS = { "content-disposition": headerRef("ContentDisposition"), ...CONTENT_LANGUAGE };

/**
 * Media types of the files the API writes in the request's language: an Excel file (src/lib/xlsx.ts's
 * XLSX_TYPE, written out: that module brings the zip writer), a PDF.
 */
export const LOCALISED_FILES = new Set([
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/pdf",
]);

export const ETAG_HEADER = {
  ETag: {
    description: "A weak validator of this answer: send it back as `If-None-Match` to get a 304 when nothing changed",
    schema: { type: "string" as const },
  },
};

/** Whether a route answers an `ETag` and honours `If-None-Match`: a GET whose 200 is JSON. */
export function answersETag(route: { method: string; responses?: RouteConfig["responses"] }): boolean {
  const ok = route.responses?.[200];
  return route.method === "get" && !!ok && "content" in ok && !!ok.content && "application/json" in ok.content;
}

/** Whether a route takes `Idempotency-Key`: a signed-in POST or PATCH. */
export const takesIdempotencyKey = (method: string, access: Access) =>
  (method === "post" || method === "patch") && access !== "public";
