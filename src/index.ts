/**
 * The Worker entry: `fetch` serves the API, `scheduled` runs the cron sweeps, `queue` consumes
 * push and bulk messages. Dependencies are built from the bindings here and nowhere else.
 */
import { type App, createApp } from "./app";
import { loadConfig, servesDevelopmentRoutes } from "./config";
import { type Db, d1, libsql } from "./db/client";
import { type Deps, systemClock } from "./deps";
import { handleQueue } from "./jobs/queue";
import { runScheduled } from "./jobs/scheduled";
import { s3Signer } from "./lib/s3";
import { smsFromConfig } from "./modules/auth/sms";

const depsCache = new WeakMap<object, Promise<Deps>>();

/** The dependencies of the Worker runtime (memoised per env object: they hold no request state). */
export function depsFromEnv(env: Env): Promise<Deps> {
  let deps = depsCache.get(env);
  if (!deps) {
    deps = (async () => {
      const config = loadConfig(env);
      const db: Db = config.libsql ? await libsql(config.libsql.url, config.libsql.authToken) : d1(env.DB);
      return {
        config,
        db,
        clock: systemClock,
        sms: smsFromConfig(config, db, systemClock),
        storage: env.DOCUMENTS,
        signer: s3Signer(config.s3),
        queues: { push: env.PUSH_QUEUE, bulk: env.BULK_QUEUE },
      };
    })();
    deps.catch(() => depsCache.delete(env));
    depsCache.set(env, deps);
  }
  return deps;
}

/** One app with the development routes, one without (an invalid env: without, and every request 503s). */
const apps = new Map<boolean, App>();

export default {
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
