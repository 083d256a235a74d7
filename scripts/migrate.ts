/**
 * `npm run db:migrate` (and the deploy scripts): the migrations applied to EVERY D1 database of an
 * environment, the platform's (`DB`) and each shard's (`DB_SHARD_1`, ...: docs/scaling.md
 * "Shards"), then each shard's record ids started in its own range (src/db/shards.ts
 * `idRangeStatements`; run again, it changes nothing).
 *
 *   tsx scripts/migrate.ts --env=            # production (the top level), remote
 *   tsx scripts/migrate.ts --env=staging     # staging, remote
 *   tsx scripts/migrate.ts --env=dev --local # the local databases `npm run dev` serves
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { idRangeStatements } from "../src/db/shards";
import { envOf } from "./placeholders";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");

/** The D1 bindings of an environment, as wrangler reads wrangler.toml (`DB` first). */
export function d1Bindings(env: string, configPath = `${ROOT}wrangler.toml`): string[] {
  const config = unstable_readConfig({ config: configPath, env: env || undefined });
  return config.d1_databases.map((d: { binding: string }) => d.binding);
}

/** The wrangler commands that migrate every database of `env` (`--local` or `--remote`). */
export function migrateCommands(env: string, where: "--local" | "--remote", configPath?: string): string[][] {
  const target = ["--env", env, where];
  return d1Bindings(env, configPath).flatMap((binding) => {
    const range = idRangeStatements(binding);
    return [
      ["d1", "migrations", "apply", binding, ...target],
      ...(range.length > 0 ? [["d1", "execute", binding, ...target, "--command", range.join("; ")]] : []),
    ];
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const where = args.includes("--local") ? "--local" : "--remote";
  for (const command of migrateCommands(envOf(args), where)) {
    console.log(`wrangler ${command.join(" ")}`);
    const run = spawnSync(process.execPath, [WRANGLER, ...command], { cwd: ROOT, stdio: "inherit", env: process.env });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
}
