/**
 * Health check: every dependency reports up or down (any down -> 503), with what was built (commit,
 * dates) and the database's migration level; a database that lacks a migration the code expects is
 * a warning (the report says which, and a log line too).
 */
import { z } from "@hono/zod-openapi";
import { type Db, storeOf } from "../../db/client";
import { databases, PLATFORM } from "../../db/shards";
import { sql } from "../../db/sql";
import type { Deps } from "../../deps";
import type { Ctx } from "../../lib/context";
import { errorFields, log } from "../../lib/log";
import { defineRoute, json, operation } from "../../lib/route";
import { buildInfo, expectedMigration } from "./build";

const Component = z.object({
  status: z.enum(["up", "down"]).openapi({ description: "up: it answered; down: it failed or timed out" }),
  message: z.string().optional().openapi({ description: "Why it is down (the failure's class only)" }),
});
const ALL_UP = { database: { status: "up" }, storage: { status: "up" } };
const MigrationLevel = z.object({
  applied: z.number().int().openapi({ description: "Migrations the database records as applied" }),
  latest: z
    .string()
    .nullable()
    .openapi({ example: "0044_exit_permission_rules.sql", description: "The last one applied; null: none" }),
  expected: z.string().nullable().openapi({ description: "The last migration the code was built with; null: unknown" }),
  missing: z.boolean().openapi({ description: "Whether the database lacks the migration the code expects" }),
});

const Report = z
  .object({
    status: z.enum(["ok", "error"]).openapi({ description: "ok when every dependency is up (200), else error (503)" }),
    // Keyed by the dependency's name: examples name them (else the docs page shows `additionalProp1`).
    info: z
      .record(z.string(), Component)
      .nullable()
      .openapi({ description: "The dependencies that are up", example: ALL_UP }),
    error: z
      .record(z.string(), Component)
      .nullable()
      .openapi({ description: "The dependencies that are down (with why)", example: {} }),
    details: z.record(z.string(), Component).openapi({
      description:
        "Every dependency, by name: `database` (the platform database: D1 or libSQL), `database:DB_SHARD_1` ... (each shard), `storage` (R2)",
      example: ALL_UP,
    }),
    build: z
      .object({
        commit: z.string().openapi({
          example: "3f6c1a2e8d4b",
          description: "The commit built (`-dirty`: with changes not committed); unknown without the build's scripts",
        }),
        committedAt: z.string().nullable().openapi({ description: "When that commit was made (ISO 8601)" }),
        builtAt: z.string().nullable().openapi({ description: "When the Worker was built (ISO 8601)" }),
      })
      .openapi({ description: "What this Worker was built from" }),
    migrations: MigrationLevel.nullable().openapi({
      description: "The platform database's migration level; null when the database is down",
    }),
    databases: z
      .array(
        z.object({
          binding: z.string().openapi({
            example: "DB",
            description: "The database's binding: `DB` (the platform's, shard 0), `DB_SHARD_1` ...",
          }),
          store: z.enum(["d1", "libsql"]).openapi({ description: "What the database is" }),
          status: z.enum(["up", "down"]).openapi({ description: "up: it answered; down: it failed or timed out" }),
          migrations: MigrationLevel.nullable().openapi({ description: "Its migration level; null when it is down" }),
        }),
      )
      .openapi({
        description:
          "Every database: the platform's and each shard schools are spread over (docs/scaling.md), each with its migration level",
      }),
    warnings: z.array(z.string()).openapi({ description: "What an operator should fix though the service answers" }),
  })
  .openapi("HealthReport");

type ComponentStatus = z.infer<typeof Component>;
type Migrations = NonNullable<z.infer<typeof Report>["migrations"]>;

/** A database's name among the dependencies: `database` (the platform's), `database:DB_SHARD_1`. */
const databaseName = (binding: string) => (binding === PLATFORM ? "database" : `database:${binding}`);

/** The table wrangler's `d1 migrations apply` (and scripts/libsql-migrate.ts) records applied migrations in. */
const MIGRATIONS_TABLE = "d1_migrations";

/** Whether a failure is "that table does not exist" (a database never migrated). */
function noSuchTable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (/no such table/i.test(e.message)) return true;
  }
  return false;
}

