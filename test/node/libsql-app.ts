/**
 * The app in Node on a local libSQL file built from the real migrations and the demo seed: what
 * test/node/libsql.test.ts checks queries on, and what `serveApp` puts behind a real HTTP port
 * (for scripts that call a running server, like scripts/token.mjs).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { createApp } from "../../src/app";
import { type Config, loadConfig } from "../../src/config";
import { libsqlDb } from "../../src/db/libsql";
import { seedOnOneDatabase } from "../../src/db/seed-split";
import { migrationStatements } from "../../src/db/sql-script";
import type { Deps, QueueProducer } from "../../src/deps";
import { dohResolver } from "../../src/lib/dns";
import { logPush } from "../../src/lib/push";
import { s3Signer } from "../../src/lib/s3";
import { logSms } from "../../src/lib/sms";
import { DEVELOPMENT_VARS, PRODUCTION_VARS } from "../config-vars";
import { diskAssets } from "./disk-assets";

const root = new URL("../../", import.meta.url).pathname;

/** The migrations' file names, in the order they apply. */
export const MIGRATIONS = readdirSync(join(root, "migrations"))
  .filter((f) => f.endsWith(".sql"))
  .sort();

/** `npm run db:migrate:libsql` with these settings (`LIBSQL_URL`, `LIBSQL_SHARD_<n>_URL`...), as an operator runs it. */
export function runLibsqlMigrate(
  settings: Record<string, string>,
): Promise<{ status: number | null; out: string; err: string }> {
  // Asynchronously: the libSQL server it talks to may answer from this process.
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/libsql-migrate.ts"], {
      cwd: root,
      env: { ...process.env, LIBSQL_AUTH_TOKEN: "", ...settings },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("close", (status) => resolve({ status, out, err }));
  });
}

export class Clock {
  current = new Date("2026-11-23T15:00:00.000Z");
  now() {
    return new Date(this.current);
  }
  advance(seconds: number) {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}

/** A queue producer that keeps what it is given. */
export function recordingQueue(): QueueProducer & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    async send(body) {
      sent.push(body);
    },
    async sendBatch(messages) {
      for (const m of messages) sent.push(m.body);
    },
  };
}

/** Applies every migration in order, each file in one batch, the way D1 applies them. */
/**
 * The app's dependencies over a libSQL client, as the libSQL Worker opens it (src/db/libsql.ts):
 * drizzle's libSQL database has the same query builder
 * and batch() as the D1 one (src/db/client.ts). Object storage is not what these tests prove:
 * nothing is stored; queues record what they are sent.
 */
export function libsqlDeps(config: Config, client: Client, clock: Clock): Deps {
  const db = libsqlDb(client);
  return {
    config,
    db,
    clock,
    sms: logSms(db, clock),
    resolver: dohResolver(),
    push: logPush(db, clock),
    storage: { head: async () => null, get: async () => null, put: async () => null },
    signer: s3Signer(config.s3),
    queues: { push: recordingQueue(), bulk: recordingQueue(), webhook: recordingQueue() },
    assets: diskAssets,
  };
}

export async function migrate(client: Client) {
  const dir = join(root, "migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    await client.batch(migrationStatements(readFileSync(join(dir, file), "utf8")), "write");
  }
  await seedDemo(client);
}

/**
 * The demo seed (seed/demo.sql), on a migrated database: every school's rows in this one database,
 * without the seed's shard map rows (which name the D1 deployment's databases: src/db/seed-split.ts).
 */
export async function seedDemo(client: Client) {
  await client.batch(seedOnOneDatabase(readFileSync(join(root, "seed/demo.sql"), "utf8")), "write");
}

/**
 * The app on a fresh seeded libSQL file, served on a free loopback port. `environment` is what
 * the server was started with (the development outbox exists only in development).
 */
export async function serveApp(environment: "development" | "production") {
  const directory = mkdtempSync(join(tmpdir(), "libsql-serve-"));
  const client = createClient({ url: `file:${join(directory, "school.db")}` });
  await client.execute("PRAGMA foreign_keys = ON");
  await migrate(client);
  const config = loadConfig({
    ENVIRONMENT: environment,
    AUTH_SECRET: "served-test-secret-0123456789abcdef0123456789",
    ...(environment === "production" ? PRODUCTION_VARS : DEVELOPMENT_VARS),
  });
  const deps = libsqlDeps(config, client, new Clock());
  const app = createApp({ deps: () => deps, development: environment === "development" });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD" && chunks.length > 0;
    const response = await app.fetch(
      new Request(`http://127.0.0.1${req.url ?? "/"}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      }),
      {} as Env,
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    app,
    deps,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      client.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
