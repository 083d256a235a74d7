/**
 * Configuration safety: `loadConfig` refuses what would expose development-only parts outside
 * development (the SMS outbox, a local S3 endpoint), and the Worker entry then refuses to serve:
 * every request is a 503 problem+json that reveals nothing, with one log line naming the setting.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig, servesDevelopmentRoutes } from "../src/config";
import worker from "../src/index";
import { FCM_KEY } from "./config-vars";
import { problem } from "./helpers";

/** A valid production configuration: what an operator sets (README, Deploy). */
const PRODUCTION = {
  ENVIRONMENT: "production",
  AUTH_SECRET: "prod-secret-0123456789abcdef0123456789abcdef",
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "ACprod",
  TWILIO_AUTH_TOKEN: "twilio-token-value",
  TWILIO_FROM: "+15550001234",
  S3_ENDPOINT: "https://0123456789abcdef.r2.cloudflarestorage.com",
  S3_BUCKET: "school-documents",
  S3_REGION: "auto",
  S3_ACCESS_KEY_ID: "prod-access-key",
  S3_SECRET_ACCESS_KEY: "prod-secret-access-key",
  PUSH_PROVIDER: "fcm",
  FCM_SERVICE_ACCOUNT: FCM_KEY,
  IOS_LATEST_VERSION: "1.4.0",
  IOS_MIN_VERSION: "1.2.0",
  ANDROID_LATEST_VERSION: "1.4.0",
  ANDROID_MIN_VERSION: "1.2.0",
};

