/**
 * The local S3 endpoint of `npm run dev` (src/modules/dev/s3.ts): the presigned URLs the API hands
 * out in development point at the Worker itself, which checks the signature as S3 would and
 * stores in the DOCUMENTS R2 binding, the store the bulk consumer reads. The clock is the test's
 * (it signs and it checks), so nothing here depends on the date.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { AwsClient } from "aws4fetch";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import worker from "../src/index";
import { s3Signer } from "../src/lib/s3";
import { SIGNED_URL_SECONDS } from "../src/modules/document/signed-url";
import { uniq } from "./fixtures";
import { configWith, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

type Signed = {
  id: number;
  slug: string;
  url: string;
  method: "GET" | "PUT";
  headers: Record<string, string>;
};

async function sign(t: TestApp, body: { contentType: string; slug: string; name: string; method?: "GET" | "PUT" }) {
  const res = await t.request("/api/v1/documents/documents/signed-url", {
    method: "POST",
    token: await t.token(2, { [NORTH]: "all" }),
    school: NORTH,
    body,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Signed;
}

/** A request to a presigned URL, answered by the app as the dev server would. */
const send = (t: TestApp, url: string, init: RequestInit = {}) => t.app.request(url, init, env);

const slugOf = (file = `${uniq("import")}.xlsx`) => `${NORTH}/documents/${file}`;

/** A signed upload URL and the bytes to send with it. */
async function upload(t: TestApp, slug = slugOf()) {
  const put = await sign(t, { contentType: XLSX, slug, name: "Import" });
  const bytes = crypto.getRandomValues(new Uint8Array(3000));
  return { put, bytes, slug };
}

/** Expects a 403 problem whose title is S3's error code, and returns its detail. */
async function refused(res: Response, code: string) {
  expect(res.status).toBe(403);
  const body = await problem(res);
  expect(body.title).toBe(code);
  return body.detail;
}

