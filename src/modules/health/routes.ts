/**
 * Health check: every dependency reports up or down (any down -> 503), with what was built (commit,
 * dates) and the database's migration level; a database that lacks a migration the code expects is
 * a warning (the report says which, and a log line too).
 */
import { z } from "@hono/zod-openapi";
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
      description: "Every dependency, by name: `database` (D1 or libSQL), `storage` (R2)",
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
    migrations: z
      .object({
        applied: z.number().int().openapi({ description: "Migrations the database records as applied" }),
        latest: z
          .string()
          .nullable()
          .openapi({ example: "0044_exit_permission_rules.sql", description: "The last one applied; null: none" }),
        expected: z
          .string()
          .nullable()
          .openapi({ description: "The last migration the code was built with; null: unknown" }),
        missing: z.boolean().openapi({ description: "Whether the database lacks the migration the code expects" }),
      })
      .nullable()
      .openapi({ description: "The database's migration level; null when the database is down" }),
    warnings: z.array(z.string()).openapi({ description: "What an operator should fix though the service answers" }),
  })
  .openapi("HealthReport");

type ComponentStatus = z.infer<typeof Component>;
type Migrations = NonNullable<z.infer<typeof Report>["migrations"]>;

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
async function migrationLevel(deps: Deps): Promise<Migrations> {
  const expected = expectedMigration();
  try {
    const [row] = await deps.db.all<{ applied: number; latest: string | null; has: number }>(
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
  const [database, storage] = await Promise.all([
    check("database", () => migrationLevel(deps), deadline),
    check("storage", () => deps.storage.head("health-check"), deadline),
  ]).finally(() => clearTimeout(timer));
  const details: Record<string, ComponentStatus> = { database: database.status, storage: storage.status };
  const up = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "up"));
  const down = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "down"));
  const migrations = database.value ?? null;
  const warnings: string[] = [];
  if (migrations?.missing) {
    const warning =
      `The code expects migration ${migrations.expected}, which the database lacks (its last is ${migrations.latest ?? "none"}): ` +
      "apply the migrations (npm run deploy applies them to D1; npm run db:migrate:libsql to libSQL)";
    warnings.push(warning);
    log.warn("database lacks a migration", { expected: migrations.expected, latest: migrations.latest });
  }
  const ok = Object.keys(down).length === 0;
  return {
    status: ok ? ("ok" as const) : ("error" as const),
    info: up,
    error: down,
    details,
    build: buildInfo(),
    migrations,
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
