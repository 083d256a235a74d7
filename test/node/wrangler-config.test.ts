/**
 * wrangler.toml as wrangler reads it: the top level (what `wrangler deploy` publishes) is
 * production and nothing of development; `[env.staging]` is production's settings on resources of
 * its own; `[env.dev]` (what `npm run dev` serves) declares the same bindings with development
 * vars; queues have consumers only where code consumes them. A deploy (and `npm run build`) refuses
 * to start while placeholders are left, naming every one (scripts/placeholders.ts).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { envOf, placeholders } from "../../scripts/placeholders";
import { ConfigError, loadConfig, servesDevelopmentRoutes } from "../../src/config";
import { queueOf } from "../../src/jobs/queue";
import { MODULES } from "../../src/modules";
import { FCM_KEY } from "../config-vars";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (env?: string) => unstable_readConfig({ config: `${ROOT}/wrangler.toml`, env });
const production = read();
const staging = read("staging");
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

/**
 * What an environment declares, resources by the names production gives them: an environment's own
 * database, bucket and queues are production's names with its name added (`school-api-staging`).
 */
const bindings = (c: typeof production, environment = "production") => {
  const own = (name: string) => queueOf(name, environment);
  return {
    d1: c.d1_databases.map((d: { binding: string; database_name: string; migrations_dir: string }) => [
      d.binding,
      own(d.database_name),
      d.migrations_dir,
    ]),
    r2: c.r2_buckets.map((b: { binding: string; bucket_name: string }) => [b.binding, own(b.bucket_name)]),
    producers: c.queues.producers?.map((p: { binding: string; queue: string }) => [p.binding, own(p.queue)]),
    consumers: c.queues.consumers?.map((q: Consumer) => ({
      ...q,
      queue: own(q.queue),
      ...(q.dead_letter_queue ? { dead_letter_queue: own(q.dead_letter_queue) } : {}),
    })),
    assets: c.assets && [c.assets.binding, c.assets.directory],
    // The live board's hub: the same Durable Object class and SQLite migrations everywhere.
    objects: c.durable_objects.bindings.map((o: { name: string; class_name: string }) => [o.name, o.class_name]),
    migrations: c.migrations.map((m: { tag: string; new_sqlite_classes?: string[] }) => [m.tag, m.new_sqlite_classes]),
    vars: Object.keys(c.vars).sort(),
  };
};

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

  it("[env.staging]: production's settings on a database, a bucket and queues of its own", () => {
    expect(() => loadConfig({ ...staging.vars, ...SECRETS })).toThrow(/S3_ENDPOINT: still the placeholder/);
    const vars = { ...staging.vars, ...SECRETS, S3_ENDPOINT: "https://0123abcd.r2.cloudflarestorage.com" };
    expect(loadConfig(vars)).toMatchObject({
      environment: "staging",
      isDevelopment: false,
      sms: { provider: "twilio" },
      push: { provider: "fcm" },
      resetDataEnabled: false,
      cors: { origins: [], loopback: false },
      s3: { bucket: "school-documents-staging" },
    });
    expect(servesDevelopmentRoutes(vars)).toBe(false);
    expect(staging.workers_dev).toBe(true);
    const names = (c: typeof production) => [
      ...c.d1_databases.map((d: { database_name: string }) => d.database_name),
      ...c.r2_buckets.map((b: { bucket_name: string }) => b.bucket_name),
      ...(c.queues.consumers ?? []).map((q: Consumer) => q.queue),
    ];
    for (const name of names(staging)) expect(names(production), name).not.toContain(name);
    expect(staging.triggers?.crons).toEqual(production.triggers?.crons);
  });

  it("[env.staging] and [env.dev] declare the same bindings and vars as the top level (environments inherit none)", () => {
    expect(bindings(staging, "staging")).toEqual(bindings(production));
    expect(staging.vars.S3_BUCKET).toBe(staging.r2_buckets[0]?.bucket_name);
    expect(bindings(dev)).toEqual(bindings(production));
    // The Worker reads the PDF fonts through the static assets' binding (src/lib/pdf.ts).
    expect(bindings(production).assets).toEqual(["ASSETS", expect.stringMatching(/public$/)]);
    expect(bindings(production).objects).toEqual([["DISMISSAL_LIVE", "DismissalLive"]]);
    expect(bindings(production).migrations).toEqual([["v1", ["DismissalLive"]]]);
    expect(dev.vars.S3_BUCKET).toBe(production.vars.S3_BUCKET);
    expect(dev.r2_buckets[0]?.bucket_name).toBe(production.vars.S3_BUCKET);
  });

  it("crons: every job a module registers runs on a declared trigger, and every trigger runs a job", () => {
    const jobs = MODULES.flatMap((m) => m.jobs ?? []);
    for (const c of [production, staging, dev]) {
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
    for (const [c, environment] of [
      [production, "production"],
      [staging, "staging"],
      [dev, "development"],
    ] as const) {
      // As the dispatcher finds each queue's consumer (src/jobs/queue.ts).
      const consumers: Consumer[] = (c.queues.consumers ?? []).map((q: Consumer) => ({
        queue: queueOf(q.queue, environment),
        ...(q.dead_letter_queue ? { dead_letter_queue: queueOf(q.dead_letter_queue, environment) } : {}),
      }));
      const consumed = consumers.map((q) => q.queue);
      const dlqs = consumers.flatMap((q) => (q.dead_letter_queue ? [q.dead_letter_queue] : []));
      expect(consumed.filter((q) => !q.endsWith("-dlq")).sort()).toEqual(
        MODULES.flatMap((m) => Object.keys(m.consumers ?? {})).sort(),
      );
      expect(consumed.filter((q) => q.endsWith("-dlq")).sort()).toEqual(dlqs.sort());
    }
  });
});

