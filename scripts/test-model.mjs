#!/usr/bin/env node
/**
 * The model of the afternoon (test/afternoon-model.test.ts) for a long run:
 * `npm run test:model -- --runs 200 [--seed 7]`. The suite runs it with a fixed seed and a few runs.
 */
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const runs = value("--runs") ?? "100";
const seed = value("--seed") ?? String(Date.now() % 2 ** 31);
process.stdout.write(`model of the afternoon: ${runs} runs, seed ${seed}\n`);
const result = spawnSync("npx", ["vitest", "run", "--project", "workers", "test/afternoon-model.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, MODEL_RUNS: runs, MODEL_SEED: seed },
});
process.exit(result.status ?? 1);
