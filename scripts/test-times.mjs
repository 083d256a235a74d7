#!/usr/bin/env node
/**
 * The per-file timing report of the last test run, from vitest's JSON reporter (`npm test` writes
 * .vitest/report.json): each file's time from its first test's start to its last test's end, its
 * tests, and the run's wall time. `npm run -s test:times` (add `-- FILE` for another report,
 * `-- --top N` for the N slowest files, default all).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : Number.POSITIVE_INFINITY;
const file = args.find((a, i) => !a.startsWith("--") && !(topAt >= 0 && i === topAt + 1)) ?? ".vitest/report.json";
if (!existsSync(file)) {
  process.stderr.write(`${file}: no report; run \`npm test\` (or \`npx vitest run\`) first\n`);
  process.exit(2);
}
const report = JSON.parse(readFileSync(file, "utf8"));
const rows = report.testResults
  .map((f) => ({
    file: path.relative(process.cwd(), f.name),
    seconds: (f.endTime - f.startTime) / 1000,
    tests: f.assertionResults.length,
    failed: f.assertionResults.filter((a) => a.status === "failed").length,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const started = Math.min(...report.testResults.map((f) => f.startTime));
const ended = Math.max(...report.testResults.map((f) => f.endTime));
const sum = rows.reduce((s, r) => s + r.seconds, 0);
console.log("seconds  tests  file");
for (const r of rows.slice(0, top))
  console.log(
    `${r.seconds.toFixed(1).padStart(7)}  ${String(r.tests).padStart(5)}  ${r.file}${r.failed ? `  (${r.failed} failed)` : ""}`,
  );
console.log(
  `${rows.length} files, ${report.numTotalTests} tests (${report.numFailedTests} failed): ` +
    `files' own time ${sum.toFixed(1)} s, from the first file's start to the last one's end ${((ended - started) / 1000).toFixed(1)} s`,
);
