/** Health check: every dependency reports up or down; any down -> 503. */
import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import type { Ctx } from "../../lib/context";
import { defineRoute, json, operation } from "../../lib/route";

const Component = z.object({
  status: z.enum(["up", "down"]).openapi({ description: "up: it answered; down: it failed or timed out" }),
  message: z.string().optional().openapi({ description: "Why it is down (the failure's class only)" }),
});
const Report = z
  .object({
    status: z.enum(["ok", "error"]).openapi({ description: "ok when every dependency is up (200), else error (503)" }),
    info: z.record(z.string(), Component).nullable().openapi({ description: "The dependencies that are up" }),
    error: z.record(z.string(), Component).nullable().openapi({ description: "The dependencies that are down" }),
    details: z.record(z.string(), Component).openapi({ description: "Every dependency, by name" }),
  })
  .openapi("HealthReport");

type ComponentStatus = z.infer<typeof Component>;

const CHECKS: Record<string, (deps: Deps) => Promise<unknown>> = {
  database: (deps) => deps.db.run(sql`select 1`),
  storage: (deps) => deps.storage.head("health-check"),
};

const TIMEOUT_MS = 3000;

async function check(deps: Deps, probe: (deps: Deps) => Promise<unknown>): Promise<ComponentStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      probe(deps),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
    return { status: "up" };
  } catch (err) {
    // The message names the failure class only; no SQL or stack leaves the service.
    return {
      status: "down",
      message: err instanceof Error && err.message.startsWith("no answer") ? err.message : "check failed",
    };
  } finally {
    clearTimeout(timer);
  }
}

export async function healthReport(deps: Deps) {
  const results = await Promise.all(
    Object.entries(CHECKS).map(async ([name, probe]) => [name, await check(deps, probe)] as const),
  );
  const details: Record<string, ComponentStatus> = Object.fromEntries(results);
  const up = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "up"));
  const down = Object.fromEntries(Object.entries(details).filter(([, v]) => v.status === "down"));
  const ok = Object.keys(down).length === 0;
  return { status: ok ? ("ok" as const) : ("error" as const), info: up, error: down, details };
}

const health = defineRoute({
  method: "get",
  path: "/api/health",
  tag: "Operations",
  operationId: "getHealth",
  summary: "Health of the service and each dependency",
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
