/**
 * The service context: who acts (a user, a scheduled job or an import), in which school, with
 * which dependencies. Routes, cron sweeps and queue consumers build one and call the same service
 * verbs with it; `tenant()` is the one function that scopes a query to the school.
 */
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { eq, type SQL } from "../db/sql";
import type { Deps } from "../deps";
import type { PermissionDef } from "./access";
import type { Message } from "./message";

/**
 * The record an update's `If-Match` named, as it was when the request checked it (src/lib/route.ts):
 * each write batch of the request first checks that row's `updated_at` is still the one read, and
 * is a 412 otherwise (src/db/write.ts `commit`). Spent by the first batch that commits.
 */
export interface Unchanged {
  table: SQLiteTable & { id: SQLiteColumn; updatedAt: SQLiteColumn };
  id: number;
  updatedAt: string;
  /** The 412's detail. */
  message: Message;
  /** Set once a write batch of the request committed: the request's own change is not a stale read. */
  spent: boolean;
}

/** Who is calling, resolved once per request by the `authorize` middleware. */
export interface Principal {
  userId: number;
  isSuperAdmin: boolean;
  /** The current school, when the route is school-scoped. */
  schoolId: number | null;
  /** Whether the caller holds a permission in the current school. */
  can(permission: PermissionDef): boolean;
}

/** Who a change is attributed to in the audit trail. */
export type Actor =
  | { type: "user"; userId: number }
  | { type: "job"; name: string }
  | { type: "import"; bulkProcessId: number; userId: number | null };

export interface Ctx {
  deps: Deps;
  actor: Actor;
  /** The current school; null for platform work (the permission catalogue, cross-school sweeps). */
  schoolId: number | null;
  /** The signed-in user, or null for a job. */
  userId: number | null;
  isSuperAdmin: boolean;
  /**
   * Whether the actor holds a permission in the current school. Jobs and imports run the school's
   * own processes and hold every permission; what they may touch is decided by the code that
   * starts them.
   */
  can(permission: PermissionDef): boolean;
  requestId: string | null;
  /**
   * The users the caller acts for in the current school today (themself and the parents whose
   * valid delegate they are), when the route's context loader read them; else undefined.
   */
  actingFor?: readonly number[];
  /** The record an update's `If-Match` named, when it named one (`Unchanged`). */
  unchanged?: Unchanged;
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    deps: Deps;
    principal: Principal;
  };
};

/** The context of a request (after `authorize`; public routes have an anonymous principal). */
export function ctxOf(c: { var: { deps: Deps; principal?: Principal; requestId?: string } }): Ctx {
  const { deps, principal, requestId } = c.var;
  const userId = principal?.userId ?? null;
  return {
    deps,
    actor: { type: "user", userId: userId ?? 0 },
    schoolId: principal?.schoolId ?? null,
    userId,
    isSuperAdmin: principal?.isSuperAdmin ?? false,
    can: (p) => principal?.can(p) ?? false,
    requestId: requestId ?? null,
  };
}

const everything = () => true;

/** The context of a scheduled job: across schools unless `schoolId` is given. */
export function jobCtx(deps: Deps, name: string, schoolId: number | null = null): Ctx {
  return {
    deps,
    actor: { type: "job", name },
    schoolId,
    userId: null,
    isSuperAdmin: false,
    can: everything,
    requestId: null,
  };
}

/** The context of an import (a bulk process) run by the queue consumer in its school. */
export function importCtx(deps: Deps, bulkProcessId: number, schoolId: number, userId: number | null): Ctx {
  return {
    deps,
    actor: { type: "import", bulkProcessId, userId },
    schoolId,
    userId,
    isSuperAdmin: false,
    can: everything,
    requestId: null,
  };
}

/**
 * The current school of school-scoped code. `authorize` always resolves one for a school route,
 * so a null here is a programming error (a platform route calling school code), not a user's.
 */
export function schoolOf(ctx: { schoolId: number | null }): number {
  if (ctx.schoolId === null) throw new Error("school-scoped code called without a current school");
  return ctx.schoolId;
}

/** The condition that keeps a query inside the current school: the only hand-off of `school_id`. */
export function tenant(ctx: { schoolId: number | null }, table: { schoolId: SQLiteColumn }): SQL {
  return eq(table.schoolId, schoolOf(ctx));
}
