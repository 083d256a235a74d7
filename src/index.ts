/**
 * The Worker entry: `fetch` serves the API, `scheduled` runs the cron sweeps, `queue` consumes
 * push and bulk messages. Dependencies are built from the bindings here and nowhere else.
 * This is the D1 Worker; src/index.libsql.ts is the same Worker with a libSQL client bundled.
 */
import { type App, createApp } from "./app";
import { ConfigError, loadConfig, servesDevelopmentRoutes } from "./config";
import { type Db, d1, type OpenLibsql } from "./db/client";
import { type Deps, systemClock } from "./deps";
import { handleQueue } from "./jobs/queue";
import { runScheduled } from "./jobs/scheduled";
import { dohResolver } from "./lib/dns";
import { pushFromConfig } from "./lib/push";
import { s3Signer } from "./lib/s3";
import { smsFromConfig } from "./lib/sms";

// A setting this Worker cannot serve: it refuses to (503), and the log says what to deploy.
const noLibsql: OpenLibsql = () => {
  throw new ConfigError(
    "invalid configuration: LIBSQL_URL is set, but this Worker was built without a libSQL client: deploy src/index.libsql.ts (npm run deploy:libsql)",
    ["LIBSQL_URL"],
  );
};

/** Opens the libSQL database; a URL its client refuses is a setting the Worker cannot serve. */
async function openStore(open: OpenLibsql, url: string, authToken?: string): Promise<Db> {
  try {
    return await open(url, authToken);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError("invalid configuration: LIBSQL_URL is not a URL the libSQL client accepts", ["LIBSQL_URL"], {
      cause: err,
    });
  }
}

/** The Worker; `openLibsql` opens the store when `LIBSQL_URL` is set (given by src/index.libsql.ts). */
export function createWorker(openLibsql: OpenLibsql = noLibsql) {
  const depsCache = new WeakMap<object, Promise<Deps>>();

  /** The dependencies of the Worker runtime (memoised per env object: they hold no request state). */
  function depsFromEnv(env: Env): Promise<Deps> {
    let deps = depsCache.get(env);
    if (!deps) {
      deps = (async () => {
        const config = loadConfig(env);
        const db: Db = config.libsql
          ? await openStore(openLibsql, config.libsql.url, config.libsql.authToken)
          : d1(env.DB);
        return {
          config,
          db,
          clock: systemClock,
          sms: smsFromConfig(config, db, systemClock),
          push: pushFromConfig(config, db, systemClock),
          storage: env.DOCUMENTS,
          signer: s3Signer(config.s3),
          queues: { push: env.PUSH_QUEUE, bulk: env.BULK_QUEUE, webhook: env.WEBHOOK_QUEUE },
          assets: env.ASSETS,
          resolver: dohResolver(),
        };
      })();
      deps.catch(() => depsCache.delete(env));
      depsCache.set(env, deps);
    }
    return deps;
  }

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
