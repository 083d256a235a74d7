/**
 * A module is a functional area that registers itself: its operations (routes + handlers), the
 * permissions they use, its cron jobs and its queue consumers. The app, the permission catalogue,
 * the cron dispatcher and the queue dispatcher are assembled from the registry
 * (src/modules/index.ts), so adding a resource edits its own module plus one registry line.
 * Test fixtures live beside the module (`fixture.ts`), found by the test suites.
 */

import type { Hono } from "hono";
import type { Deps } from "../deps";
import type { PermissionDef } from "./access";
import type { AppEnv } from "./context";
import type { Operation } from "./route";

/** A cron sweep: safe to run twice, late, or not at all for a while. Returns a line for the history. */
export interface Job {
  /** A cron expression of wrangler.toml's `[triggers]` (UTC). */
  cron: string;
  name: string;
  run: (deps: Deps) => Promise<string | undefined>;
}

/** Handles one queue message; throws to have it retried (with backoff, then the dead-letter queue). */
export type Consumer = (deps: Deps, message: Message<unknown>) => Promise<void>;

export interface Module {
  name: string;
  permissions?: Record<string, PermissionDef>;
  operations?: readonly Operation[];
  jobs?: readonly Job[];
  /** Consumers by queue name (wrangler.toml `[[queues.consumers]]`). */
  consumers?: Record<string, Consumer>;
  /**
   * Routes outside the API contract, mounted as they are: a protocol the Worker speaks for
   * someone else (the development S3 endpoint). Not in the OpenAPI document.
   */
  router?: Hono<AppEnv>;
  /** Mounted only when ENVIRONMENT=development (the SMS outbox, the local S3 endpoint). */
  developmentOnly?: boolean;
}

export function defineModule<const M extends Module>(module: M): M {
  return module;
}
