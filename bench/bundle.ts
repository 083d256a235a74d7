/**
 * The Worker bundle as a deploy uploads it, and what it costs to start: shared by `npm run bench`
 * (bench/run.mjs prints both) and test/node/bundle.test.ts (which holds them to the budgets).
 *
 * - `buildWorker` runs `wrangler deploy --dry-run` (wrangler.toml's minify and [alias] apply) and
 *   measures the script: raw and gzip (level 9), plus esbuild's list of inputs.
 * - `measureStartup` loads the bundle into fresh isolates in workerd (Miniflare) and times the
 *   first request, which evaluates every module and builds the app (`createApp` runs on the first
 *   `fetch`). An entry module imports the bundle on its first request, as `wrangler check startup`
 *   does; the same entry importing an empty module is timed alongside and subtracted, which removes
 *   Miniflare's own dispatch cost. Both elapsed time and (on Linux) the CPU time of workerd's main
 *   thread are reported. workerd compiles a Worker's modules when it creates the isolate, before
 *   any request: that compile is not in these figures (a smaller script shortens it too).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Budgets, checked by test/node/bundle.test.ts (docs/performance.md says where they come from). */
export const BUDGETS = {
  /**
   * The default (D1) Worker, moved on purpose with each issue (docs/performance.md): 160 KiB until
   * the people issue (phone library, Excel, five modules), 260 KiB since.
   */
  gzipBytes: 260 * 1024,
  /** The ceiling for the full API (~300 operations) and for any entry, the libSQL one included. */
  ceilingGzipBytes: 400 * 1024,
  /**
   * Module evaluation plus the first request, in a fresh isolate (the least of 7, CPU time). 36-38
   * ms on a quiet machine; 45-50 in fresh-clone CI runs right after the workers tests on the same
   * 2 cores, so 50 (the budget until the people/families review) failed on load, not on code. 60
   * keeps a margin for a loaded CI machine and still fails a regression of a third (+20 ms).
   */
  startupMs: 60,
};

export interface Bundle {
  outdir: string;
  /** The entry's output file (index.js for src/index.ts). */
  main: string;
  raw: number;
  gzip: number;
  /** Source files that went into the script (paths relative to the project). */
  inputs: string[];
}

/**
 * `wrangler deploy --dry-run --outdir <outdir> [entry]`: the exact script a deploy would upload.
 * `entry` replaces wrangler.toml's `main` (e.g. src/index.libsql.ts).
 */
export async function buildWorker(outdir: string, entry?: string): Promise<Bundle> {
  const { command, args, env } = buildCommand(outdir, entry);
  await run(command, args, env);
  return measureBuild(outdir, entry);
}

/** The command `buildWorker` runs (bench/run.mjs runs it itself, to stop it on Ctrl-C). */
export function buildCommand(outdir: string, entry?: string) {
  return {
    command: path.join(ROOT, "node_modules/.bin/wrangler"),
    args: [
      "deploy",
      "--dry-run",
      // The top level: the production configuration a deploy uploads.
      "--env=",
      "--outdir",
      outdir,
      "--metafile",
      path.join(outdir, "meta.json"),
      ...(entry ? [entry] : []),
    ],
    env: { WRANGLER_SEND_METRICS: "false", WRANGLER_LOG: "warn" },
  };
}

/** Sizes (raw, gzip level 9) and inputs of what `buildCommand` wrote. */
export async function measureBuild(outdir: string, entry?: string): Promise<Bundle> {
  const main = `${path.parse(entry ?? unstable_readConfig({ config: path.join(ROOT, "wrangler.toml") }).main ?? "index").name}.js`;
  const files = (await readdir(outdir)).filter((f) => /\.(m?js|wasm)$/.test(f));
  if (!files.includes(main)) throw new Error(`wrangler wrote no ${main} in ${outdir}: ${files.join(", ")}`);
  let raw = 0;
  let gzip = 0;
  for (const f of files) {
    const bytes = await readFile(path.join(outdir, f));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  const meta = JSON.parse(await readFile(path.join(outdir, "meta.json"), "utf8")) as {
    outputs: Record<string, { inputs?: Record<string, unknown> }>;
  };
  const output = Object.entries(meta.outputs).find(([file]) => file.endsWith(`/${main}`))?.[1];
  return { outdir, main, raw, gzip, inputs: Object.keys(output?.inputs ?? {}) };
}

/** wrangler.toml as wrangler reads it: compatibility settings and [vars]. */
export function wranglerSettings() {
  const config = unstable_readConfig({ config: path.join(ROOT, "wrangler.toml") });
  return {
    vars: config.vars as Record<string, string>,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
  };
}

/** The bindings of wrangler.toml, with production settings and throwaway secrets. */
export function workerBindings(extra: Record<string, string> = {}) {
  const { vars, compatibilityDate, compatibilityFlags } = wranglerSettings();
  return {
    compatibilityDate,
    compatibilityFlags,
    d1Databases: { DB: "bundle-db" },
    r2Buckets: { DOCUMENTS: "bundle-documents" },
    queueProducers: { PUSH_QUEUE: { queueName: "school-push" }, BULK_QUEUE: { queueName: "school-bulk" } },
    bindings: {
      ...vars,
      ENVIRONMENT: "production",
      // What an operator sets (README, Deploy): production refuses the placeholder endpoint and
      // needs the SMS provider's secrets.
      S3_ENDPOINT: "https://0123456789abcdef.r2.cloudflarestorage.com",
      TWILIO_ACCOUNT_SID: "ACbundle",
      TWILIO_AUTH_TOKEN: "bundle-twilio-token",
      TWILIO_FROM: "+15550001234",
      AUTH_SECRET: "bundle-secret-0123456789abcdef0123456789abcdef",
      S3_ACCESS_KEY_ID: "bundle",
      S3_SECRET_ACCESS_KEY: "bundle",
      ...extra,
    },
  };
}

/** Serves a built bundle in workerd (one Worker, `api`), e.g. to compare its answers with the source's. */
export async function serveBundle(bundle: Bundle, extra: Record<string, string> = {}, logs: string[] = []) {
  const contents = await readFile(path.join(bundle.outdir, bundle.main), "utf8");
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      handleStructuredLogs: (log) => {
        logs.push(`${log.level}: ${log.message}`);
      },
      workers: [
        {
          ...workerBindings(extra),
          name: "api",
          modulesRoot: bundle.outdir,
          modules: [{ type: "ESModule", path: path.join(bundle.outdir, bundle.main), contents }],
        },
      ],
    }),
  );
  await mf.ready;
  return mf;
}

