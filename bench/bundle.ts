/**
 * The Worker bundle as a deploy uploads it, and what it costs to start: shared by `npm run bench`
 * (bench/run.mjs prints both) and test/node/bundle.test.ts (which holds them to the budgets).
 *
 * - `buildWorker` runs `wrangler deploy --dry-run` (wrangler.toml's minify and [alias] apply) and
 *   measures the script: raw and gzip (level 9), plus esbuild's list of inputs.
 * - `measureStartup` loads the bundle into fresh isolates in workerd (Miniflare) and times, in CPU
 *   time of workerd's main thread (Linux) and elapsed time, the evaluation of its modules and then
 *   its first request (`createApp` runs on the first `fetch`). An entry module imports the bundle
 *   on the isolate's first request, as `wrangler check startup` does; the same entry importing an
 *   empty module is timed alongside and subtracted, which removes Miniflare's own dispatch cost.
 *   A yardstick (bench/startup-reference.ts: a fixed workload of zod schemas) is timed in fresh
 *   isolates beside the bundle's, and gives `normalised`: the bundle's CPU time on the scale of a
 *   quiet machine, which a loaded machine inflates far less than the raw CPU time. workerd
 *   compiles a Worker's modules when it creates the isolate, before any request: that compile is
 *   not in these figures (a smaller script shortens it too).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { buildDefines } from "../scripts/build-info";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Budgets, checked by test/node/bundle.test.ts (docs/performance.md says where they come from). */