describe("dev S3 endpoint: uploads and downloads", () => {
  it("follows the port the dev server is reached at, when S3_ENDPOINT is its path (wrangler.toml's [env.dev])", async () => {
    const t = makeTestApp({ config: configWith({ S3_ENDPOINT: "/dev/s3" }) });
    const slug = slugOf();
    const token = await t.token(2, { [NORTH]: "all" });
    for (const origin of ["http://localhost:9123", "http://192.168.1.20:8787"]) {
      // `npm run dev -- --port 9123`, or a phone on the same network reaching the laptop's address.
      const res = await t.app.request(
        `${origin}/api/v1/documents/documents/signed-url`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "x-school-id": String(NORTH),
            "content-type": "application/json",
          },
          body: JSON.stringify({ contentType: XLSX, slug, name: "Import" }),
        },
        env,
      );
      expect(res.status, await res.clone().text()).toBe(200);
      const put = (await res.json()) as Signed;
      expect(put.url.startsWith(`${origin}/dev/s3/school-documents/`), put.url).toBe(true);
      const bytes = crypto.getRandomValues(new Uint8Array(100));
      const stored = await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes });
      expect(stored.status, await stored.clone().text()).toBe(200);
      expect(new Uint8Array((await (await env.DOCUMENTS.get(slug))?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(
        bytes,
      );
    }
    // Only in development: elsewhere a path is no S3 endpoint.
    expect(() => configWith({ S3_ENDPOINT: "/dev/s3", ENVIRONMENT: "production", SMS_PROVIDER: "twilio" })).toThrow(
      /S3_ENDPOINT: must be https/,
    );
  });

  it("an upload with the API's PUT URL lands in DOCUMENTS and reads back with its GET URL", async () => {
    const t = makeTestApp();
    const { put, bytes, slug } = await upload(t, slugOf(`Alumnos ${uniq("año")}.xlsx`));
    const url = new URL(put.url);
    expect(url.origin + url.pathname).toBe(
      `http://localhost:8787/dev/s3/school-documents/${slug.split("/").map(encodeURIComponent).join("/")}`,
    );
    expect(put.headers).toEqual({ "content-type": XLSX });

    const stored = await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes });
    expect(stored.status, await stored.clone().text()).toBe(200);
    expect(stored.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);

    // The binding sees the object: the same store the bulk consumer reads.
    const object = await env.DOCUMENTS.get(slug);
    expect(object?.httpMetadata?.contentType).toBe(XLSX);
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(bytes);

    const get = await sign(t, { contentType: XLSX, slug, name: "Import", method: "GET" });
    expect(get.headers).toEqual({});
    const downloaded = await send(t, get.url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get("content-type")).toBe(XLSX);
    expect(downloaded.headers.get("etag")).toBe(stored.headers.get("etag"));
    expect(new Uint8Array(await downloaded.arrayBuffer())).toEqual(bytes);

    // HEAD with its own presigned URL (signed here by aws4fetch directly, as any S3 client would).
    const client = new AwsClient({
      accessKeyId: t.deps.config.s3.accessKeyId,
      secretAccessKey: t.deps.config.s3.secretAccessKey,
      service: "s3",
      region: "auto",
    });
    const headUrl = new URL(put.url.split("?")[0] ?? "");
    headUrl.searchParams.set("X-Amz-Expires", "60");
    const datetime = t.clock
      .now()
      .toISOString()
      .replace(/[:-]|\.\d{3}/g, "");
    const head = await client.sign(new Request(headUrl, { method: "HEAD" }), { aws: { signQuery: true, datetime } });
    const headRes = await send(t, head.url, { method: "HEAD" });
    expect(headRes.status).toBe(200);
    expect(headRes.headers.get("content-length")).toBe("3000");
    expect(headRes.headers.get("content-type")).toBe(XLSX);
  });

  it("the bulk consumer finds a file uploaded this way", async () => {
    const t = makeTestApp();
    const { put, bytes } = await upload(t);
    expect((await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes })).status).toBe(200);
    const started = await t.request("/api/v1/bulk-process", {
      method: "POST",
      token: await t.token(2, { [NORTH]: "all" }),
      school: NORTH,
      body: { entity: "students", documentId: put.id },
    });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: number };

    const batch = createMessageBatch("school-bulk", [
      { id: `dev-s3-${id}`, timestamp: new Date(), attempts: 1, body: { bulkProcessId: id, schoolId: NORTH } },
    ]);
    const ctx = createExecutionContext();
    await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([`dev-s3-${id}`]);
    const res = await t.request(`/api/v1/bulk-process/${id}`, {
      token: await t.token(2, { [NORTH]: "all" }),
      school: NORTH,
    });
    // Past the "not found in storage" check: the file was there.
    expect(await res.json()).toMatchObject({ errors: [{ row: 0, message: "No importer for students yet" }] });
  });

  it("answers 404 for an object never uploaded and for another bucket", async () => {
    const t = makeTestApp();
    // The upload URL records the document; nothing is uploaded with it.
    const { slug } = await upload(t);
    const get = await sign(t, { contentType: XLSX, slug, name: "Never", method: "GET" });
    const missing = await send(t, get.url);
    expect(missing.status).toBe(404);
    await problem(missing);

    const other = s3Signer({ ...t.deps.config.s3, bucket: "another-bucket" });
    const url = await other.sign({ key: "1/documents/x.xlsx", method: "GET", expiresIn: 60, now: t.clock.now() });
    const res = await send(t, url.url);
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toContain("another-bucket");
  });

  it("lets a browser on a local origin upload (CORS preflight)", async () => {
    const t = makeTestApp();
    const { put } = await upload(t);
    const res = await send(t, put.url, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:8081",
        "access-control-request-method": "PUT",
        "access-control-request-headers": "content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:8081");
    expect(res.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(res.headers.get("access-control-allow-headers")).toContain("content-type");
  });
});