/** The first request of a fresh isolate: what the mobile app asks first when it opens. */
export const FIRST_REQUEST = "http://127.0.0.1/api/v1/version?platform=ios&version=1.3.0";

const STARTUP_ENTRY = `
let worker;
export default {
  async fetch(request, env, ctx) {
    worker ??= (await import("./worker.js")).default;
    return worker.fetch(request, env, ctx);
  },
};
`;
const EMPTY_WORKER = "export default { fetch: () => new Response('{}') };";

export interface Figures {
  /** Per isolate: the bundle's first request minus the empty Worker's, in ms. */
  samples: number[];
  median: number;
  min: number;
  /** The empty Worker's first request (Miniflare's dispatch cost), median, ms. */
  baseline: number;
  /** The bundle's second request (warm), median, ms. */
  warm: number;
}

export interface Startup {
  /** Elapsed time. */
  wall: Figures;
  /** CPU time of workerd's main thread (Linux only): other load on the machine inflates it far less. */
  cpu?: Figures;
}

/**
 * Times the first request in `samples` fresh isolates of the bundle (and of an empty Worker),
 * alternating the two so load on the machine falls on both alike. One isolate of each runs first,
 * uncounted: the first isolate in a new workerd process also pays the process's one-time costs,
 * which a deployed Worker's isolates do not.
 */
export async function measureStartup(bundle: Bundle, samples = 5): Promise<Startup> {
  const contents = await readFile(path.join(bundle.outdir, bundle.main), "utf8");
  const shared = workerBindings();
  const worker = (name: string, inner: string) => ({
    ...shared,
    name,
    modulesRoot: bundle.outdir,
    modules: [
      { type: "ESModule" as const, path: path.join(bundle.outdir, `${name}.mjs`), contents: STARTUP_ENTRY },
      { type: "ESModule" as const, path: path.join(bundle.outdir, "worker.js"), contents: inner },
    ],
  });
  const ids = ["warmup", ...Array.from({ length: samples }, (_, i) => String(i))];
  const before = new Set(workerdPids());
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      handleStructuredLogs: () => {},
      workers: ids.flatMap((id) => [worker(`bundle-${id}`, contents), worker(`empty-${id}`, EMPTY_WORKER)]),
    }),
  );
  try {
    await mf.ready;
    const pids = workerdPids().filter((pid) => !before.has(pid));
    const cpu = () => (pids.length === 1 ? processCpuMs(pids[0] as number) : undefined);
    const time = async (name: string) => {
      const w = await mf.getWorker(name);
      const c0 = cpu();
      const t0 = performance.now();
      const res = await w.fetch(FIRST_REQUEST);
      await res.text();
      const t1 = performance.now();
      const c1 = cpu();
      if (res.status !== 200) throw new Error(`${name}: first request answered ${res.status}`);
      return { wall: t1 - t0, cpu: c0 === undefined || c1 === undefined ? undefined : c1 - c0 };
    };
    type Sample = Awaited<ReturnType<typeof time>>;
    const first: Sample[] = [];
    const empty: Sample[] = [];
    const warm: Sample[] = [];
    for (const id of ids) {
      const e = await time(`empty-${id}`);
      const b = await time(`bundle-${id}`);
      const w = await time(`bundle-${id}`);
      if (id === "warmup") continue;
      empty.push(e);
      first.push(b);
      warm.push(w);
    }
    const figures = (of: (s: Sample) => number | undefined): Figures | undefined => {
      const [b, e, w] = [first, empty, warm].map((list) => list.map(of));
      if (![b, e, w].every((list): list is number[] => list?.every((x) => x !== undefined) ?? false)) return undefined;
      const baseline = median(e as number[]);
      const net = (b as number[]).map((t) => Math.max(0, t - baseline));
      return { samples: net, median: median(net), min: Math.min(...net), baseline, warm: median(w as number[]) };
    };
    return { wall: figures((s) => s.wall) as Figures, cpu: figures((s) => s.cpu) };
  } finally {
    await mf.dispose();
  }
}

/** The workerd processes this process started (Linux /proc; none elsewhere). */
function workerdPids(): number[] {
  try {
    return readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, "utf8");
          // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
          const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
          return ppid === process.pid && readFileSync(`/proc/${d}/comm`, "utf8").trim() === "workerd";
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU time used so far by a workerd process's main thread, which runs every isolate's JavaScript
 * (V8's helper threads for GC and compilation are left out, as a Worker's CPU time leaves them
 * out), in ms with nanosecond resolution (schedstat).
 */
function processCpuMs(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return undefined;
  }
}

function median(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function run(cmd: string, args: string[], env: Record<string, string>) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      code === 0 ? resolve(output) : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}\n${output}`));
    });
  });
}