export const BUDGETS = {
  /**
   * The default (D1) Worker, moved on purpose with each issue (docs/performance.md): 160 KiB until
   * the people issue (phone library, Excel, five modules), 260 KiB until the data layer (its
   * accessors, typed queries and batches, the person verb: +4 KiB over 256.4), 264 KiB until
   * transport (three modules, 39 operations at ~0.7 KiB each, the PDF writer 3.5 KiB: 262.0 ->
   * 290.3 KiB; pdf-lib alone would have been 178 KiB), 296 KiB until the afternoon (exit
   * permissions with the rules engine, invitations, the day's summary: 46 operations, ~103 KiB raw;
   * idempotency, ETags and If-Match: 290.3 -> 327.7 KiB), 332 KiB until tasks and appointments
   * (37 operations, the iCalendar writer; over the notification branch's 364.1 KiB: 386.8 KiB),
   * 392 KiB until messages in two languages (the Spanish catalogue, 74 KiB raw with the new
   * modules' messages, zod's es locale, the messages' call sites) and the document that teaches
   * (every field's description and each operation's error examples in the route definitions) met
   * notifications, events, lost articles, tasks and appointments: 397.5 -> 437.5 KiB (1,464.9 KiB
   * raw), 440 KiB until drizzle's operators without its table scan (src/db/sql.ts) and page links
   * without a URL parse took 1.5 KiB raw, 0.4 KiB gzip (440.3 KiB), 441 KiB until the route lists'
   * PDFs drew every script a school's names are written in: pdf-lib and fontkit 3 (its TrueType
   * format and Arabic shaper only) replaced our Latin-1-only writer, +131.8 KiB (440.3 -> 572.1 KiB,
   * 1,507,090 -> 1,954,053 B raw) with pdf-lib's standard fonts, PNG decoder and pako left out by
   * wrangler.toml's [alias] (src/lib/pdf-lib/; +248.6 KiB without), the fonts Workers Static Assets,
   * not bundle bytes; 573 KiB since (2026-12-06), 574 KiB with the route options of a parent's child
   * and the one date schema with its range (573.1 KiB measured at the merge); with If-Match on every
   * update (checked where routes are served, its write guard, ten more routes), the guardian link's
   * answer with names and its GET, and the bounds the document now declares (+1.2 KiB on their own
   * branch) 576 KiB, 584 KiB with the afternoon's decisions that stay true, CORS and the declared
   * headers (583.5 KiB measured after the session's merges); 590 KiB with issue 34's school and
   * personal exports (the whole-table reader src/db/dump.ts, the export writer, four routes: 589.5 KiB);
   * 592 KiB with the Spanish names of states and modules and zod's refusals of ours (591.0 KiB); 626 KiB
   * with issue 32's dismissal (~49 KiB raw of its own), issue 33's webhooks and bus run (~40 KiB raw),
   * the typed contexts and layers (624.4 KiB measured at the merge, 2026-12-06: past issue 30's 600 KiB
   * line, which the next trim must win back); 628 KiB with issue 32's live board hub (the Durable
   * Object class every entry exports, its publish and subscribe: 627.2 KiB measured on its branch,
   * 2026-12-06, after dropping the polling streams); 631 KiB with issue 33's leftovers (the DNS-over-HTTPS
   * resolver, the school setting to keep no positions, the webhooks of fixed days), issue 31's
   * accessors for set-based writes and audits, and issue 30's riders re-deciding (630.1 KiB measured
   * at the merge, 2026-12-06; still 30 KiB past issue 30's 600 KiB line: the Spanish catalogue as a
   * static asset, ~20 KiB gzip, and the OpenAPI document built ahead are the next trims); 633 KiB
   * with the live board's re-checks of who may watch and D1 sessions (the bookmark on every answer,
   * its parameter declared on every operation: 632.0 KiB measured at the merge, 2026-12-06); 574 KiB
   * (2026-12-07) since the data the Worker only reads is a static asset read once per isolate
   * (src/lib/isolate-data.ts: the Spanish catalogue -22.7 KiB, libphonenumber-js's metadata -19 KiB;
   * src/lib/pdf-lib/binary-trie.ts: fontkit's Unicode trie -12 KiB) and zod's fromJSONSchema is left
   * out (-2 KiB): 632.0 -> 571.5 KiB, issue 30's 600 KiB line met with room for ~40 operations; with a boarding in one round trip
   * (school events' writes in the verb's batch, the final list's rule in SQL: +1.3 KiB on its branch)
   * and the school's board kept per isolate (+1.2 KiB on its branch); 576 KiB with the shard map, the
   * data layer's choice of database and health per database (574.6 KiB measured at the merge, 2026-12-07;
   * the libSQL entry 595.3 KiB, 4.7 KiB under the 600 KiB line); 583.9 / 604.6 KiB with the user and
   * school anchors, libSQL shards and moving a school (+9.3 KiB), then 573.5 / 594.1 KiB with pdf-lib's
   * forms left out (src/lib/pdf-lib/no-form.ts, -10.4 KiB; 2026-12-07). Size is the proxy; what the platform limits is start-up,
   * measured below. At ~0.6-0.75 KiB gzip per operation the operations still to come pass the
   * ceiling: their route definitions will have to load with their modules, not with the Worker.
   */
  gzipBytes: 576 * 1024,
  /**
   * The ceiling for the full API (~300 operations) and for any entry, the libSQL one included: 400
   * KiB until tasks and appointments brought the libSQL entry to 406.4 KiB (the D1 one 386.8), 420
   * KiB until messages and the teaching document brought it to 457.5 KiB (2026-11-28), 480 KiB
   * until the PDFs' pdf-lib and fontkit brought it to 591.9 KiB (the D1 one 572.1; 2026-12-06), 600
   * KiB until the afternoon's decisions that stay true, finding 9's schemas and If-Match, issue 34's
   * CORS, headers and route options brought the libSQL entry to 603.6 KiB (the D1 one 583.5 KiB;
   * 2026-12-06), 610 KiB until issue 34's exports and Spanish names brought it to 610.9 KiB (the D1
   * one 591.0; 2026-12-06), 620 KiB until dismissal, webhooks and the bus run brought it to 644.3 KiB
   * (the D1 one 624.4; 2026-12-06), 646 KiB until issue 32's live board hub (+2.8 KiB on the D1
   * one), 649 KiB until issue 33's leftovers and issue 31's accessors brought it to 650.1 KiB (the D1
   * one 630.1; 2026-12-06), 652 KiB until D1 sessions and the hub's re-checks brought it to 651.8 KiB
   * (the D1 one 632.0; 2026-12-06), 654 KiB until the data read from the static assets brought it
   * to 591.3 KiB (the D1 one 571.5; 2026-12-07; 595.3 KiB after the session's merges), 600 KiB since: issue 30's line for every entry (a
   * Worker may upload 3 MiB gzip on the free plan, 10 MiB paid; this is our own line, to notice
   * growth); loading route definitions with their modules is what keeps it.
   */
  ceilingGzipBytes: 600 * 1024,
  /**
   * Module evaluation (the script's global scope, what the platform's start-up limit counts), in a
   * fresh isolate: the median of 15 isolates of `normalisedEvaluation` CPU time (`measureStartup`),
   * i.e. on the scale of this machine when quiet. 2026-11-28, load 12 to 13 on the 2 cores: raw
   * evaluation CPU 34-53 ms median from run to run, normalised 36.1-37.6 ms median in three runs of
   * 15. The budget keeps a third over that (a median within it by 12 ms, never by a sample's luck)
   * and still fails a regression of 35 %. Until then the budget was the normalised median of
   * evaluation plus the first request (60 ms; 49-53 ms under the same load, 65.9 ms at worse times),
   * whose first-request part (`createApp`, the router, the first module) is no start-up cost.
   * 2026-12-07, the bundle at 632 KiB gzip (2.1 MB raw; 440 KiB when the budget was set): normalised
   * evaluation medians 44.1, 50.9, 48.1, 44.5 ms in four runs of 15 on a quiet machine: the script's
   * size is the cost (parsing), so the budget moves with it to 58 ms (a sixth over the worst run)
   * until the bundle trims of issue 30's 600 KiB line win it back.
   */
  startupMs: 58,
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
      // What a deploy's build defines (scripts/wrangler.ts): the commit and the last migration.
      ...buildDefines(ROOT),
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
    // The static assets the build's [build] command filled: the PDF fonts, and the data the Worker
    // reads once per isolate instead of bundling it (src/lib/isolate-data.ts).
    assets: { directory: path.join(ROOT, "public"), binding: "ASSETS", routerConfig: { has_user_worker: true } },
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
      // The shape of a Firebase key (PUSH_PROVIDER=fcm): nothing here sends a push.
      FCM_SERVICE_ACCOUNT: JSON.stringify({
        project_id: "bundle",
        client_email: "push@bundle.iam.gserviceaccount.com",
        private_key: "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
        token_uri: "https://oauth2.googleapis.com/token",
      }),
      ...extra,
    },
  };
}

