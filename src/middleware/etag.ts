/**
 * Cheap refreshes. A GET's JSON answer carries a weak `ETag` (a digest of its body); a request whose
 * `If-None-Match` names it gets a 304 with no body. The answer is still computed (the database is
 * read): what a client saves is the transfer and the parse, which on a phone is most of a refresh.
 * Files (spreadsheets, PDFs) are left alone.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../lib/context";
import { etagMatches, etagOf } from "../lib/etag";

/** Headers a 304 does not carry: it has no body. */
const BODY_HEADERS = new Set(["content-type", "content-length", "content-encoding"]);

export const etag: MiddlewareHandler<AppEnv> = async function etag(c, next) {
  await next();
  const res = c.res;
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").includes("json")) return;
  // An operation's answer carries its tag (src/lib/route.ts); a verb's own Response is read back.
  const tag = res.headers.get("etag") ?? (await etagOf(await res.clone().arrayBuffer()));
  if (!etagMatches(tag, c.req.header("if-none-match"))) {
    res.headers.set("etag", tag);
    return;
  }
  const headers = new Headers();
  for (const [name, value] of res.headers) if (!BODY_HEADERS.has(name)) headers.set(name, value);
  headers.set("etag", tag);
  c.res = undefined;
  c.res = new Response(null, { status: 304, headers });
};
