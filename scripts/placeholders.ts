/**
 * The placeholders still in wrangler.toml for one environment, as wrangler reads it: an all-zero
 * `database_id` (the one `wrangler d1 create` prints goes there) and any `<NAME>` left in a value
 * (`https://<ACCOUNT_ID>.r2.cloudflarestorage.com`). A deploy with one would fail half-way (the
 * migrations against no database) or publish a Worker that answers 503; `npm run deploy`,
 * `deploy:staging`, `deploy:libsql` and `build` run this first and stop naming every one at once.
 *
 *   tsx scripts/placeholders.ts --env=            # the top level (production)
 *   tsx scripts/placeholders.ts --env=staging [--config path/to/wrangler.toml]
 */
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";

const ZERO_ID = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;
const NAMED = /<[A-Z][A-Z0-9_]*>/;

/** `where = value` for each placeholder of the environment (`""`: the top level). */
export function placeholders(configPath: string, env: string): string[] {
  const config = unstable_readConfig({ config: configPath, env: env || undefined });
  const found: string[] = [];
  const walk = (value: unknown, where: string) => {
    if (typeof value === "string") {
      if (NAMED.test(value) || (where.endsWith("database_id") && ZERO_ID.test(value))) {
        found.push(`${where} = ${value}`);
      }
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, `${where}[${i}]`);
      });
    } else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) walk(v, where ? `${where}.${k}` : k);
    }
  };
  // What a deploy publishes: that environment's vars, bindings and routes (not wrangler's own fields).
  const { vars, d1_databases, r2_buckets, queues, kv_namespaces, routes } = config;
  walk({ vars, d1_databases, r2_buckets, queues, kv_namespaces, routes: routes ?? [] }, "");
  return found;
}

/** The environment of a wrangler command line (`--env=x`, `--env x`, `-e x`); `""` is the top level. */
export function envOf(args: readonly string[]): string {
  for (const [i, arg] of args.entries()) {
    if (arg.startsWith("--env=")) return arg.slice("--env=".length);
    if (arg === "--env" || arg === "-e") return args[i + 1] ?? "";
  }
  return "";
}

/** Exits 1 naming every placeholder of the environment `args` name, if any is left. */
export function refuseWithPlaceholders(configPath: string, args: readonly string[]) {
  const env = envOf(args);
  const left = placeholders(configPath, env);
  if (left.length === 0) return;
  const where = env ? `[env.${env}]` : "the top level";
  console.error(
    `wrangler.toml: ${where} still has ${left.length} placeholder${left.length === 1 ? "" : "s"} to replace ` +
      `before deploying (README, Deploy):\n${left.map((p) => `  ${p}`).join("\n")}`,
  );
  process.exit(1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === "--config" || a.startsWith("--config="));
  const given = at < 0 ? undefined : args[at]?.includes("=") ? args[at]?.split("=")[1] : args[at + 1];
  refuseWithPlaceholders(given ?? fileURLToPath(new URL("../wrangler.toml", import.meta.url)), args);
}
