/**
 * Validators of JSON answers: a weak ETag is a digest of the answer's bytes, so the GET that sends
 * it and the PUT that checks `If-Match` against the record's current answer compute the same one.
 *
 * Cheap refreshes: a GET's JSON 200 carries its tag, and a request whose `If-None-Match` names it
 * gets a 304 with no body (`answerTagged`, which every operation that answers an ETag calls). The
 * answer is still computed (the database is read): what a client saves is the transfer and the
 * parse, which on a phone is most of a refresh. Files (spreadsheets, PDFs) are left alone.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** `W/"<20 characters>"`: the first 15 bytes of the SHA-1 of the bytes, base64url. */
export async function etagOf(bytes: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", bytes)).subarray(0, 15);
  return `W/"${btoa(String.fromCharCode(...digest))
    .replaceAll("+", "-")
    .replaceAll("/", "_")}"`;
}

const utf8 = new TextEncoder();

/** `value` as the UTF-8 bytes of its JSON: what an answer sends and its tag digests. */
export function jsonBytes(value: unknown): Uint8Array<ArrayBuffer> {
  const bytes = utf8.encode(JSON.stringify(value));
  // TextEncoder writes a fresh ArrayBuffer (never shared memory), which a Response body takes.
  return ownsArrayBuffer(bytes) ? bytes : new Uint8Array(bytes);
}

const ownsArrayBuffer = (bytes: Uint8Array): bytes is Uint8Array<ArrayBuffer> => bytes.buffer instanceof ArrayBuffer;

/** The ETag of a JSON answer of `value`, as the GET that answers it sends it. */
export const etagOfJson = (value: unknown) => etagOf(jsonBytes(value));

/**
 * Whether `header` (`If-None-Match` or `If-Match`) names `tag`: `*`, or any tag of the list with the
 * same opaque part. `W/` is ignored on both sides, also for `If-Match`: a proxy that compresses an
 * answer weakens its tag, and the digest is of the bytes the API wrote.
 */
export function etagMatches(tag: string, header: string | undefined): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const opaque = tag.replace(/^W\//, "");
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === opaque);
}

/** Headers a 304 does not carry: it has no body. */
const BODY_HEADERS = new Set(["content-type", "content-length", "content-encoding"]);

/**
 * A GET's answer with its ETag: `bytes` (JSON written by the operation, digested once) with status
 * `code`, or a verb's own `Response` (its JSON read back); a 304 when `If-None-Match` names the tag.
 */
export async function answerTagged(
  c: Context,
  answer: Response | { bytes: Uint8Array<ArrayBuffer>; code: ContentfulStatusCode },
) {
  if (answer instanceof Response) {
    if (answer.status !== 200 || !(answer.headers.get("content-type") ?? "").includes("json")) return answer;
    const tag = await etagOf(await answer.clone().arrayBuffer());
    if (!etagMatches(tag, c.req.header("if-none-match"))) {
      answer.headers.set("etag", tag);
      return answer;
    }
    const headers = new Headers();
    for (const [name, value] of answer.headers) if (!BODY_HEADERS.has(name)) headers.set(name, value);
    headers.set("etag", tag);
    return new Response(null, { status: 304, headers });
  }
  const tag = await etagOf(answer.bytes);
  if (answer.code === 200 && etagMatches(tag, c.req.header("if-none-match"))) return c.body(null, 304, { etag: tag });
  return c.body(answer.bytes, answer.code, { "content-type": "application/json", etag: tag });
}
