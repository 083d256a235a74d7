/**
 * The local S3 endpoint of `npm run dev` (mounted only when ENVIRONMENT=development, with the
 * outbox): `PUT`, `GET` and `HEAD` on `/dev/s3/{bucket}/{key}`, stored in the `DOCUMENTS` R2
 * binding, the same store the bulk consumer reads. In development `S3_ENDPOINT` is this path
 * (`/dev/s3`, signed for the origin each request reached), so the presigned URLs the API hands out work with a plain
 * `curl`, with no second process and no second store. Every request must carry a valid presigned
 * query signature, checked as S3 checks it (`verifyPresigned`); refusals are 403 problem+json
 * whose title is S3's error code. In production the URLs point at R2's S3 endpoint instead.
 */
import type { Context } from "hono";
import type { StoredObject } from "../../deps";
import type { AppEnv } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { m, verbatim } from "../../lib/message";
import { createRouter } from "../../lib/router";
import { verifyPresigned } from "../../lib/s3";

export const DEV_S3_PATH = "/dev/s3";

/** S3's limit on a key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/** The bucket and key of `/dev/s3/{bucket}/{key}`, decoded as S3 decodes them. */
function target(c: Context<AppEnv>) {
  const segments = new URL(c.req.url).pathname.slice(DEV_S3_PATH.length + 1).split("/");
  try {
    const [bucket, ...key] = segments.map(decodeURIComponent);
    return { bucket: bucket ?? "", key: key.join("/") };
  } catch {
    throw new ApiError(400, m`The path is not valid percent-encoding`);
  }
}

async function handle(c: Context<AppEnv>) {
  const { config, storage, clock } = c.var.deps;
  const method = c.req.method;
  const refusal = await verifyPresigned(config.s3, { method, url: c.req.url, headers: c.req.raw.headers }, clock.now());
  if (refusal) throw new ApiError(403, refusal.message, { title: verbatim(refusal.code) });
  const { bucket, key } = target(c);
  if (bucket !== config.s3.bucket) throw notFound(m`Bucket ${bucket} not found`);
  if (!key || new TextEncoder().encode(key).length > MAX_KEY_BYTES) {
    throw new ApiError(400, m`A key is 1 to ${MAX_KEY_BYTES} bytes`);
  }

  if (method === "PUT") {
    const stored = await storage.put(key, await c.req.arrayBuffer(), {
      httpMetadata: { contentType: c.req.header("content-type") },
    });
    if (!stored) throw new Error(`the store did not keep ${key}`);
    return c.body(null, 200, { etag: `"${stored.etag}"` });
  }
  const head = (object: StoredObject) => ({
    "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
    "content-length": String(object.size),
    etag: `"${object.etag}"`,
    "last-modified": object.uploaded.toUTCString(),
  });
  if (method === "HEAD") {
    const object = await storage.head(key);
    if (!object) throw notFound(m`Object ${key} not found`);
    return c.body(null, 200, head(object));
  }
  const object = await storage.get(key);
  if (!object) throw notFound(m`Object ${key} not found`);
  return c.body(object.body, 200, head(object));
}

/** GET also answers HEAD (Hono routes HEAD to GET handlers; the method stays HEAD). */
export const devS3Router = createRouter().on(["GET", "PUT"], `${DEV_S3_PATH}/*`, handle);
