#!/usr/bin/env node
/**
 * Runs the static checks `npm test` starts with (the npm scripts named on the command line) two at
 * a time, each one's output printed whole when it ends, and fails when any fails: on two cores
 * they take about half as long as one after another.
 *
 *   node scripts/checks.mjs typecheck:src typecheck:node lint lint:api client:check
 */
import { spawn } from "node:child_process";
import os from "node:os";

const scripts = process.argv.slice(2);
const parallel = Math.max(2, os.availableParallelism?.() ?? 2);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(script) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ["run", "-s", script], { stdio: ["ignore", "pipe", "pipe"], env: process.env });
    const out = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => out.push(d));
    child.on("close", (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString().trimEnd();
      process.stdout.write(`${code === 0 ? "ok  " : "FAIL"} ${script} (${seconds} s)\n${text ? `${text}\n` : ""}`);
      resolve(code === 0);
    });
  });
}

const queue = [...scripts];
const results = [];
await Promise.all(
  Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let s = queue.shift(); s !== undefined; s = queue.shift()) results.push(await run(s));
  }),
);
if (results.includes(false)) {
  process.stderr.write("static checks failed\n");
  process.exit(1);
}
