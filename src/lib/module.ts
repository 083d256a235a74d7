/**
 * A module is a functional area that registers itself: the paths its operations live under, the
 * permissions they use, its operations (routes + handlers, loaded on demand), its cron jobs and
 * its queue consumers. The app, the permission catalogue, the cron dispatcher and the queue
 * dispatcher are assembled from the registry (src/modules/index.ts), so adding a resource edits
 * its own module, its table plus one registry line (docs/architecture.md "A resource").
 *
 * A module's `index.ts` holds only cheap facts. Its operations (their zod schemas are most of
 * the Worker's start-up time) are imported by `load` on the first request under its `paths`, so
 * an isolate builds the schemas of the areas it serves, not of all ~360 operations.
 */

import type { Hono } from "hono";
import type { Deps } from "../deps";
import type { PermissionDef } from "./access";
import type { AppEnv } from "./context";
import type { FactHandler } from "./facts";
import type { Operation } from "./route";
import type { SchoolEventHandler } from "./school-events";

/**
 * A cron sweep: safe to run twice, late, or not at all for a while. Returns a line for the
 * history. `run` imports what it needs (`(await import("./service")).sweep(deps)`).
 */
export interface Job {
  /** A cron expression of wrangler.toml's `[triggers]` (UTC). */
  cron: string;
  name: string;
  run: (deps: Deps) => Promise<string | undefined>;
}

/** Handles one queue message; throws to have it retried (with backoff, then the dead-letter queue). */
export type Consumer = (deps: Deps, message: Message<unknown>) => Promise<void>;

/** Thrown by a consumer to have its message retried no sooner than `delaySeconds` (a provider's Retry-After). */
export class RetryLater extends Error {
  override name = "RetryLater";
  constructor(
    message: string,
    readonly delaySeconds = 0,
  ) {
    super(message);
  }
}

/** What a module's `load` gives: its operations, and any plain routes. */
export interface ModuleRoutes {
  operations: readonly Operation[];
  /**
   * Routes outside the API contract, mounted as they are: a protocol the Worker speaks for
   * someone else (the development S3 endpoint). Not in the OpenAPI document.
   */
  router?: Hono<AppEnv>;
}

export interface Module {
  name: string;
  /**
   * Where its operations live, as Hono paths (`/api/v1/documents`,
   * `/api/v1/school-configuration/:id/school-holiday-cycle`): a request to one of them, or below,
   * loads the module. test/modules.test.ts checks every operation is under one.
   */
  paths?: readonly string[];
  permissions?: Record<string, PermissionDef>;
  /** Imports the module's operations (a dynamic import: the bundle initialises it on first use). */
  load?: () => Promise<ModuleRoutes>;
  jobs?: readonly Job[];
  /** Consumers by queue name (wrangler.toml `[[queues.consumers]]`). */
  consumers?: Record<string, Consumer>;
  /**
   * What to do with a message of one of its queues that failed for good (by the queue's name; it
   * arrives on `<queue>-dlq`): record the failure. Without one, dead letters are logged and acked.
   */
  deadLetters?: Record<string, Consumer>;
  /**
   * What it decides again when a fact another module owns changes (src/lib/facts.ts): imported on
   * first use like `load`.
   */
  facts?: FactHandler;
  /**
   * What it does when something happened in the school (src/lib/school-events.ts: an exit permission
   * confirmed, a boarding, ...), after the change committed: imported on first use like `load`.
   */
  events?: SchoolEventHandler;
  /** Mounted only when ENVIRONMENT=development (the SMS outbox, the local S3 endpoint). */
  developmentOnly?: boolean;
}

export function defineModule<const M extends Module>(module: M): M {
  return module;
}