describe("placeholders: a deploy or a build refuses to start while wrangler.toml has any", () => {
  const toml = readFileSync(`${ROOT}/wrangler.toml`, "utf8");
  /** wrangler.toml's text in a directory of its own (relative paths are not read here). */
  function configWith(text: string) {
    const dir = mkdtempSync(join(tmpdir(), "placeholders-"));
    writeFileSync(join(dir, "wrangler.toml"), text);
    return { path: join(dir, "wrangler.toml"), dispose: () => rmSync(dir, { recursive: true, force: true }) };
  }
  const filled = toml
    .replaceAll("<ACCOUNT_ID>", "0123abcd")
    .replaceAll("00000000-0000-0000-0000-000000000000", "5e1f0c3a-2b4d-4c6e-8f90-a1b2c3d4e5f6");
  const run = (script: string, args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [`${ROOT}/node_modules/tsx/dist/cli.mjs`, `${ROOT}/scripts/${script}`, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
      },
    ).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );

  it("names every one of production and staging at once: the all-zero database_id and <ACCOUNT_ID>", () => {
    for (const env of ["", "staging"]) {
      expect(placeholders(`${ROOT}/wrangler.toml`, env).sort()).toEqual([
        "d1_databases[0].database_id = 00000000-0000-0000-0000-000000000000",
        "d1_databases[1].database_id = 00000000-0000-0000-0000-000000000000",
        "vars.S3_ENDPOINT = https://<ACCOUNT_ID>.r2.cloudflarestorage.com",
      ]);
    }
  });

  it("finds none once they are set", () => {
    const config = configWith(filled);
    try {
      expect(placeholders(config.path, "")).toEqual([]);
      expect(placeholders(config.path, "staging")).toEqual([]);
    } finally {
      config.dispose();
    }
  });

  it("a queue of staging is found by production's name (src/jobs/queue.ts)", () => {
    expect(queueOf("school-bulk-staging", "staging")).toBe("school-bulk");
    expect(queueOf("school-bulk-staging-dlq", "staging")).toBe("school-bulk-dlq");
    expect(queueOf("school-bulk", "production")).toBe("school-bulk");
    expect(queueOf("school-bulk-dlq", "production")).toBe("school-bulk-dlq");
  });

  it("reads the environment of the command line as wrangler does", () => {
    expect(envOf(["deploy", "--env="])).toBe("");
    expect(envOf(["deploy", "--env=staging"])).toBe("staging");
    expect(envOf(["deploy", "--env", "staging", "--dry-run"])).toBe("staging");
    expect(envOf(["deploy", "-e", "staging"])).toBe("staging");
  });

  it("stops `npm run deploy`, `deploy:staging`, `deploy:libsql` and `build` first, naming each", async () => {
    const scripts = (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.deploy).toMatch(/^tsx scripts\/placeholders\.ts --env= && /);
    expect(scripts["deploy:staging"]).toMatch(/^tsx scripts\/placeholders\.ts --env=staging && /);
    expect(scripts["deploy:libsql"]).toMatch(/^tsx scripts\/placeholders\.ts --env= && /);
    expect(scripts.build).toMatch(/^tsx scripts\/wrangler\.ts deploy /);

    const config = configWith(toml.replace('S3_ENDPOINT = "https://<ACCOUNT_ID>', 'S3_ENDPOINT = "https://0123abcd'));
    try {
      const refused = await run("placeholders.ts", ["--env=staging", "--config", config.path]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("[env.staging] still has 3 placeholders");
      expect(refused.stderr).toContain("d1_databases[0].database_id = 00000000-0000-0000-0000-000000000000");
      expect(refused.stderr).toContain("d1_databases[1].database_id = 00000000-0000-0000-0000-000000000000");
      expect(refused.stderr).toContain("vars.S3_ENDPOINT = https://<ACCOUNT_ID>.r2.cloudflarestorage.com");
      // Production's S3_ENDPOINT was set in that copy: only its two databases are left.
      const production = await run("placeholders.ts", ["--env=", "--config", config.path]);
      expect(production.code).toBe(1);
      expect(production.stderr).toContain("the top level still has 2 placeholders to replace");
      const ready = configWith(filled);
      try {
        expect(await run("placeholders.ts", ["--env=staging", "--config", ready.path])).toEqual({
          code: 0,
          stderr: "",
        });
      } finally {
        ready.dispose();
      }
    } finally {
      config.dispose();
    }
    // `npm run build` as package.json runs it, on this checkout's wrangler.toml: refused before wrangler runs.
    const build = await run("wrangler.ts", ["deploy", "--dry-run", "--env=", "--outdir", "dist-never"]);
    expect(build.code).toBe(1);
    expect(build.stderr).toContain("the top level still has 3 placeholders");
  }, 60_000);
});

describe('migrations: every D1 database of an environment (docs/scaling.md "Shards")', () => {
  it("npm run db:migrate, deploy and deploy:staging migrate DB and each shard, the shard's ids in its range", async () => {
    const { migrateCommands } = await import("../../scripts/migrate");
    const scripts = (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts["db:migrate"]).toBe("tsx scripts/migrate.ts --env=");
    expect(scripts.deploy).toContain("&& tsx scripts/migrate.ts --env= &&");
    expect(scripts["deploy:staging"]).toContain("&& tsx scripts/migrate.ts --env=staging &&");
    for (const [env, where] of [
      ["", "--remote"],
      ["staging", "--remote"],
      ["dev", "--local"],
    ] as const) {
      const commands = migrateCommands(env, where);
      expect(
        commands.map((c) => c.slice(0, 4).join(" ")),
        env,
      ).toEqual(["d1 migrations apply DB", "d1 migrations apply DB_SHARD_1", "d1 execute DB_SHARD_1 --env"]);
      for (const c of commands) expect(c).toEqual(expect.arrayContaining(["--env", env, where]));
      expect(commands[2]?.at(-1)).toContain(`seq = ${2 ** 40}`);
    }
  });
});
