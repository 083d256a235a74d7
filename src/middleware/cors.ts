/**
 * CORS for browser clients (the admin dashboard, the Expo web build). Allowed origins are a setting
 * (`CORS_ORIGINS`, exact `scheme://host[:port]` values; in development with none set, any loopback
 * origin). An allowed origin gets hono/cors' headers, a preflight a 204. Any other origin gets no
 * CORS header at all, so the browser withholds every answer from the page; its preflight is a 403.
 * Credentials are bearer tokens in `authorization`, never cookies: no allow-credentials.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../lib/context";
import { ApiError } from "../lib/errors";
import { m } from "../lib/message";

export const CORS_POLICY = {
  allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
  /**
   * Every request header the API reads: a dashboard's preflight must allow each it sends (conditional
   * reads and writes, retries, the language, the school, the D1 bookmark it last got).
   */
  allowHeaders: [
    "authorization",
    "content-type",
    "x-school-id",
    "x-request-id",
    "idempotency-key",
    "if-match",
    "if-none-match",
    "accept-language",
    "x-d1-bookmark",
  ],
  /**
   * Every response header a client acts on beyond the CORS-safelisted ones: the ETag it sends back as
   * If-Match or If-None-Match, an export's file name, rate limits and when to retry, a replay's mark,
   * the request id to quote to support, the language of the texts, the D1 bookmark to send next.
   */
  exposeHeaders: [
    "etag",
    "content-disposition",
    "content-language",
    "ratelimit",
    "ratelimit-policy",
    "retry-after",
    "idempotent-replayed",
    "x-request-id",
    "x-d1-bookmark",
  ],
  /** Seconds a browser may reuse a preflight (Chromium caps it at 7200). */
  maxAge: 7200,
};

const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

const allowedOrigin = cors({ origin: (origin) => origin, ...CORS_POLICY });

export const browserCors: MiddlewareHandler<AppEnv> = async function browserCors(c, next) {
  const origin = c.req.header("origin");
  if (!origin) return next();
  const { origins, loopback } = c.get("deps").config.cors;
  if (origins.includes(origin) || (loopback && LOOPBACK.test(origin))) return allowedOrigin(c, next);
  if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) {
    throw new ApiError(403, m`This origin may not call the API from a browser (not in CORS_ORIGINS)`);
  }
  await next();
  // The answer depends on the origin: a cache must not hand it to an allowed one.
  c.header("vary", "Origin", { append: true });
};