/** Serves a built bundle in workerd (one Worker, `api`), e.g. to compare its answers with the source's. */
export async function serveBundle(bundle: Bundle, extra: Record<string, string> = {}, logs: string[] = []) {
  const contents = await readFile(path.join(bundle.outdir, bundle.main), "utf8");
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    handleStructuredLogs: (log: { level: string; message: string }) => {
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
  });
  await mf.ready;
  return mf;
}

/** The first request of a fresh isolate: what the mobile app asks first when it opens. */
export const FIRST_REQUEST = "http://127.0.0.1/api/v1/version?platform=ios&version=1.3.0";
/** Answered by the start-up entry once it has imported (evaluated) the Worker, without calling it. */
const EVALUATE = "http://127.0.0.1/__evaluate";

/**
 * The entry of a start-up isolate: imports the Worker (`./worker.js`, evaluating its modules) on
 * its first request, as \`wrangler check startup\` does. `/__evaluate` stops there, so evaluation
 * and the first request can be timed apart.
 */
export const STARTUP_ENTRY = `
let worker;
export default {
  async fetch(request, env, ctx) {
    worker ??= (await import("./worker.js")).default;
    if (new URL(request.url).pathname === "/__evaluate") return new Response(null, { status: 204 });
    return worker.fetch(request, env, ctx);
  },
};
`;
const EMPTY_WORKER = "export default { fetch: () => new Response('{}') };";

