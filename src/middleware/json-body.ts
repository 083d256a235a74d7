/**
 * The body checks every JSON operation shares, before its validators read the body:
 * - the media type is exactly `application/json`, with no parameter or `charset=utf-8`
 *   (case-insensitive): anything else, `application/vnd.x+json` or another charset included, is a
 *   415 (the framework would read those as JSON, decoding them as UTF-8 whatever they say);
 * - the bytes are valid UTF-8: anything else is a 400 (the framework would store U+FFFD
 *   replacement characters in place of the invalid bytes).
 * Requests to operations without a JSON body are left alone (those do not read it).
 */
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../lib/context";
import { ApiError } from "../lib/errors";
import { m } from "../lib/message";
import type { RouteTable } from "../lib/route-table";

const JSON_MEDIA_TYPE = /^application\/json[ \t]*(?:;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*)?$/i;

export function jsonBody(routes: () => RouteTable): MiddlewareHandler<AppEnv> {
  return async function checkJsonBody(c, next) {
    const contentType = c.req.header("content-type");
    if (c.req.raw.body === null || contentType === undefined) return next();
    const table = routes();
    if (!matchedRoutes(c).some((r) => table.takesJson(r.method, r.path))) return next();
    if (!JSON_MEDIA_TYPE.test(contentType)) {
      throw new ApiError(415, m`Send the body as content-type: application/json (UTF-8; charset=utf-8 or no charset)`);
    }
    const bytes = await c.req.arrayBuffer(); // cached: the validator parses the same bytes
    try {
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new ApiError(400, m`The request body is not valid UTF-8`);
    }
    return next();
  };
}
