/**
 * Shards on libSQL (docs/scaling.md "libSQL shards"): the libSQL Worker (src/index.libsql.ts, here
 * on Node's fetch) with its platform database at `LIBSQL_URL` and shard 1 at `LIBSQL_SHARD_1_URL`,
 * two real libSQL files each behind a local libSQL server (test/node/hrana-server.ts), migrated by
 * `npm run db:migrate:libsql` (scripts/libsql-migrate.ts). A school the
 * shard map puts on the shard has its rows there and only there; health names each database's
 * store and migration level; a shard that lacks a migration is a warning, one that cannot be
 * reached makes health 503 naming it, a shard URL the Worker cannot use is the configuration's 503.
 */

import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrateAll } from "../../scripts/libsql-migrate";
import { forgetShards, ID_SPAN } from "../../src/db/shards";
import worker from "../../src/index.libsql";
import { jobsFor } from "../../src/jobs/scheduled";
import { signAccessToken } from "../../src/lib/tokens";
import { DEVELOPMENT_VARS } from "../config-vars";
import { diskAssets } from "./disk-assets";
import { startHranaServer } from "./hrana-server";
import { MIGRATIONS, runLibsqlMigrate, seedDemo } from "./libsql-app";

const ROOT = new URL("../../", import.meta.url).pathname;
const SECRET = "libsql-shards-secret-0123456789abcdef0123456789";
/** The Worker's clock (development's `DEV_CLOCK`): tokens are signed at the same instant. */
const NOW = "2026-11-23T15:00:00.000Z";
const NORTH = 1;
const SHARD = "DB_SHARD_1";

let directory: string;
const clients: Client[] = [];
const servers: Awaited<ReturnType<typeof startHranaServer>>[] = [];
let platform: Client;
let shard: Client;
let platformUrl: string;
let shardUrl: string;
/** What `npm run db:migrate:libsql` did to the two databases. */
let migrated: { status: number | null; out: string; err: string };

/** A libSQL file (integers kept apart from floats, as the server needs) and a libSQL server in front of it. */
async function served(name: string): Promise<{ client: Client; url: string }> {
  const client = createClient({ url: `file:${join(directory, name)}`, intMode: "bigint" });
  clients.push(client);
  const server = await startHranaServer(client);
  servers.push(server);
  return { client, url: server.url };
}

