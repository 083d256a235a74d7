/**
 * Validators of JSON answers: a weak ETag is a digest of the answer's bytes, so the GET that sends
 * it and the PUT that checks `If-Match` against the record's current answer compute the same one.
 */

/** `W/"<20 characters>"`: the first 15 bytes of the SHA-1 of the bytes, base64url. */
export async function etagOf(bytes: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", bytes)).subarray(0, 15);
  return `W/"${btoa(String.fromCharCode(...digest))
    .replaceAll("+", "-")
    .replaceAll("/", "_")}"`;
}

/** The ETag of a JSON answer of `value`, as the GET that answers it sends it. */
export const etagOfJson = (value: unknown) => etagOf(new TextEncoder().encode(JSON.stringify(value)));

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