describe("dev S3 endpoint: refusals (403, nothing stored)", () => {
  it("a tampered signature", async () => {
    const t = makeTestApp();
    const { put, bytes, slug } = await upload(t);
    const url = new URL(put.url);
    const signature = url.searchParams.get("X-Amz-Signature") ?? "";
    url.searchParams.set("X-Amz-Signature", `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`);
    const res = await send(t, url.href, { method: "PUT", headers: put.headers, body: bytes });
    await refused(res, "SignatureDoesNotMatch");
    expect(await env.DOCUMENTS.head(slug)).toBeNull();
  });

  it("an expired URL, and one not yet valid", async () => {
    const t = makeTestApp();
    const { put, bytes, slug } = await upload(t);
    t.clock.advance(SIGNED_URL_SECONDS);
    const late = await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes });
    expect(await refused(late, "AccessDenied")).toBe("Request has expired");
    expect(await env.DOCUMENTS.head(slug)).toBeNull();

    // One second earlier it was still good.
    t.clock.advance(-1);
    expect((await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes })).status).toBe(200);

    t.clock.advance(-3600);
    const early = await send(t, put.url, { method: "PUT", headers: put.headers, body: bytes });
    expect(await refused(early, "AccessDenied")).toBe("Request is not yet valid");
  });

  it("another content type than the signed one, or none", async () => {
    const t = makeTestApp();
    const { put, bytes, slug } = await upload(t);
    const png = await send(t, put.url, { method: "PUT", headers: { "content-type": "image/png" }, body: bytes });
    await refused(png, "SignatureDoesNotMatch");
    const none = await send(t, put.url, { method: "PUT", body: bytes });
    await refused(none, "SignatureDoesNotMatch");
    expect(await env.DOCUMENTS.head(slug)).toBeNull();
  });

  it("an upload URL that does not sign its content type", async () => {
    const t = makeTestApp();
    const slug = slugOf();
    const url = await t.deps.signer.sign({ key: slug, method: "PUT", expiresIn: 60, now: t.clock.now() });
    expect(new URL(url.url).searchParams.get("X-Amz-SignedHeaders")).toBe("host");
    const res = await send(t, url.url, { method: "PUT", body: "bytes" });
    expect(await refused(res, "AccessDenied")).toMatch(/content-type/);
    expect(await env.DOCUMENTS.head(slug)).toBeNull();
  });

  it("another key, another method, an added parameter", async () => {
    const t = makeTestApp();
    const { put, bytes, slug } = await upload(t);
    const otherKey = put.url.replace(encodeURIComponent(slug.split("/")[2] ?? ""), "other.xlsx");
    expect(otherKey).not.toBe(put.url);
    await refused(
      await send(t, otherKey, { method: "PUT", headers: put.headers, body: bytes }),
      "SignatureDoesNotMatch",
    );
    await refused(await send(t, put.url), "SignatureDoesNotMatch");
    await refused(
      await send(t, `${put.url}&x-id=PutObject`, { method: "PUT", headers: put.headers, body: bytes }),
      "SignatureDoesNotMatch",
    );
    expect(await env.DOCUMENTS.head(slug)).toBeNull();
  });

  it("unknown credentials, and a request without a signature", async () => {
    const t = makeTestApp();
    const slug = slugOf();
    const input = { key: slug, method: "PUT" as const, contentType: XLSX, expiresIn: 60, now: t.clock.now() };
    const stranger = await s3Signer({ ...t.deps.config.s3, accessKeyId: "someone-else" }).sign(input);
    await refused(await send(t, stranger.url, { method: "PUT", headers: stranger.headers }), "InvalidAccessKeyId");
    const wrongSecret = await s3Signer({ ...t.deps.config.s3, secretAccessKey: "not-the-secret" }).sign(input);
    await refused(
      await send(t, wrongSecret.url, { method: "PUT", headers: wrongSecret.headers }),
      "SignatureDoesNotMatch",
    );
    const otherRegion = await s3Signer({ ...t.deps.config.s3, region: "us-east-1" }).sign(input);
    await refused(
      await send(t, otherRegion.url, { method: "PUT", headers: otherRegion.headers }),
      "AuthorizationQueryParametersError",
    );
    const bare = `http://localhost:8787/dev/s3/school-documents/${slug}`;
    await refused(
      await send(t, bare, { method: "PUT", headers: { "content-type": XLSX } }),
      "AuthorizationQueryParametersError",
    );
    await refused(await send(t, bare), "AuthorizationQueryParametersError");
    expect(await env.DOCUMENTS.head(slug)).toBeNull();
  });
});

describe("dev S3 endpoint: development only", () => {
  it("is not mounted outside development", async () => {
    const t = makeTestApp();
    const { put, bytes } = await upload(t);
    const prod = createApp({ deps: () => t.deps, development: false });
    const res = await prod.request(put.url, { method: "PUT", headers: put.headers, body: bytes }, env);
    expect(res.status).toBe(404);
    await problem(res);
  });
});
