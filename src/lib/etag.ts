/**
 * Validators of JSON answers: a weak ETag is a digest of the answer's bytes, so the GET that sends
 * it and the PUT that checks `If-Match` against the record's current answer compute the same one.
 *
 * Cheap refreshes: a GET's JSON 200 carries its tag, and a request whose `If-None-Match` names it
 * gets a 304 with no body (`answerTagged`, which every operation that answers an ETag calls). The
 * answer is still computed (the database is read): what a client saves is the transfer and the
 * parse, which on a phone is most of a refresh. Files (spreadsheets, PDFs) are left alone.
 *
 * The digest is a 64-bit hash computed in the request's own turn (two 32-bit MurmurHash3 lanes over
 * the bytes' 32-bit words), not SHA-1 through `crypto.subtle`: a weak validator needs only that a
 * changed answer gets another tag, not resistance to a forger (a client can send any `If-Match` it
 * likes anyway; the check guards against lost updates, not attackers), and the asynchronous digest
 * cost every GET a round through the event loop (docs/performance.md).
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const C3 = 0x85ebca6b;
const C4 = 0xc2b2ae35;

/** MurmurHash3's finaliser: every input bit reaches every output bit. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), C3);
  h = Math.imul(h ^ (h >>> 13), C4);
  return h ^ (h >>> 16);
}

const hex8 = (h: number) => (h >>> 0).toString(16).padStart(8, "0");

/**
 * `W/"<16 hex digits>"`: a 64-bit hash of the bytes. Words are read in the platform's order (little
 * endian wherever Workers and Node run), so every isolate of a deployment gives the same tag.
 */
export function etagOf(input: ArrayBuffer | Uint8Array): string {
  let bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.byteOffset % 4 !== 0) bytes = bytes.slice();
  const n = bytes.length >>> 2;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, n);
  let h1 = 0x9747b28c ^ bytes.length;
  let h2 = 0x5bd1e995 ^ bytes.length;
  for (let i = 0; i < n; i++) {
    const k = words[i] ?? 0;
    let k1 = Math.imul(k, C1);
    k1 = Math.imul((k1 << 15) | (k1 >>> 17), C2);
    h1 ^= k1;
    h1 = (Math.imul((h1 << 13) | (h1 >>> 19), 5) + 0xe6546b64) | 0;
    let k2 = Math.imul(k, C3);
    k2 = Math.imul((k2 << 16) | (k2 >>> 16), C4);
    h2 ^= k2;
    h2 = (Math.imul((h2 << 17) | (h2 >>> 15), 5) + 0x561ccd1b) | 0;
  }
  let tail = 0;
  for (let i = n * 4, shift = 0; i < bytes.length; i++, shift += 8) tail |= (bytes[i] ?? 0) << shift;
  h1 = fmix(h1 ^ Math.imul(tail, C1) ^ h2);
  h2 = fmix(h2 ^ Math.imul(tail, C3) ^ h1);
  return `W/"${hex8(h1)}${hex8(h2)}"`;
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
export const etagOfJson = (value: unknown): string => etagOf(jsonBytes(value));

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
    const tag = etagOf(await answer.clone().arrayBuffer());
    if (!etagMatches(tag, c.req.header("if-none-match"))) {
      answer.headers.set("etag", tag);
      return answer;
    }
    const headers = new Headers();
    for (const [name, value] of answer.headers) if (!BODY_HEADERS.has(name)) headers.set(name, value);
    headers.set("etag", tag);
    return new Response(null, { status: 304, headers });
  }
  const tag = etagOf(answer.bytes);
  if (answer.code === 200 && etagMatches(tag, c.req.header("if-none-match"))) return c.body(null, 304, { etag: tag });
  return c.body(answer.bytes, answer.code, { "content-type": "application/json", etag: tag });
}