/** The start-up yardstick (bench/startup-reference.ts): a fixed workload of zod schemas. */
export const REFERENCE_ENTRY = "bench/startup-reference.ts";

/**
 * The yardstick's CPU time on this machine with nothing else running (2 × AMD EPYC vCPUs, workerd
 * 1.20261102.1), in ms: `normalised` start-up figures are on that scale. Measure it again
 * (`node bench/startup.mjs` prints it) if the yardstick, zod, workerd or the machine changes.
 * 25: estimated, as the machine was never quiet the day the yardstick came in: the app's
 * start-up ran at 1.6-1.9 yardsticks under load 1 to 12 (and the yardstick itself at 30-53 ms, the
 * host's speed varying more than the VM's load showed), and at 44-50 ms median on a quiet machine
 * before (docs/performance.md).
 */
export const REFERENCE_QUIET_MS = 25;

export interface Stats {
  /** Per isolate, ms. */
  samples: number[];
  median: number;
  min: number;
  /** The lower quartile. */
  q1: number;
}

export interface Figures extends Stats {
  /** Per isolate: module evaluation plus the first request, minus the empty Worker's. */
  samples: number[];
  /** The empty Worker's first request (Miniflare's dispatch cost), median, ms. */
  baseline: number;
  /** The bundle's second request (warm), median, ms. */
  warm: number;
}

export interface Startup {
  /** Elapsed time: module evaluation plus the first request. */
  wall: Figures;
  /** CPU time of workerd's main thread (Linux only): module evaluation plus the first request. */
  cpu?: Figures;
  /** CPU time of module evaluation alone (the import of the bundle). */
  evaluation?: Stats;
  /** CPU time of the first request alone (`createApp`, the config, the router, the first module). */
  firstRequest?: Stats;
  /** CPU time of the yardstick (bench/startup-reference.ts) in the isolates beside the bundle's. */
  reference?: Stats;
  /**
   * `cpu` on the scale of a quiet machine: each isolate's figure times REFERENCE_QUIET_MS over the
   * yardstick's figure in the isolate timed right after it. Load on the machine inflates both
   * alike, so this moves far less with load than `cpu` does.
   */
  normalised?: Stats;
  /**
   * `evaluation` on the same scale: the script's global scope alone, what the platform's start-up
   * limit counts, against the yardstick's (which is an evaluation too, of the same packages).
   */
  normalisedEvaluation?: Stats;
}

/**
 * Times `samples` fresh isolates of the bundle, each beside a fresh isolate of an empty Worker
 * (what Miniflare's dispatch costs, subtracted) and, given `reference` (the built yardstick), one
 * of the yardstick; the three alternate so load on the machine falls on all alike. In each bundle
 * isolate: the import alone (module evaluation), then the first request, then a second (warm). One
 * round runs first, uncounted: the first isolate in a new workerd process also pays the process's
 * one-time costs, which a deployed Worker's isolates do not.
 */
