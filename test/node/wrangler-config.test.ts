/**
 * wrangler.toml as wrangler reads it: the top level (what `wrangler deploy` publishes) is
 * production and nothing of development; `[env.dev]` (what `npm run dev` serves) declares the same
 * bindings with development vars; queues have consumers only where code consumes them.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { ConfigError, loadConfig, servesDevelopmentRoutes } from "../../src/config";
import { MODULES } from "../../src/modules";
import { FCM_KEY } from "../config-vars";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (env?: string) => unstable_readConfig({ config: `${ROOT}/wrangler.toml`, env });
const production = read();
const dev = read("dev");

/** Secrets as an operator sets them with `wrangler secret put`. */
const SECRETS = {
  AUTH_SECRET: "prod-secret-0123456789abcdef0123456789abcdef",
  S3_ACCESS_KEY_ID: "r2-access-key",
  S3_SECRET_ACCESS_KEY: "r2-secret",
  TWILIO_ACCOUNT_SID: "ACprod",
  TWILIO_AUTH_TOKEN: "twilio-token",
  TWILIO_FROM: "+15550001234",
  FCM_SERVICE_ACCOUNT: FCM_KEY,
};

/** The local secrets a fresh clone gets (`.dev.vars`, copied from `.dev.vars.example`). */
const devVars = Object.fromEntries(
  readFileSync(`${ROOT}/.dev.vars.example`, "utf8")
    .split("\n")
    .filter((line) => /^[A-Z0-9_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
);

type Consumer = { queue: string; dead_letter_queue?: string };

const bindings = (c: typeof production) => ({
  d1: c.d1_databases.map((d: { binding: string; database_name: string; migrations_dir: string }) => [
    d.binding,
    d.database_name,
    d.migrations_dir,
  ]),
  r2: c.r2_buckets.map((b: { binding: string; bucket_name: string }) => [b.binding, b.bucket_name]),
  producers: c.queues.producers?.map((p: { binding: string; queue: string }) => [p.binding, p.queue]),
  consumers: c.queues.consumers,
  assets: c.assets && [c.assets.binding, c.assets.directory],
  vars: Object.keys(c.vars).sort(),
});

describe("wrangler.toml", () => {
  it("top level: production values only, as `wrangler deploy --dry-run` shows them", async () => {
    const outdir = mkdtempSync(join(tmpdir(), "dry-run-"));
    const { stdout } = await promisify(execFile)(
      `${ROOT}/node_modules/.bin/wrangler`,
      ["deploy", "--dry-run", "--env=", "--outdir", outdir],
      // WRANGLER_LOG: the bindings table is wrangler's info output (vitest.config.ts quiets it to warn).
      { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", WRANGLER_LOG: "log" } },
    ).finally(() => rmSync(outdir, { recursive: true, force: true }));
    expect(stdout).toContain('env.ENVIRONMENT ("production")');
    expect(stdout).toContain('env.SMS_PROVIDER ("twilio")');
    expect(stdout).toMatch(/env\.S3_ENDPOINT \("https:\/\/<ACCOUNT_ID>\.r2\.cloudflare/);
    expect(stdout).not.toMatch(/development|"log"|localhost|127\.0\.0\.1|\/dev\/s3/);
    expect(production.observability?.enabled).toBe(true);
  }, 60_000);

  it("top level: the Worker refuses to serve until S3_ENDPOINT is set, then serves production", () => {
    expect(() => loadConfig({ ...production.vars, ...SECRETS })).toThrow(ConfigError);
    expect(() => loadConfig({ ...production.vars, ...SECRETS })).toThrow(/S3_ENDPOINT: still the placeholder/);
    const vars = { ...production.vars, ...SECRETS, S3_ENDPOINT: "https://0123abcd.r2.cloudflarestorage.com" };
    expect(loadConfig(vars)).toMatchObject({
      environment: "production",
      sms: { provider: "twilio" },
      push: { provider: "fcm" },
      resetDataEnabled: false,
      cors: { origins: [], loopback: false },
    });
    expect(servesDevelopmentRoutes(vars)).toBe(false);
  });

  it("[env.dev]: the development configuration with the local S3 endpoint, never reachable if deployed", () => {
    const config = loadConfig({ ...dev.vars, ...devVars });
    expect(config).toMatchObject({
      isDevelopment: true,
      sms: { provider: "log" },
      push: { provider: "log" },
      // A path: each request's own origin (the port the dev server listens on) signs the URLs.
      s3: { endpoint: "/dev/s3", bucket: "school-documents" },
      cors: { loopback: true },
    });
    expect(dev.workers_dev).toBe(false);
    expect(dev.routes ?? []).toEqual([]);
  });

  it("[env.dev] declares the same bindings and vars as the top level (environments inherit none)", () => {
    expect(bindings(dev)).toEqual(bindings(production));
    // The Worker reads the PDF fonts through the static assets' binding (src/lib/pdf.ts).
    expect(bindings(production).assets).toEqual(["ASSETS", expect.stringMatching(/public$/)]);
    expect(dev.vars.S3_BUCKET).toBe(production.vars.S3_BUCKET);
    expect(dev.r2_buckets[0]?.bucket_name).toBe(production.vars.S3_BUCKET);
  });

  it("crons: every job a module registers runs on a declared trigger, and every trigger runs a job", () => {
    const jobs = MODULES.flatMap((m) => m.jobs ?? []);
    for (const c of [production, dev]) {
      const crons: string[] = c.triggers?.crons ?? [];
      for (const job of jobs) expect(crons, job.name).toContain(job.cron);
      // A trigger with no job would wake the Worker for nothing (and write no cron history).
      for (const cron of crons)
        expect(
          jobs.map((j) => j.cron),
          cron,
        ).toContain(cron);
    }
  });

  it("queues: a consumer only where code consumes, and every dead-letter queue consumed", () => {
    for (const c of [production, dev]) {
      const consumers: Consumer[] = c.queues.consumers ?? [];
      const consumed = consumers.map((q) => q.queue);
      const dlqs = consumers.flatMap((q) => (q.dead_letter_queue ? [q.dead_letter_queue] : []));
      expect(consumed.filter((q) => !q.endsWith("-dlq")).sort()).toEqual(
        MODULES.flatMap((m) => Object.keys(m.consumers ?? {})).sort(),
      );
      expect(consumed.filter((q) => q.endsWith("-dlq")).sort()).toEqual(dlqs.sort());
    }
  });
});