/** The migration level: one read, which also proves the database answers. */
async function migrationLevel(db: Db): Promise<Migrations> {
  const expected = expectedMigration();
  try {
    const [row] = await db.all<{ applied: number; latest: string | null; has: number }>(
      sql`SELECT count(*) AS applied, max(name) AS latest, coalesce(sum(name = ${expected}), 0) AS has FROM ${sql.identifier(MIGRATIONS_TABLE)}`,
    );
    const applied = Number(row?.applied ?? 0);
    return {
      applied,
      latest: row?.latest ?? null,
      expected,
      missing: expected !== null && Number(row?.has ?? 0) === 0,
    };
  } catch (err) {
    if (!noSuchTable(err)) throw err;
    return { applied: 0, latest: null, expected, missing: expected !== null };
  }
}

const TIMEOUT_MS = 3000;

/** Runs a probe until the report's deadline: up, or down with the failure's class only (no SQL or stack leaves). */
async function check<T>(
  name: string,
  probe: () => Promise<T>,
  deadline: Promise<never>,
): Promise<{ status: ComponentStatus; value?: T }> {
  try {
    return { status: { status: "up" }, value: await Promise.race([probe(), deadline]) };
  } catch (err) {
    // The log has what the answer does not: an operator reads why (npx wrangler tail).
    log.error("health check failed", { dependency: name, ...errorFields(err) });
    return {
      status: {
        status: "down",
        message: err instanceof Error && err.message.startsWith("no answer") ? err.message : "check failed",
      },
    };
  }
}

export async function healthReport(deps: Deps) {
  // One timer for every probe: each has until TIMEOUT_MS after the report began.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  // Every database (the platform's, then each shard: docs/scaling.md "Shards"), each its own probe.
  const bound = databases(deps);
  const [storage, ...levels] = await Promise.all([
    check("storage", () => deps.storage.head("health-check"), deadline),
    ...bound.map(([name, db]) => check(databaseName(name), () => migrationLevel(db), deadline)),
  ]).finally(() => clearTimeout(timer));
  const details: Record<string, ComponentStatus> = {};
  bound.forEach(([name], i) => {
    const level = levels[i];
    if (level) details[databaseName(name)] = level.status;
  });
  details.storage = storage.status;
  const up = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "up"));
  const down = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "down"));
  const migrations = levels[0]?.value ?? null;
  const warnings: string[] = [];
  const report = bound.map(([binding], i) => {
    const level = levels[i];
    const status = level?.status.status ?? "down";
    const applied = level?.value ?? null;
    if (applied?.missing) {
      const which = binding === PLATFORM ? "the database" : `the database ${binding}`;
      const warning =
        `The code expects migration ${applied.expected}, which ${which} lacks (its last is ${applied.latest ?? "none"}): ` +
        "apply the migrations (npm run deploy applies them to D1; npm run db:migrate:libsql to libSQL)";
      warnings.push(warning);
      log.warn("database lacks a migration", { database: binding, expected: applied.expected, latest: applied.latest });
    }
    const db = bound[i]?.[1];
    return {
      binding,
      store: db && !deps.config?.libsql ? storeOf(db) : ("libsql" as const),
      status,
      migrations: applied,
    };
  });
  const ok = Object.keys(down).length === 0;
  return {
    status: ok ? ("ok" as const) : ("error" as const),
    info: up,
    error: down,
    details,
    build: buildInfo(),
    migrations,
    databases: report,
    warnings,
  };
}

const health = defineRoute({
  method: "get",
  path: "/api/health",
  tag: "Operations",
  operationId: "getHealth",
  summary: "Health of the service and each dependency, the build and the database's migration level",
  description:
    "200 when every dependency is up, else 503 with the same report. `warnings` says what to fix though the " +
    "service answers: a migration the code expects that the database lacks.",
  access: "public",
  responses: {
    200: json(Report, "Every dependency is up"),
    503: json(Report, "A dependency is down; the report says which"),
  },
});

/** The report, never cached: 200 when every dependency is up, else 503 (the route declares both). */
export async function getHealthReport(ctx: Ctx) {
  const report = await healthReport(ctx.deps);
  return Response.json(report, {
    status: report.status === "ok" ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}

export const getHealth = operation(health, getHealthReport);
