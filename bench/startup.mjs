/**
 * `node bench/startup.mjs`: what a fresh isolate of the Worker spends its start-up on.
 *
 * 1. Builds the bundle as a deploy does and measures its start-up without a profiler
 *    (bench/bundle.ts `measureStartup`: CPU time of the first request of fresh isolates).
 * 2. Builds a profiling variant: the same sources and wrangler.toml, not minified, from an entry
 *    that imports src/index.ts dynamically, so that esbuild wraps every module in a lazily called
 *    initialiser named after its path (`"src/app.ts"() {...}`) instead of inlining them all into one
 *    top-level function. Evaluation order and work are the same; each module's evaluation becomes a
 *    frame the profiler can see.
 * 3. Profiles the first request of fresh isolates of that variant through each isolate's inspector
 *    (bench/profile.mjs) and gives each sample to the innermost module initialiser on its stack
 *    (`startupByModule`): a module's own top-level code, with the library calls it makes (zod
 *    building its schemas), without the modules it imports. Prints the mean per isolate by module,
 *    by package or folder, and self time by function; writes the .cpuprofile files to bench/.data/.
 *
 *   node bench/startup.mjs                 5 isolates, sampled every 50 µs
 *   STARTUP_ISOLATES=9 STARTUP_INTERVAL_US=25 node bench/startup.mjs
 *
 * The profiler slows evaluation down (more so at finer intervals, and the variant is not
 * minified): read the shares, and take the milliseconds from step 1.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Miniflare } from "miniflare";
import { tsImport } from "tsx/esm/api";
import { loadSourceMap, markdown, profile, startupByModule, summarise } from "./profile.mjs";

const ISOLATES = Number(process.env.STARTUP_ISOLATES ?? 5);
const INTERVAL_US = Number(process.env.STARTUP_INTERVAL_US ?? 50);
const TOP = 25;

const {
  buildCommand,
  buildWorker,
  measureBuild,
  measureStartup,
  workerBindings,
  FIRST_REQUEST,
  REFERENCE_ENTRY,
  REFERENCE_QUIET_MS,
  ROOT,
} = await tsImport("./bundle.ts", import.meta.url);

const tmp = mkdtempSync(path.join(os.tmpdir(), "school-api-startup-"));
let mf;
try {
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} on ${os.cpus().length} CPUs`,
  );
  const bundle = await buildWorker(path.join(tmp, "dist"));
  console.log(
    `bundle: ${bundle.main} ${(bundle.raw / 1024).toFixed(1)} KiB raw, ${(bundle.gzip / 1024).toFixed(1)} KiB gzip`,
  );
  const yardstick = await buildWorker(path.join(tmp, "yardstick"), REFERENCE_ENTRY);
  const startup = await measureStartup(bundle, 9, yardstick);
  const f = (x) => (x ? `median ${x.median.toFixed(1)} ms, min ${x.min.toFixed(1)} ms` : "-");
  console.log(
    `start-up without the profiler (measureStartup, 9 isolates): normalised CPU ${f(startup.normalised)}; ` +
      `CPU ${f(startup.cpu)} = evaluation ${f(startup.evaluation)} + first request ${f(startup.firstRequest)}; wall ${f(startup.wall)}`,
  );
  console.log(
    `yardstick (${REFERENCE_ENTRY}): CPU ${f(startup.reference)}; REFERENCE_QUIET_MS is ${REFERENCE_QUIET_MS} ` +
      "(set it to this median when the machine is quiet)",
  );

  const variant = await buildProfilingVariant(path.join(tmp, "lazy"));
  const contents = readFileSync(path.join(variant.outdir, variant.main), "utf8");
  const names = Array.from({ length: ISOLATES + 1 }, (_, i) => `startup-${i}`);
  mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    inspectorPort: 0,
    handleStructuredLogs: () => {},
    workers: names.map((name) => ({
      ...workerBindings(),
      name,
      modulesRoot: variant.outdir,
      modules: [{ type: "ESModule", path: path.join(variant.outdir, variant.main), contents }],
    })),
  });
  await mf.ready;
  const bundles = { [variant.main]: loadSourceMap(path.join(variant.outdir, variant.main), ROOT) };
  const out = path.join(ROOT, "bench/.data");
  mkdirSync(out, { recursive: true });
  const byModule = [];
  const self = [];
  for (const [i, name] of names.entries()) {
    const worker = await mf.getWorker(name);
    const { cpuprofile, result } = await profile(
      mf,
      name,
      async () => {
        const res = await worker.fetch(FIRST_REQUEST);
        await res.text();
        return res.status;
      },
      INTERVAL_US,
    );
    if (result !== 200) throw new Error(`${name}: the first request answered ${result}`);
    // The first isolate of a workerd process pays the process's one-time costs: not counted.
    if (i === 0) continue;
    writeFileSync(path.join(out, `startup-${i}.cpuprofile`), JSON.stringify(cpuprofile));
    byModule.push(startupByModule(cpuprofile, { bundles }));
    self.push(summarise(cpuprofile, { bundles }));
  }
  const total = byModule.reduce((a, s) => a + s.totalMs, 0) / byModule.length;
  console.log(
    `\nprofiled: ${byModule.length} fresh isolates of the profiling variant, sampled every ${INTERVAL_US} µs: ` +
      `${total.toFixed(1)} ms per isolate with the profiler on; profiles in bench/.data/startup-*.cpuprofile\n`,
  );
  console.log(
    markdown("evaluation by package or folder (mean per isolate)", mean(byModule, "byPackage"), TOP, {
      perRequest: false,
    }),
  );
  console.log("");
  console.log(
    markdown("evaluation by module (mean per isolate)", mean(byModule, "byModule"), TOP, { perRequest: false }),
  );
  console.log("");
  console.log(
    markdown("self time by function (mean per isolate)", mean(self, "byFunction"), TOP, { perRequest: false }),
  );
} finally {
  await mf?.dispose();
  rmSync(tmp, { recursive: true, force: true });
}

/**
 * The profiling variant: wrangler.toml's build (aliases, compatibility flags) of an entry that
 * imports src/index.ts on the first request, not minified.
 */
async function buildProfilingVariant(outdir) {
  mkdirSync(outdir, { recursive: true });
  const entry = path.join(outdir, "..", "startup-entry.js");
  writeFileSync(
    entry,
    `let worker;
export default {
  async fetch(request, env, ctx) {
    worker ??= (await import(${JSON.stringify(path.join(ROOT, "src/index.ts"))})).default;
    return worker.fetch(request, env, ctx);
  },
};
`,
  );
  const { command, args, env } = buildCommand(outdir, entry);
  await run(command, [...args, "--config", path.join(ROOT, "wrangler.toml"), "--no-minify"], env);
  return measureBuild(outdir, entry);
}

async function run(command, args, env) {
  const { spawn } = await import("node:child_process");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} exited ${code}\n${output}`)),
    );
  });
}

/** The mean of several isolates' lists. */
function mean(list, key) {
  const sums = new Map();
  for (const s of list) for (const e of s[key]) sums.set(e.name, (sums.get(e.name) ?? 0) + e.ms / list.length);
  const total = [...sums.values()].reduce((a, b) => a + b, 0);
  return [...sums.entries()].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms, share: ms / total }));
}
