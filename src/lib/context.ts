/**
 * The service context: who acts (a user, a scheduled job or an import), in which school, with
 * which dependencies. Routes, cron sweeps and queue consumers build one and call the same service
 * verbs with it; `tenant()` is the one function that scopes a query to the school.
 */
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { eq, type SQL } from "../db/sql";
import { failureDetail, failureFields } from "../db/transient";
import type { Deps } from "../deps";
import type { PermissionDef } from "./access";
import { log } from "./log";
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

/** What every context carries, whoever acts. */
interface CtxBase {
  deps: Deps;
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
  /**
   * The users holding a role in the current school, when the route's context loader read them
   * from the school's database (a school on a shard: its members filter platform rows, a user's
   * devices, in a second read of the platform's; docs/scaling.md "Shards", group D); else undefined.
   */
  schoolMembers?: readonly number[];
  /** The record an update's `If-Match` named, when it named one (`Unchanged`). */
  unchanged?: Unchanged;
}

/**
 * A signed-in user's request. `S` is its school: a number on a school route (`authorize` resolved
 * it), null on a route of the user's own or of the platform.
 */
export interface UserCtx<S extends number | null = number | null> extends CtxBase {
  actor: { type: "user"; userId: number };
  userId: number;
  schoolId: S;
}

/** A scheduled job or queue consumer: in one school, or across schools (`S` null). */
export interface JobCtx<S extends number | null = number | null> extends CtxBase {
  actor: { type: "job"; name: string };
  userId: null;
  schoolId: S;
}

/** An import (a bulk process) run by the queue consumer in its school, for the user who started it. */
export interface ImportCtx extends CtxBase {
  actor: { type: "import"; bulkProcessId: number; userId: number | null };
  userId: number | null;
  schoolId: number;
}

/**
 * A request nobody signed in to (a public route): no user; a school once the route resolved the
 * record its link names (`{ ...ctx, schoolId: row.schoolId }`).
 */
export interface PublicCtx<S extends number | null = number | null> extends CtxBase {
  actor: { type: "user"; userId: 0 };
  userId: null;
  schoolId: S;
}

/**
 * The service context: any of the above. A verb says what it may assume by the type it takes:
 * `SchoolCtx` (a school, whoever acts), `MemberCtx` (a signed-in user in a school), `UserCtx`
 * (a signed-in user), `Ctx` (anyone, the school unknown). `defineRoute` types a route's verb from
 * the access it declares (src/lib/route.ts `CtxOf`), so the compiler refuses the rest.
 */
export type Ctx = UserCtx | JobCtx | ImportCtx | PublicCtx;

/** A context inside one school: a school route's, a per-school job's or an import's. */
export type SchoolCtx = UserCtx<number> | JobCtx<number> | ImportCtx | PublicCtx<number>;

/** A signed-in user in a school: what a school route's verb gets. */
export type MemberCtx = UserCtx<number>;

/** Whether a school context acts for a signed-in user (not a job or an import acting for the school). */
export const isMember = (ctx: SchoolCtx): ctx is MemberCtx => ctx.userId !== null && ctx.actor.type === "user";

/** The instant of a write, as every timestamp column stores it: the context's clock, not the machine's. */
export const now = (ctx: Ctx): string => ctx.deps.clock.now().toISOString();

/** The users a context acts for today: the caller and whom they are a delegate of; none for a job. */
export const actedUsers = (ctx: Ctx): readonly number[] => ctx.actingFor ?? (ctx.userId === null ? [] : [ctx.userId]);

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
  const base = { deps, requestId: requestId ?? null };
  if (!principal)
    return {
      ...base,
      actor: { type: "user", userId: 0 },
      userId: null,
      schoolId: null,
      isSuperAdmin: false,
      can: () => false,
    };
  const { userId, schoolId, isSuperAdmin } = principal;
  return { ...base, actor: { type: "user", userId }, userId, schoolId, isSuperAdmin, can: (p) => principal.can(p) };
}

const everything = () => true;

/** The context of a scheduled job: across schools unless `schoolId` is given. */
export function jobCtx(deps: Deps, name: string): JobCtx<null>;
export function jobCtx(deps: Deps, name: string, schoolId: number): JobCtx<number>;
export function jobCtx(deps: Deps, name: string, schoolId: number | null = null): JobCtx {
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

/**
 * A job's work school by school (or row by row, each of a school), each in the job's context in
 * that school: one school's failure (its database unavailable, the school paused for a move, a
 * fault of its data) is logged and the others go on. The failures are thrown together at the end,
 * so the run is recorded failed, naming the schools the next run will do.
 */
export async function forEachSchool<T extends { schoolId: number }>(
  deps: Deps,
  name: string,
  items: readonly T[],
  work: (ctx: JobCtx<number>, item: T) => Promise<void>,
): Promise<void> {
  const failed: string[] = [];
  for (const item of items) {
    try {
      await work(jobCtx(deps, name, item.schoolId), item);
    } catch (err) {
      log.error("a job's work in a school failed; the others go on", {
        job: name,
        schoolId: item.schoolId,
        ...failureFields(err),
      });
      failed.push(`school ${item.schoolId} (${failureDetail(err)})`);
    }
  }
  if (failed.length > 0) throw new Error(`not done for ${failed.join("; ")}: the next run does it`);
}

/** The context of an import (a bulk process) run by the queue consumer in its school. */
export function importCtx(deps: Deps, bulkProcessId: number, schoolId: number, userId: number | null): ImportCtx {
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

/** The condition that keeps a query inside the current school: the only hand-off of `school_id`. */
export function tenant(ctx: SchoolCtx, table: { schoolId: SQLiteColumn }): SQL {
  return eq(table.schoolId, ctx.schoolId);
}
