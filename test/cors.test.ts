/**
 * CORS for browser clients (src/middleware/cors.ts): the configured origins get the headers and a
 * 204 preflight; any other origin gets no CORS header at all; development with no list allows
 * loopback origins only.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config";
import worker from "../src/index";
import { FCM_KEY } from "./config-vars";
import { makeTestApp, problem } from "./helpers";

const ADMIN = "https://admin.example.org";

/** An app configured as production with CORS_ORIGINS (when given), parsed by the real loadConfig. */
function appWith(vars: Record<string, string>) {
  return makeTestApp({ config: loadConfig({ ...env, ...vars }) });
}
const production = (CORS_ORIGINS?: string) =>
  appWith({
    ENVIRONMENT: "production",
    SMS_PROVIDER: "twilio",
    TWILIO_ACCOUNT_SID: "ACtest",
    TWILIO_AUTH_TOKEN: "test",
    TWILIO_FROM: "+15550009999",
    S3_ENDPOINT: "https://test.r2.cloudflarestorage.com",
    PUSH_PROVIDER: "fcm",
    FCM_SERVICE_ACCOUNT: FCM_KEY,
    CORS_ORIGINS: CORS_ORIGINS ?? "",
  });

const corsHeaders = (res: Response) => [...res.headers.keys()].filter((k) => k.startsWith("access-control-"));

const preflight = (origin: string, method = "POST", headers = "authorization,content-type,x-school-id") => ({
  method: "OPTIONS",
  headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
});

describe("CORS with CORS_ORIGINS", () => {
  const t = production(`${ADMIN}, https://school.example.org`);

  it("answers an allowed origin's preflight 204 with the methods and headers the API uses", async () => {
    const res = await t.request("/api/v1/student", preflight(ADMIN, "PATCH"));
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(res.headers.get("access-control-allow-origin")).toBe(ADMIN);
    const methods = res.headers.get("access-control-allow-methods")?.split(",");
    expect(methods).toEqual(expect.arrayContaining(["GET", "POST", "PUT", "PATCH", "DELETE"]));
    const headers = res.headers.get("access-control-allow-headers")?.split(",");
    expect(headers).toEqual(
      expect.arrayContaining([
        "authorization",
        "content-type",
        "x-school-id",
        "x-request-id",
        "idempotency-key",
        "if-match",
        "if-none-match",
        "accept-language",
        "x-d1-bookmark",
      ]),
    );
    expect(res.headers.get("access-control-max-age")).toBe("7200");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("lets an allowed origin read answers, errors included, and every header a client acts on: ETag, an export's name, rate limits, retry-after, a replay's mark, the request id, the D1 bookmark", async () => {
    for (const origin of [ADMIN, "https://school.example.org"]) {
      const ok = await t.request("/api/health", { headers: { origin } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
      expect(ok.headers.get("access-control-expose-headers")?.split(",").sort()).toEqual([
        "content-disposition",
        "content-language",
        "etag",
        "idempotent-replayed",
        "ratelimit",
        "ratelimit-policy",
        "retry-after",
        "x-d1-bookmark",
        "x-request-id",
      ]);
      expect(ok.headers.get("vary")).toContain("Origin");
    }
    const denied = await t.request("/api/v1/permission", { headers: { origin: ADMIN } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe(ADMIN);
    await problem(denied);
  });

  it("gives any other origin no CORS header: its preflight is a 403, its requests unreadable", async () => {
    const others = [
      "https://evil.example",
      `${ADMIN}.evil.example`,
      "http://admin.example.org",
      `${ADMIN}:8443`,
      "null",
      "http://localhost:8081",
    ];
    for (const origin of others) {
      const pre = await t.request("/api/v1/student", preflight(origin));
      expect(pre.status, origin).toBe(403);
      expect(corsHeaders(pre), origin).toEqual([]);
      await problem(pre);
      const get = await t.request("/api/health", { headers: { origin } });
      expect(get.status, origin).toBe(200);
      expect(corsHeaders(get), origin).toEqual([]);
      expect(get.headers.get("vary"), origin).toContain("Origin");
    }
  });

  it("adds nothing to requests without an Origin (apps, servers)", async () => {
    const res = await t.request("/api/health");
    expect(corsHeaders(res)).toEqual([]);
  });
});

describe("CORS defaults", () => {
  it("production without CORS_ORIGINS: no origin at all, not even localhost", async () => {
    const t = production();
    for (const origin of ["http://localhost:8081", ADMIN]) {
      const res = await t.request("/api/v1/student", preflight(origin));
      expect(res.status, origin).toBe(403);
      expect(corsHeaders(res), origin).toEqual([]);
    }
  });

  it("development without CORS_ORIGINS: loopback origins on any port, nothing else", async () => {
    const t = makeTestApp();
    for (const origin of ["http://localhost:8081", "http://127.0.0.1:19006", "http://[::1]:3000", "http://localhost"]) {
      const res = await t.request("/api/v1/student", preflight(origin));
      expect(res.status, origin).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), origin).toBe(origin);
    }
    for (const origin of ["http://localhost.evil.example", "http://192.168.1.20:8081", "https://evil.example"]) {
      const res = await t.request("/api/v1/student", preflight(origin));
      expect(res.status, origin).toBe(403);
      expect(corsHeaders(res), origin).toEqual([]);
    }
  });

  it("development with CORS_ORIGINS: exactly the list", async () => {
    const t = appWith({ CORS_ORIGINS: "http://localhost:8081" });
    expect((await t.request("/api/v1/student", preflight("http://localhost:8081"))).status).toBe(204);
    expect((await t.request("/api/v1/student", preflight("http://localhost:3000"))).status).toBe(403);
  });

  it("through the Worker entry, as `npm run dev` serves it", async () => {
    const res = await worker.fetch(
      new Request("http://localhost/api/v1/auth/verify-code", preflight("http://localhost:8081")) as Request<
        unknown,
        IncomingRequestCfProperties
      >,
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:8081");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});
