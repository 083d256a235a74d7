/**
 * The Worker entry: `fetch` serves the API, `scheduled` runs the cron sweeps, `queue` consumes
 * push and bulk messages. Dependencies are built from the bindings here and nowhere else.
 * This is the D1 Worker; src/index.libsql.ts is the same Worker with a libSQL client bundled.
 */
import { type App, createApp } from "./app";
import { ConfigError, type LibsqlDatabase, loadConfig, servesDevelopmentRoutes } from "./config";
import { type Db, d1, type OpenLibsql } from "./db/client";
import { type Clock, type Deps, systemClock } from "./deps";
import { handleQueue } from "./jobs/queue";
import { runScheduled } from "./jobs/scheduled";
import { dohResolver } from "./lib/dns";
import { loadIsolateData } from "./lib/isolate-data";
import { pushFromConfig } from "./lib/push";
import { s3Signer } from "./lib/s3";
import { smsFromConfig } from "./lib/sms";
import { dismissalLiveObject } from "./modules/dismissal/api";

// A setting this Worker cannot serve: it refuses to (503), and the log says what to deploy.
const noLibsql: OpenLibsql = () => {
  throw new ConfigError(
    "invalid configuration: LIBSQL_URL is set, but this Worker was built without a libSQL client: deploy src/index.libsql.ts (npm run deploy:libsql)",
    ["LIBSQL_URL"],
  );
};

/** Opens a libSQL database; a URL its client refuses is a setting the Worker cannot serve. */
async function openStore(open: OpenLibsql, database: Omit<LibsqlDatabase, "binding">): Promise<Db> {
  const { url, authToken, settings } = database;
  try {
    return await open(url, authToken, settings);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `invalid configuration: ${settings.url} is not a URL the libSQL client accepts`,
      [settings.url],
      { cause: err },
    );
  }
}

/**
 * Every libSQL database of the Worker, by the shard map's names: `DB` (the platform's, at
 * `LIBSQL_URL`) and each `DB_SHARD_<n>` at `LIBSQL_SHARD_<n>_URL` (docs/scaling.md "libSQL
 * shards"); undefined when no shard is set (one database, no map to read).
 */
export async function libsqlShards(
  open: OpenLibsql,
  shards: readonly LibsqlDatabase[],
  platform: Db,
): Promise<Record<string, Db> | undefined> {
  if (shards.length === 0) return undefined;
  const opened = await Promise.all(shards.map(async (shard) => [shard.binding, await openStore(open, shard)] as const));
  return { DB: platform, ...Object.fromEntries(opened) };
}

/**
 * The Worker's clock: the machine's; in development, `DEV_CLOCK` (an instant, `--var
 * DEV_CLOCK:2026-11-23T20:40:00Z`) starts it there and lets it run, so a browser test or a demo
 * walk sees the demo's afternoon whatever the day (test/node/board-page.test.ts).
 */
function clockOf(env: Env): Clock {
  const start = Reflect.get(env, "DEV_CLOCK");
  if (!servesDevelopmentRoutes(env) || typeof start !== "string" || Number.isNaN(Date.parse(start))) {
    return systemClock;
  }
  const offset = Date.parse(start) - Date.now();
  return { now: () => new Date(Date.now() + offset) };
}

/**
 * Every D1 database the Worker is bound to, by binding name: `DB` (the platform's, shard 0) and
 * each `DB_SHARD_<n>` (docs/scaling.md "Shards"); another shard is a binding added in wrangler.toml.
 */
export function d1Shards(env: object, platform: Db): Record<string, Db> {
  const shards: Record<string, Db> = { DB: platform };
  for (const [name, value] of Object.entries(env)) {
    if (/^DB_SHARD_\d+$/.test(name) && isD1(value)) shards[name] = d1(value);
  }
  return shards;
}

/** `NEW_SCHOOLS_ON` may name only databases this Worker has (a typo would place no school: refused at the start). */
export function unboundNewSchoolDatabases(names: readonly string[], shards: Record<string, Db> | undefined) {
  const unbound = names.filter((name) => !(name in (shards ?? { DB: true })));
  if (unbound.length > 0) {
    throw new ConfigError(
      `invalid configuration: NEW_SCHOOLS_ON names ${unbound.join(", ")}, not a database of this Worker (bind it, or leave it out)`,
      ["NEW_SCHOOLS_ON"],
    );
  }
}

const isD1 = (value: unknown): value is D1Database =>
  typeof value === "object" && value !== null && "prepare" in value && "batch" in value && "withSession" in value;

/** The dependencies of the Worker runtime from its env, memoised per env object (they hold no request state). */
function depsFactory(openLibsql: OpenLibsql) {
  const depsCache = new WeakMap<object, Promise<Deps>>();

  /** The dependencies of the Worker runtime (memoised per env object: they hold no request state). */
  function depsFromEnv(env: Env): Promise<Deps> {
    let deps = depsCache.get(env);
    if (!deps) {
      deps = (async () => {
        const config = loadConfig(env);
        // The catalogue and phone metadata before any work: a job renders messages and reads phone numbers too.
        await loadIsolateData(env.ASSETS);
        const db: Db = config.libsql
          ? await openStore(openLibsql, {
              ...config.libsql,
              settings: { url: "LIBSQL_URL", token: "LIBSQL_AUTH_TOKEN" },
            })
          : d1(env.DB);
        const clock = clockOf(env);
        const shards = config.libsql ? await libsqlShards(openLibsql, config.libsql.shards, db) : d1Shards(env, db);
        unboundNewSchoolDatabases(config.newSchoolsOn, shards);
        return {
          config,
          db,
          shards,
          clock,
          sms: smsFromConfig(config, db, clock),
          push: pushFromConfig(config, db, clock),
          storage: env.DOCUMENTS,
          signer: s3Signer(config.s3),
          queues: { push: env.PUSH_QUEUE, bulk: env.BULK_QUEUE, webhook: env.WEBHOOK_QUEUE },
          assets: env.ASSETS,
          live: env.DISMISSAL_LIVE,
          resolver: dohResolver(),
        };
      })();
      deps.catch(() => depsCache.delete(env));
      depsCache.set(env, deps);
    }
    return deps;
  }
  return depsFromEnv;
}

/** The live board's Durable Object class (wrangler.toml `DISMISSAL_LIVE`), on the same dependencies as the Worker. */
export function createLiveObject(openLibsql: OpenLibsql = noLibsql) {
  return dismissalLiveObject(depsFactory(openLibsql));
}

/** The Worker; `openLibsql` opens the store when `LIBSQL_URL` is set (given by src/index.libsql.ts). */
export function createWorker(openLibsql: OpenLibsql = noLibsql) {
  const depsFromEnv = depsFactory(openLibsql);

  /** One app with the development routes, one without (an invalid env: without, and every request 503s). */
  const apps = new Map<boolean, App>();

  return {
    fetch(request, env, ctx) {
      const development = servesDevelopmentRoutes(env);
      let app = apps.get(development);
      if (!app) {
        app = createApp({ deps: depsFromEnv, development });
        apps.set(development, app);
      }
      return app.fetch(request, env, ctx);
    },
    async scheduled(controller, env, ctx) {
      ctx.waitUntil(runScheduled(await depsFromEnv(env), controller.cron));
    },
    async queue(batch, env) {
      await handleQueue(await depsFromEnv(env), batch);
    },
  } satisfies ExportedHandler<Env>;
}

export default createWorker();

/** The live board's hub, a Durable Object per school (src/modules/dismissal/hub.ts). */
export class DismissalLive extends createLiveObject() {}