export async function measureStartup(bundle: Bundle, samples = 9, reference?: Bundle): Promise<Startup> {
  const contents = await readFile(path.join(bundle.outdir, bundle.main), "utf8");
  const yardstick = reference && (await readFile(path.join(reference.outdir, reference.main), "utf8"));
  const shared = workerBindings();
  const worker = (name: string, inner: string, dir: string) => ({
    ...shared,
    name,
    modulesRoot: dir,
    modules: [
      { type: "ESModule" as const, path: path.join(dir, `${name}.mjs`), contents: STARTUP_ENTRY },
      { type: "ESModule" as const, path: path.join(dir, "worker.js"), contents: inner },
    ],
  });
  const ids = ["warmup", ...Array.from({ length: samples }, (_, i) => String(i))];
  const before = new Set(workerdPids());
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    handleStructuredLogs: () => {},
    workers: ids.flatMap((id) => [
      worker(`bundle-${id}`, contents, bundle.outdir),
      worker(`empty-${id}`, EMPTY_WORKER, bundle.outdir),
      ...(reference && yardstick ? [worker(`reference-${id}`, yardstick, reference.outdir)] : []),
    ]),
  });
  try {
    await mf.ready;
    const pids = workerdPids().filter((pid) => !before.has(pid));
    const cpu = () => (pids.length === 1 ? processCpuMs(pids[0] as number) : undefined);
    const time = async (name: string, url: string) => {
      const w = await mf.getWorker(name);
      const c0 = cpu();
      const t0 = performance.now();
      const res = await w.fetch(url);
      await res.text();
      const t1 = performance.now();
      const c1 = cpu();
      if (!res.ok) throw new Error(`${name}: ${url} answered ${res.status}`);
      return { wall: t1 - t0, cpu: c0 === undefined || c1 === undefined ? undefined : c1 - c0 };
    };
    type Sample = Awaited<ReturnType<typeof time>>;
    const runs: { empty: [Sample, Sample]; bundle: [Sample, Sample, Sample]; reference?: Sample }[] = [];
    for (const id of ids) {
      const empty: [Sample, Sample] = [await time(`empty-${id}`, EVALUATE), await time(`empty-${id}`, FIRST_REQUEST)];
      const b: [Sample, Sample, Sample] = [
        await time(`bundle-${id}`, EVALUATE),
        await time(`bundle-${id}`, FIRST_REQUEST),
        await time(`bundle-${id}`, FIRST_REQUEST),
      ];
      const r = reference ? await time(`reference-${id}`, EVALUATE) : undefined;
      if (id !== "warmup") runs.push({ empty, bundle: b, reference: r });
    }
    const all = <T>(list: (T | undefined)[]): list is T[] => list.every((x) => x !== undefined);
    const figures = (of: (s: Sample) => number | undefined): Figures | undefined => {
      const e0 = runs.map((r) => of(r.empty[0]));
      const e1 = runs.map((r) => of(r.empty[1]));
      const b0 = runs.map((r) => of(r.bundle[0]));
      const b1 = runs.map((r) => of(r.bundle[1]));
      const w = runs.map((r) => of(r.bundle[2]));
      if (!all(e0) || !all(e1) || !all(b0) || !all(b1) || !all(w)) return undefined;
      const baseline = median(e0) + median(e1);
      const net = b0.map((t, i) => Math.max(0, t + (b1[i] as number) - baseline));
      return { ...stats(net), baseline, warm: median(w) };
    };
    const cpuFigures = figures((s) => s.cpu);
    const part = (i: 0 | 1) => {
      const e = runs.map((r) => r.empty[i].cpu);
      const b = runs.map((r) => r.bundle[i].cpu);
      return all(e) && all(b) ? stats(b.map((t) => Math.max(0, t - median(e)))) : undefined;
    };
    const startup: Startup = {
      wall: figures((s) => s.wall) as Figures,
      cpu: cpuFigures,
      evaluation: part(0),
      firstRequest: part(1),
    };
    const e0 = runs.map((r) => r.empty[0].cpu);
    const ref = runs.map((r) => r.reference?.cpu);
    if (reference && cpuFigures && all(e0) && all(ref)) {
      const net = ref.map((t) => Math.max(0.001, t - median(e0)));
      startup.reference = stats(net);
      startup.normalised = stats(cpuFigures.samples.map((t, i) => (t * REFERENCE_QUIET_MS) / (net[i] as number)));
      const evaluation = startup.evaluation;
      if (evaluation) {
        startup.normalisedEvaluation = stats(
          evaluation.samples.map((t, i) => (t * REFERENCE_QUIET_MS) / (net[i] as number)),
        );
      }
    }
    return startup;
  } finally {
    await mf.dispose();
  }
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples,
    median: median(samples),
    min: sorted[0] as number,
    q1: sorted[Math.floor((sorted.length - 1) / 4)] as number,
  };
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
