/**
 * The libSQL store from an empty database to a healthy service, as the README's Deploy section does
 * it: `npm run db:migrate:libsql` (scripts/libsql-migrate.ts) against a local libSQL server (the
 * Hrana protocol over HTTP, test/node/hrana-server.ts), then the libSQL Worker (src/index.libsql.ts,
 * here on Node's fetch) answers `/api/health` with the database's migration level. A migration that
 * fails leaves nothing of itself; a URL that is no libSQL server is the configuration's 503 with a
 * log line naming the setting, not a 500.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrate } from "../../scripts/libsql-migrate";
import worker from "../../src/index.libsql";
import { DEVELOPMENT_VARS } from "../config-vars";
import { diskAssets } from "./disk-assets";
import { startHranaServer } from "./hrana-server";
import { MIGRATIONS, runLibsqlMigrate } from "./libsql-app";

let directory: string;
let client: Client;
let server: Awaited<ReturnType<typeof startHranaServer>>;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "libsql-migrate-"));
  client = createClient({ url: `file:${join(directory, "empty.db")}` });
  server = await startHranaServer(client);
});

afterAll(async () => {
  await server?.close();
  client?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** The libSQL Worker's answer to a request, with the development settings and this LIBSQL_URL. */
async function fetchWorker(path: string, url: string, init?: RequestInit) {
  const env = {
    ...DEVELOPMENT_VARS,
    ENVIRONMENT: "development",
    AUTH_SECRET: "libsql-secret-0123456789abcdef0123456789",
    LIBSQL_URL: url,
    // What the health check reads of object storage: nothing stored, and it answers.
    DOCUMENTS: { head: async () => null },
    // The static assets as the build leaves them in public/ (the catalogue, the phone metadata).
    ASSETS: diskAssets,
  } as unknown as Env;
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  return worker.fetch(
    new Request(`http://localhost${path}`, init) as Request<unknown, IncomingRequestCfProperties>,
    env,
    ctx,
  );
}

describe("libSQL from an empty database to healthy", () => {
  it("applies every migration with one command, and nothing the second time", async () => {
    const first = await runLibsqlMigrate({ LIBSQL_URL: server.url });
    expect(first.status, first.err).toBe(0);
    expect(first.out).toContain(`Migrations: ${MIGRATIONS.length} applied; the database has all ${MIGRATIONS.length}`);
    const again = await runLibsqlMigrate({ LIBSQL_URL: server.url });
    expect(again.status, again.err).toBe(0);
    expect(again.out).toContain("Migrations: none to apply");
  }, 120_000);

  it("records them as wrangler records D1's, so the Worker's health reads the level", async () => {
    const rows = await client.execute("SELECT name FROM d1_migrations ORDER BY id");
    expect(rows.rows.map((r) => r.name)).toEqual(MIGRATIONS);
    const res = await fetchWorker("/api/health", server.url);
    const report = (await res.json()) as { status: string; migrations: unknown; details: unknown };
    expect(res.status, JSON.stringify(report)).toBe(200);
    expect(report.status).toBe("ok");
    expect(report.migrations).toMatchObject({ applied: MIGRATIONS.length, latest: MIGRATIONS.at(-1) });
    // A route on the migrated schema answers from it (the app version needs no sign-in).
    const version = await fetchWorker("/api/v1/version?platform=ios&version=1.0.0", server.url);
    expect(version.status).toBe(200);
  });

  it("leaves nothing of a migration that fails, and names it", async () => {
    const migrations = mkdtempSync(join(directory, "migrations-"));
    writeFileSync(join(migrations, "0001_ok.sql"), "CREATE TABLE kept (id integer primary key);");
    writeFileSync(
      join(migrations, "0002_bad.sql"),
      "CREATE TABLE half (id integer primary key);\n--> statement-breakpoint\nINSERT INTO nowhere VALUES (1);",
    );
    const db = createClient({ url: `file:${join(directory, "partial.db")}` });
    try {
      await expect(migrate(`file:${join(directory, "partial.db")}`, undefined, migrations)).rejects.toThrow(
        /migration 0002_bad\.sql failed, nothing of it applied/,
      );
      const tables = (await db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")).rows.map((r) => r.name);
      expect(tables).toContain("kept");
      expect(tables).not.toContain("half");
      const applied = (await db.execute("SELECT name FROM d1_migrations")).rows.map((r) => r.name);
      expect(applied).toEqual(["0001_ok.sql"]);
    } finally {
      db.close();
    }
  });

  it("answers a LIBSQL_URL that is no libSQL server with the configuration's 503 and a log line, not a 500", async () => {
    const other = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not found</h1>");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      // A route that reads the database meets the setting.
      const signIn = await fetchWorker("/api/v1/auth/verify-phone-number", url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ phone: "+15550000002" }),
      });
      expect(signIn.status).toBe(503);
      expect(((await signIn.json()) as { detail: string }).detail).toMatch(/not configured correctly/);
      const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({ message: "configuration refused", settings: ["LIBSQL_URL"], error: "ConfigError" }),
      );
    } finally {
      logged.mockRestore();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