beforeAll(async () => {
  // What a build defines (scripts/build-info.ts), as the workers project defines it: the last migration.
  vi.stubGlobal("__LATEST_MIGRATION__", MIGRATIONS.at(-1));
  directory = mkdtempSync(join(tmpdir(), "libsql-shards-"));
  // Both databases migrated by `npm run db:migrate:libsql` with LIBSQL_SHARD_1_URL set.
  migrated = await runLibsqlMigrate({
    LIBSQL_URL: `file:${join(directory, "platform.db")}`,
    LIBSQL_SHARD_1_URL: `file:${join(directory, "shard-1.db")}`,
  });
  ({ client: platform, url: platformUrl } = await served("platform.db"));
  ({ client: shard, url: shardUrl } = await served("shard-1.db"));
  await seedDemo(platform);
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  for (const client of clients) client.close();
  forgetShards();
  vi.unstubAllGlobals();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** The Worker's env: development settings, the platform at LIBSQL_URL and the shard settings given. */
function workerEnv(shards: Record<string, string>): Env {
  return {
    ...DEVELOPMENT_VARS,
    ENVIRONMENT: "development",
    AUTH_SECRET: SECRET,
    DEV_CLOCK: NOW,
    LIBSQL_URL: platformUrl,
    ...shards,
    DOCUMENTS: { head: async () => null },
    ASSETS: diskAssets,
  } as unknown as Env;
}

const executionContext = {
  waitUntil: () => {},
  passThroughOnException: () => {},
  props: {},
} as unknown as ExecutionContext;

async function call(
  env: Env,
  path: string,
  init: { method?: string; school?: number; body?: unknown; token?: string } = {},
) {
  const headers = new Headers();
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  if (init.school !== undefined) headers.set("x-school-id", String(init.school));
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const request = new Request(`http://localhost${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, env, executionContext);
}

const superAdmin = () => signAccessToken(SECRET, new Date(NOW), { userId: 1, isSuperAdmin: true, schools: {} });

/** Every table of a database with a `school_id` column. */
async function schoolTables(db: Client): Promise<string[]> {
  const rows = await db.execute(
    `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
     WHERE m.type = 'table' AND c.name = 'school_id' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
  );
  return rows.rows.map((r) => String(r.name));
}

/** How many rows of each table of `db` belong to `school` (tables with none left out). */
async function rowsOf(db: Client, school: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await schoolTables(db)) {
    // The shard map is the platform's (a row about the school, in DB).
    if (table === "school_shard") continue;
    const row = await db.execute({ sql: `SELECT count(*) AS n FROM "${table}" WHERE school_id = ?`, args: [school] });
    const n = Number(row.rows[0]?.n ?? 0);
    if (n > 0) counts[table] = n;
  }
  return counts;
}

/** Each database's health entry, as the report lists them. */
type Health = {
  status: string;
  details: Record<string, { status: string }>;
  error: Record<string, { status: string }>;
  databases: {
    binding: string;
    store: string;
    status: string;
    migrations: { applied: number; latest: string; missing: boolean } | null;
  }[];
  warnings: string[];
};

describe("libSQL shards", () => {
  it("migrates every libSQL database the environment names, each shard's ids in its range, and refuses a bad shard setting", async () => {
    expect(migrated.status, migrated.err).toBe(0);
    const all = `Migrations: ${MIGRATIONS.length} applied; the database has all ${MIGRATIONS.length} (last ${MIGRATIONS.at(-1)})`;
    expect(migrated.out).toContain(`DB: ${all}`);
    expect(migrated.out).toContain(`${SHARD}: ${all}`);
    const levels = async (db: Client) =>
      (await db.execute("SELECT name FROM d1_migrations ORDER BY id")).rows.map((r) => r.name);
    expect(await levels(platform)).toEqual(MIGRATIONS);
    expect(await levels(shard)).toEqual(MIGRATIONS);
    const floor = async () => Number((await shard.execute("SELECT min(seq) AS low FROM sqlite_sequence")).rows[0]?.low);
    expect(await floor()).toBeGreaterThanOrEqual(ID_SPAN);
    // Run again: nothing to apply, the range unchanged.
    const again = await migrateAll(
      [
        { binding: "DB", url: `file:${join(directory, "platform.db")}` },
        { binding: SHARD, url: `file:${join(directory, "shard-1.db")}` },
      ],
      () => {},
    );
    expect(again[SHARD]?.applied).toEqual([]);
    expect(await floor()).toBeGreaterThanOrEqual(ID_SPAN);
    // A setting that names no shard: nothing migrated, the setting named.
    const refused = await runLibsqlMigrate({
      LIBSQL_URL: `file:${join(directory, "platform.db")}`,
      LIBSQL_SHARD_0_URL: `file:${join(directory, "zero.db")}`,
    });
    expect(refused.status).toBe(2);
    expect(refused.err).toMatch(/LIBSQL_SHARD_0_URL: expected LIBSQL_SHARD_<n>_URL/);
  }, 60_000);

  it("writes a school's rows to the shard the map names and reads them from there only", async () => {
    const env = workerEnv({ LIBSQL_SHARD_1_URL: shardUrl });
    const token = await superAdmin();
    const created = await call(env, "/api/v1/school", {
      method: "POST",
      token,
      body: { name: "Turso Shard School", timeZone: "America/Mexico_City", levels: ["elementary"] },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const school = ((await created.json()) as { id: number }).id;
    // Placed on the least-loaded database: the shard, which holds no school (the demo's are on the
    // platform's); its map row in the platform's database, its anchor row in the shard.
    const placed = await platform.execute({
      sql: "SELECT binding FROM school_shard WHERE school_id = ?",
      args: [school],
    });
    expect(placed.rows[0]?.binding).toBe(SHARD);
    const anchor = await shard.execute({ sql: "SELECT name FROM school WHERE id = ?", args: [school] });
    expect(anchor.rows[0]?.name).toBe("Turso Shard School");

    const family = async (on: number, name: string) => {
      const res = await call(env, "/api/v1/family", {
        method: "POST",
        token,
        school: on,
        body: { familyNumber: `LS-${on}-${name}`, name },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    const theirs = await family(school, "Sharded");
    const ours = await family(NORTH, "Platform");
    expect(theirs).toBeGreaterThan(ID_SPAN);
    expect(ours).toBeLessThan(ID_SPAN);

    // Each school's rows in its own file, and nowhere else.
    expect(await rowsOf(shard, school)).toMatchObject({ family: 1, audit_log: 1 });
    expect(await rowsOf(platform, school)).toEqual({});
    expect(await rowsOf(shard, NORTH)).toEqual({});
    const north = await platform.execute({ sql: "SELECT id FROM family WHERE id = ?", args: [ours] });
    expect(north.rows).toHaveLength(1);

    // Read back through the Worker: each from its own database; the other school's id is a 404.
    const get = (on: number, id: number) => call(env, `/api/v1/family/${id}`, { token, school: on });
    expect((await get(school, theirs)).status).toBe(200);
    expect((await get(NORTH, ours)).status).toBe(200);
    expect((await get(NORTH, theirs)).status).toBe(404);
    expect((await get(school, ours)).status).toBe(404);
    const list = await call(env, "/api/v1/family", { token, school });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((f) => f.name)).toEqual(["Sharded"]);
  });

  it("refuses to move a school (422): the move's copy is D1's, nothing paused or written", async () => {
    const env = workerEnv({ LIBSQL_SHARD_1_URL: shardUrl });
    const res = await call(env, `/api/v1/school/${NORTH}/move`, {
      method: "POST",
      token: await superAdmin(),
      body: { to: SHARD },
    });
    expect(res.status, await res.clone().text()).toBe(422);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      "Moving a school is for D1 databases; this deployment's are libSQL",
    );
    const map = await platform.execute({
      sql: "SELECT binding, paused_until FROM school_shard WHERE school_id = ?",
      args: [NORTH],
    });
    expect(map.rows[0]?.paused_until ?? null).toBeNull();
  });

  it("names each database's store and migration level in health", async () => {
    const res = await call(workerEnv({ LIBSQL_SHARD_1_URL: shardUrl }), "/api/health");
    const report = (await res.json()) as Health;
    expect(res.status, JSON.stringify(report)).toBe(200);
    const level = { applied: MIGRATIONS.length, latest: MIGRATIONS.at(-1), missing: false };
    expect(report.databases).toEqual([
      expect.objectContaining({
        binding: "DB",
        store: "libsql",
        status: "up",
        migrations: expect.objectContaining(level),
      }),
      expect.objectContaining({
        binding: SHARD,
        store: "libsql",
        status: "up",
        migrations: expect.objectContaining(level),
      }),
    ]);
    expect(report.details).toMatchObject({ database: { status: "up" }, [`database:${SHARD}`]: { status: "up" } });
    expect(report.warnings).toEqual([]);
  });

  it("warns of a shard that lacks a migration", async () => {
    // A shard migrated up to the last migration but one.
    const older = join(directory, "older-migrations");
    mkdirSync(older);
    for (const file of MIGRATIONS.slice(0, -1)) symlinkSync(join(ROOT, "migrations", file), join(older, file));
    await migrateAll([{ binding: SHARD, url: `file:${join(directory, "behind.db")}` }], () => {}, older);
    const behind = await served("behind.db");
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const res = await call(workerEnv({ LIBSQL_SHARD_1_URL: behind.url }), "/api/health");
      const report = (await res.json()) as Health;
      expect(res.status, JSON.stringify(report)).toBe(200);
      expect(report.databases[1]).toMatchObject({
        binding: SHARD,
        store: "libsql",
        status: "up",
        migrations: { applied: MIGRATIONS.length - 1, latest: MIGRATIONS.at(-2), missing: true },
      });
      expect(report.warnings).toEqual([
        expect.stringMatching(new RegExp(`expects migration ${MIGRATIONS.at(-1)}, which the database ${SHARD} lacks`)),
      ]);
    } finally {
      warned.mockRestore();
    }
  });

  it("answers health 503 naming a shard that cannot be reached", async () => {
    // A port nothing listens on: the server in front of a file, closed.
    const gone = await served("gone.db");
    await gone.client.execute("SELECT 1");
    await servers.pop()?.close();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await call(workerEnv({ LIBSQL_SHARD_1_URL: gone.url }), "/api/health");
      const report = (await res.json()) as Health;
      expect(res.status, JSON.stringify(report)).toBe(503);
      expect(report.status).toBe("error");
      expect(Object.keys(report.error)).toEqual([`database:${SHARD}`]);
      expect(report.details.database).toEqual({ status: "up" });
      expect(report.databases[1]).toMatchObject({ binding: SHARD, store: "libsql", status: "down", migrations: null });
    } finally {
      logged.mockRestore();
    }
  });

  it("runs a cron run's jobs once per libSQL database, each recorded in that database's history", async () => {
    const cron = "*/5 * * * *";
    const count = async (db: Client) =>
      Number(
        (await db.execute({ sql: "SELECT count(*) AS n FROM cron_history WHERE cron = ?", args: [cron] })).rows[0]?.n,
      );
    const [before, beforeShard] = [await count(platform), await count(shard)];
    const waiting: Promise<unknown>[] = [];
    const ctx = { ...executionContext, waitUntil: (p: Promise<unknown>) => waiting.push(p) } as ExecutionContext;
    await worker.scheduled(
      { cron, scheduledTime: Date.parse(NOW), noRetry: () => {} },
      workerEnv({ LIBSQL_SHARD_1_URL: shardUrl }),
      ctx,
    );
    await Promise.all(waiting);
    const jobs = jobsFor(cron).length;
    expect(jobs).toBeGreaterThan(0);
    expect(await count(platform)).toBe(before + jobs);
    expect(await count(shard)).toBe(beforeShard + jobs);
    const failed = await shard.execute("SELECT job, detail FROM cron_history WHERE status <> 'completed'");
    expect(failed.rows).toEqual([]);
  });

  it("names the shard's setting when its server is no libSQL server", async () => {
    const other = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not found</h1>");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const env = workerEnv({ LIBSQL_SHARD_1_URL: `http://127.0.0.1:${(other.address() as AddressInfo).port}` });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      // The demo school 1 (on DB) answers; the school on the shard meets the setting.
      const onShard = (
        await platform.execute({ sql: "SELECT school_id FROM school_shard WHERE binding = ?", args: [SHARD] })
      ).rows[0]?.school_id;
      expect(onShard).toBeDefined();
      const token = await superAdmin();
      expect((await call(env, "/api/v1/family", { token, school: NORTH })).status).toBe(200);
      const res = await call(env, "/api/v1/family", { token, school: Number(onShard) });
      expect(res.status).toBe(503);
      const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({
          message: "configuration refused",
          settings: ["LIBSQL_SHARD_1_URL"],
          error: "ConfigError",
        }),
      );
    } finally {
      logged.mockRestore();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it("refuses a shard URL the Worker cannot use with the configuration's 503 and a log line naming it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const url of ["file:shard-1.db", "not a url"]) {
        logged.mockClear();
        const res = await call(workerEnv({ LIBSQL_SHARD_1_URL: url }), "/api/v1/version?platform=ios&version=1.0.0");
        expect(res.status, url).toBe(503);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/not configured correctly/);
        const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>);
        expect(lines).toContainEqual(
          expect.objectContaining({ message: "configuration refused", settings: ["LIBSQL_SHARD_1_URL"] }),
        );
      }
    } finally {
      logged.mockRestore();
    }
  });
});