/** The ConfigError message `loadConfig` throws for `vars` (fails the test if it does not throw). */
function refusal(vars: Record<string, unknown>): string {
  try {
    loadConfig(vars);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(vars)}`);
}

describe("loadConfig", () => {
  it("accepts a production configuration: Twilio, R2 over https, no browser origin, no development routes", () => {
    const config = loadConfig({ ...PRODUCTION });
    expect(config).toMatchObject({
      environment: "production",
      isDevelopment: false,
      sms: { provider: "twilio", accountSid: "ACprod", from: "+15550001234" },
      s3: { endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com", bucket: "school-documents" },
      cors: { origins: [], loopback: false },
    });
    expect(servesDevelopmentRoutes({ ...PRODUCTION })).toBe(false);
  });

  it("refuses the log SMS provider (the readable outbox) outside development", () => {
    for (const ENVIRONMENT of ["production", "staging", "test"]) {
      expect(refusal({ ...PRODUCTION, ENVIRONMENT, SMS_PROVIDER: "log" }), ENVIRONMENT).toMatch(
        /SMS_PROVIDER: .*only with ENVIRONMENT=development/,
      );
    }
    // No ENVIRONMENT and no SMS_PROVIDER: production with the log provider, refused too.
    const { ENVIRONMENT: _, SMS_PROVIDER: __, ...unset } = PRODUCTION;
    expect(refusal(unset)).toMatch(/SMS_PROVIDER/);
    const dev = loadConfig({ ...PRODUCTION, ENVIRONMENT: "development", SMS_PROVIDER: "log" });
    expect(dev.sms.provider).toBe("log");
  });

  it("refuses the log push provider outside development, FCM without its key, and the data reset in production", () => {
    for (const ENVIRONMENT of ["production", "staging", "test"]) {
      expect(refusal({ ...PRODUCTION, ENVIRONMENT, PUSH_PROVIDER: "log" }), ENVIRONMENT).toMatch(
        /PUSH_PROVIDER: .*only with ENVIRONMENT=development/,
      );
    }
    expect(refusal({ ...PRODUCTION, FCM_SERVICE_ACCOUNT: undefined })).toMatch(
      /FCM_SERVICE_ACCOUNT: required with PUSH_PROVIDER=fcm/,
    );
    const broken = refusal({ ...PRODUCTION, FCM_SERVICE_ACCOUNT: JSON.stringify({ project_id: "p" }) });
    expect(broken).toMatch(
      /FCM_SERVICE_ACCOUNT: the service account's JSON key lacks or has a malformed client_email, private_key, token_uri/,
    );
    expect(broken).not.toContain('"p"');
    expect(refusal({ ...PRODUCTION, RESET_DATA_ENABLED: "true" })).toMatch(
      /RESET_DATA_ENABLED: .*never enabled in production/,
    );
    expect(loadConfig({ ...PRODUCTION, ENVIRONMENT: "staging", RESET_DATA_ENABLED: "true" })).toMatchObject({
      resetDataEnabled: true,
      push: { provider: "fcm", baseUrl: "https://fcm.googleapis.com", account: { project_id: "school-prod" } },
    });
    expect(loadConfig({ ...PRODUCTION }).resetDataEnabled).toBe(false);
  });

  it("refuses a local or placeholder S3 endpoint outside development", () => {
    for (const S3_ENDPOINT of ["http://localhost:8787/dev/s3", "http://127.0.0.1:4569"]) {
      expect(refusal({ ...PRODUCTION, S3_ENDPOINT }), S3_ENDPOINT).toMatch(/S3_ENDPOINT: must be https/);
    }
    expect(refusal({ ...PRODUCTION, S3_ENDPOINT: "https://<ACCOUNT_ID>.r2.cloudflarestorage.com" })).toMatch(
      /S3_ENDPOINT: still the placeholder/,
    );
    const dev = loadConfig({ ...PRODUCTION, ENVIRONMENT: "development", S3_ENDPOINT: "http://localhost:8787/dev/s3" });
    expect(dev.s3.endpoint).toBe("http://localhost:8787/dev/s3");
  });

  it("refuses Twilio without its credentials, and names settings, never their values", () => {
    expect(refusal({ ...PRODUCTION, TWILIO_AUTH_TOKEN: undefined })).toMatch(/TWILIO_AUTH_TOKEN/);
    const short = refusal({ ...PRODUCTION, AUTH_SECRET: "short-secret-value" });
    expect(short).toMatch(/AUTH_SECRET/);
    expect(short).not.toContain("short-secret-value");
  });

  it("names every setting that is wrong at once, not one per deploy", () => {
    // What a first deploy from wrangler.toml's placeholders, with secrets still missing, looks like.
    const vars = {
      ...PRODUCTION,
      S3_ENDPOINT: "https://<ACCOUNT_ID>.r2.cloudflarestorage.com",
      AUTH_SECRET: "short",
      TWILIO_ACCOUNT_SID: undefined,
      TWILIO_AUTH_TOKEN: undefined,
      TWILIO_FROM: undefined,
      S3_SECRET_ACCESS_KEY: undefined,
      APP_SHARE_URL: "http://app.example.org/join",
      LIBSQL_URL: "postgres://db.example.org/school",
      IOS_MIN_VERSION: "one",
    };
    let error: unknown;
    try {
      loadConfig(vars);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const settings = [
      "APP_SHARE_URL",
      "AUTH_SECRET",
      "IOS_MIN_VERSION",
      "LIBSQL_URL",
      "S3_ENDPOINT",
      "S3_SECRET_ACCESS_KEY",
      "TWILIO_ACCOUNT_SID",
      "TWILIO_AUTH_TOKEN",
      "TWILIO_FROM",
    ];
    expect((error as ConfigError).settings).toEqual(settings);
    const message = (error as Error).message;
    expect(message).toMatch(/^invalid configuration \(9\): /);
    for (const setting of settings) expect(message, setting).toContain(`${setting}: `);
    expect(message).not.toMatch(/short|postgres|db\.example|app\.example/);
    // The development configuration's own mistakes are named together too.
    const dev = refusal({
      ...PRODUCTION,
      ENVIRONMENT: "development",
      AUTH_SECRET: undefined,
      LIBSQL_URL: "file:school.db",
    });
    expect(dev).toMatch(/AUTH_SECRET: .*; LIBSQL_URL: a file: database needs the Node client/);
  });

  it("refuses a LIBSQL_URL the Worker's libSQL client cannot reach", () => {
    for (const LIBSQL_URL of ["not a url", "postgres://x/y", "file:school.db", "libsql//x.turso.io"]) {
      expect(refusal({ ...PRODUCTION, LIBSQL_URL }), LIBSQL_URL).toMatch(/LIBSQL_URL: /);
    }
    for (const LIBSQL_URL of [
      "libsql://school-api.turso.io",
      "https://db.example.org",
      "http://127.0.0.1:8080",
      "wss://x",
    ]) {
      expect(loadConfig({ ...PRODUCTION, LIBSQL_URL }).libsql?.url, LIBSQL_URL).toBe(LIBSQL_URL);
    }
  });

  it("reads libSQL shards from LIBSQL_SHARD_<n>_URL, each token its own or LIBSQL_AUTH_TOKEN", () => {
    const config = loadConfig({
      ...PRODUCTION,
      LIBSQL_URL: "libsql://school-api.turso.io",
      LIBSQL_AUTH_TOKEN: "group-token",
      LIBSQL_SHARD_2_URL: "libsql://school-api-shard-2.turso.io",
      LIBSQL_SHARD_2_AUTH_TOKEN: "shard-2-token",
      LIBSQL_SHARD_1_URL: "libsql://school-api-shard-1.turso.io",
      LIBSQL_SHARD_3_URL: "",
    });
    expect(config.libsql?.shards).toEqual([
      {
        binding: "DB_SHARD_1",
        url: "libsql://school-api-shard-1.turso.io",
        authToken: "group-token",
        settings: { url: "LIBSQL_SHARD_1_URL", token: "LIBSQL_AUTH_TOKEN" },
      },
      {
        binding: "DB_SHARD_2",
        url: "libsql://school-api-shard-2.turso.io",
        authToken: "shard-2-token",
        settings: { url: "LIBSQL_SHARD_2_URL", token: "LIBSQL_SHARD_2_AUTH_TOKEN" },
      },
    ]);
    expect(loadConfig({ ...PRODUCTION, LIBSQL_URL: "libsql://school-api.turso.io" }).libsql?.shards).toEqual([]);
  });

  it("refuses libSQL shard settings it cannot serve, naming each", () => {
    const libsql = { ...PRODUCTION, LIBSQL_URL: "libsql://school-api.turso.io" };
    const cases: [Record<string, string>, RegExp][] = [
      [{ LIBSQL_SHARD_1_URL: "file:shard-1.db" }, /LIBSQL_SHARD_1_URL: a file: database needs the Node client/],
      [{ LIBSQL_SHARD_1_URL: "not a url" }, /LIBSQL_SHARD_1_URL: expected a libSQL server's URL/],
      [{ LIBSQL_SHARD_0_URL: "libsql://x.turso.io" }, /LIBSQL_SHARD_0_URL: expected LIBSQL_SHARD_<n>_URL/],
      [{ LIBSQL_SHARD_ONE_URL: "libsql://x.turso.io" }, /LIBSQL_SHARD_ONE_URL: expected LIBSQL_SHARD_<n>_URL/],
      [{ LIBSQL_SHARD_9000_URL: "libsql://x.turso.io" }, /LIBSQL_SHARD_9000_URL: shard numbers go from 1 to 8191/],
      [{ LIBSQL_SHARD_1_AUTH_TOKEN: "t" }, /LIBSQL_SHARD_1_AUTH_TOKEN: a token for no shard/],
    ];
    for (const [vars, expected] of cases) {
      expect(refusal({ ...libsql, ...vars }), JSON.stringify(vars)).toMatch(expected);
    }
    // Shards are libSQL's: without LIBSQL_URL (a D1 Worker, whose shards are bindings) they are refused.
    expect(refusal({ ...PRODUCTION, LIBSQL_SHARD_1_URL: "libsql://x.turso.io" })).toMatch(
      /LIBSQL_SHARD_1_URL: a libSQL shard needs LIBSQL_URL/,
    );
    // The message names the setting, never the value.
    expect(refusal({ ...libsql, LIBSQL_SHARD_1_URL: "postgres://secret.example/x" })).not.toMatch(/secret\.example/);
  });

  it("reads CORS_ORIGINS as a comma-separated list of exact origins", () => {
    const config = loadConfig({
      ...PRODUCTION,
      CORS_ORIGINS: " https://admin.example.org, http://localhost:8081 ,,",
    });
    expect(config.cors).toEqual({ origins: ["https://admin.example.org", "http://localhost:8081"], loopback: false });
    for (const CORS_ORIGINS of ["*", "https://admin.example.org/", "admin.example.org", "https://a.example/x"]) {
      expect(refusal({ ...PRODUCTION, CORS_ORIGINS }), CORS_ORIGINS).toMatch(/CORS_ORIGINS/);
    }
    // Development with no list: any loopback origin; with a list: exactly the list.
    const dev = { ...PRODUCTION, ENVIRONMENT: "development" };
    expect(loadConfig(dev).cors).toEqual({ origins: [], loopback: true });
    expect(loadConfig({ ...dev, CORS_ORIGINS: "http://localhost:8081" }).cors.loopback).toBe(false);
  });

  it("reads NEW_SCHOOLS_ON as the databases new schools may be placed on (unset: every one)", () => {
    expect(loadConfig(PRODUCTION).newSchoolsOn).toEqual([]);
    expect(loadConfig({ ...PRODUCTION, NEW_SCHOOLS_ON: " DB_SHARD_1, DB_SHARD_12 ,," }).newSchoolsOn).toEqual([
      "DB_SHARD_1",
      "DB_SHARD_12",
    ]);
    for (const NEW_SCHOOLS_ON of ["db", "DB_SHARD_0", "DB_SHARD_", "SHARD_1", "DB DB_SHARD_1"]) {
      expect(refusal({ ...PRODUCTION, NEW_SCHOOLS_ON }), NEW_SCHOOLS_ON).toMatch(
        /NEW_SCHOOLS_ON[.\d]*: each name is DB or DB_SHARD_<n>/,
      );
    }
  });

  it("the test environment is the development configuration", () => {
    expect(loadConfig(env)).toMatchObject({ isDevelopment: true, sms: { provider: "log" } });
    expect(servesDevelopmentRoutes(env)).toBe(true);
  });
});

describe("the Worker entry with an invalid configuration", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function fetchWith(vars: Record<string, unknown>, path: string) {
    const res = await worker.fetch(
      new Request(`http://localhost${path}`) as Request<unknown, IncomingRequestCfProperties>,
      { ...env, ...vars } as Env,
      createExecutionContext(),
    );
    return res;
  }

  it("answers every request 503 problem+json, reveals nothing, and logs the setting", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    // The development outbox's configuration, deployed as production.
    const outside = { ENVIRONMENT: "production" };
    for (const path of [
      "/api/health",
      "/api/v1/dev/outbox?to=%2B15550000002",
      "/dev/s3/school-documents/x",
      "/api/x",
    ]) {
      const res = await fetchWith(outside, path);
      expect(res.status, path).toBe(503);
      expect(res.headers.get("x-request-id"), path).toBeTruthy();
      const body = await problem(res);
      expect(body.detail).toMatch(/not configured correctly/);
      const { instance, ...told } = body;
      expect(instance).toBe(path);
      expect(JSON.stringify(told)).not.toMatch(
        /SMS_PROVIDER|PUSH_PROVIDER|ENVIRONMENT|outbox|AUTH_SECRET|S3RVER|test-secret/,
      );
    }
    const lines = logged.mock.calls.map((args) => String(args[0]));
    expect(lines.length).toBeGreaterThanOrEqual(4);
    // One line per request, naming every setting at fault at once.
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      level: "error",
      message: "configuration refused",
      error: "ConfigError",
      settings: ["PUSH_PROVIDER", "S3_ENDPOINT", "SMS_PROVIDER"],
    });
    expect(lines[0]).toMatch(
      /PUSH_PROVIDER: .*only with ENVIRONMENT=development.*; S3_ENDPOINT: must be https.*; SMS_PROVIDER: .*only with ENVIRONMENT=development/,
    );
    expect(lines.join("\n")).not.toContain("test-secret");
  });

  it("refuses to serve when NEW_SCHOOLS_ON names a database the Worker is not bound to", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await fetchWith({ ...PRODUCTION, NEW_SCHOOLS_ON: "DB,DB_SHARD_7" }, "/api/health");
    expect(res.status).toBe(503);
    await problem(res);
    const line = JSON.parse(String(logged.mock.calls[0]?.[0] ?? "{}"));
    expect(line).toMatchObject({ message: "configuration refused", settings: ["NEW_SCHOOLS_ON"] });
    expect(line.detail ?? line.error_message ?? JSON.stringify(line)).toMatch(/DB_SHARD_7/);
    logged.mockRestore();
    // Both bound databases named: it serves.
    expect((await fetchWith({ ...PRODUCTION, NEW_SCHOOLS_ON: "DB_SHARD_1,DB" }, "/api/health")).status).toBe(200);
  });

  it("a valid production configuration serves, without the development routes", async () => {
    const res = await fetchWith(PRODUCTION, "/api/health");
    expect(res.status).toBe(200);
    for (const path of ["/api/v1/dev/outbox?to=%2B15550000002", "/dev/s3/school-documents/x"]) {
      const dev = await fetchWith(PRODUCTION, path);
      expect(dev.status, path).toBe(404);
      await problem(dev);
    }
    // The same Worker, in development, has them.
    const outbox = await fetchWith({}, "/api/v1/dev/outbox?to=%2B15550000002");
    expect(outbox.status).toBe(200);
  });
});
