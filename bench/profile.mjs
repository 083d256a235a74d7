/**
 * CPU profiles of a Worker in workerd, through its inspector: Miniflare's `inspectorPort` serves
 * the Chrome DevTools Protocol per Worker (`ws://127.0.0.1:<port>/core:user:<name>`), and
 * `Profiler.enable` / `Profiler.start` / `Profiler.stop` give V8's sampling profile of that Worker's
 * isolate. `summarise` maps each sampled function back to its source through the bundle's source
 * map (wrangler writes `index.js.map` beside `index.js`) and adds up self time by function, by
 * module (a package or a file of src/), by kind of work, and by the innermost function of src/ on
 * the stack (which step of ours the time was spent under, library calls included).
 *
 * Used by `node bench/run.mjs --profile <row>` (per-request cost under load) and
 * `node bench/startup.mjs` (what a fresh isolate evaluates on its first request).
 */
import { readFileSync } from "node:fs";
import { createRequire, SourceMap } from "node:module";
import path from "node:path";

// Node 20 has no WebSocket client of its own; miniflare's own dependency is one.
const require = createRequire(createRequire(import.meta.url).resolve("miniflare"));
const WebSocket = require("ws");

/** A DevTools Protocol session with one Worker's isolate. */
export async function inspect(mf, worker) {
  const base = await mf.getInspectorURL();
  const ws = new WebSocket(new URL(`/core:user:${worker}`, base).href);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  const pending = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(String(data));
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    message.error
      ? waiter.reject(new Error(`${waiter.method}: ${message.error.message}`))
      : waiter.resolve(message.result);
  });
  return {
    send(method, params = {}) {
      const message = { id: ++id, method, params };
      return new Promise((resolve, reject) => {
        pending.set(message.id, { resolve, reject, method });
        ws.send(JSON.stringify(message));
      });
    },
    close: () => ws.close(),
  };
}

/** Profiles `work()` in one Worker's isolate, sampling every `intervalUs` µs. */
export async function profile(mf, worker, work, intervalUs = 100) {
  const session = await inspect(mf, worker);
  try {
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: intervalUs });
    await session.send("Profiler.start");
    const result = await work();
    const { profile: cpuprofile } = await session.send("Profiler.stop");
    await session.send("Profiler.disable");
    return { cpuprofile, result };
  } finally {
    session.close();
  }
}

/**
 * A bundle's source map, to read sampled positions back as source files and lines. Sources are
 * named relative to `root` (the project): `src/lib/route.ts`, `node_modules/hono/dist/hono-base.js`.
 */
export function loadSourceMap(file, root) {
  let payload;
  try {
    payload = JSON.parse(readFileSync(`${file}.map`, "utf8"));
  } catch {
    return undefined;
  }
  const dir = path.resolve(path.dirname(file), payload.sourceRoot ?? "");
  const names = payload.sources.map((s) => {
    const relative = path.relative(root, path.resolve(dir, s));
    // drizzle-orm ships source maps to its TypeScript (`../src/entity.ts`), which the bundler
    // resolves one level too high: node_modules/src/... is drizzle-orm's src/.
    return relative.replace(/^node_modules\/src\//, "node_modules/drizzle-orm/src/");
  });
  return { map: new SourceMap(payload), contents: payload.sourcesContent ?? [], sources: payload.sources, names };
}

/** The module of a native function (no script URL): `fetch`, `URL`, `crypto.subtle.importKey`... */
const NATIVE = "(workerd's native APIs)";

/** `node_modules/<pkg>/...` -> the package; anything else (src/...) as it is. */
export function moduleOf(source) {
  const nm = source.lastIndexOf("node_modules/");
  if (nm < 0) return source;
  const parts = source.slice(nm + "node_modules/".length).split("/");
  return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? source);
}

/** The short path shown for a source: from the package or src/ on. */
function shortSource(source) {
  const nm = source.lastIndexOf("node_modules/");
  return nm >= 0 ? source.slice(nm + "node_modules/".length) : source;
}

/**
 * What a module's work is, for the summary by kind of work. First match wins; `native` entries are
 * V8's own buckets.
 */
export const KINDS = [
  [/^\(garbage collector\)$/, "V8: garbage collection"],
  [/^\((program|root)\)$/, "V8/workerd native (outside JS: I/O, the runtime, other isolates)"],
  [/^src\/app\.ts$|^src\/lib\/(metrics|log)\.ts$/, "app: access log, request state, module dispatch"],
  [
    /^src\/middleware\/(authorize|current-school)\.ts$|^src\/lib\/(access|crypto)\.ts$|^src\/modules\/auth\//,
    "auth: JWT, principal, permission check",
  ],
  [/^src\/middleware\//, "other middleware (CORS, JSON body)"],
  [
    /^src\/lib\/(route|pagination|params|search|errors|context|etag)\.ts$|^src\/lib\/resource\//,
    "operations: handler, resource block, list envelope, params",
  ],
  [/^src\/db\//, "data layer: query building, rendering, row decoding, the D1 wrapper (src/db)"],
  [/^src\/modules\//, "module code (records, views)"],
  [/^src\//, "other src"],
  [/^hono$/, "Hono: routing, context, middleware chain"],
  [/^@hono\/zod-openapi$|^@asteasolutions\/zod-to-openapi$/, "zod-openapi: validators"],
  [/^zod$/, "zod: parsing"],
  [/^drizzle-orm$/, "drizzle: query building, row mapping"],
  [/^(floor-worker\.js|count-d1\.mjs)$/, "floor Worker"],
  [/^(node:|cloudflare|workerd|internal)/, "workerd's JS (D1 binding, tracing helpers)"],
  [/^\(workerd's native APIs\)$/, "workerd's native APIs (fetch to D1, URL, Response, crypto.subtle, spans)"],
];

export function kindOf(module) {
  for (const [pattern, kind] of KINDS) if (pattern.test(module)) return kind;
  return `other: ${module}`;
}

/**
 * Self time of a profile by function, module and kind, in ms (and per request when `requests` is
 * given). `bundles` maps a script URL's file name (index.js) to its source map. `(idle)` is left
 * out: the isolate was waiting.
 */
export function summarise(cpuprofile, { bundles = {}, requests } = {}) {
  const { nodes, samples, timeDeltas } = cpuprofile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const dt = sampleUs(timeDeltas);
  const selfUs = new Map();
  for (const id of samples) selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  const label = new Map();
  const where = (frame) => {
    const key = `${frame.url}:${frame.lineNumber}:${frame.columnNumber}:${frame.functionName}`;
    let l = label.get(key);
    if (l) return l;
    const file = frame.url ? path.basename(frame.url.replace(/^file:\/\//, "")) : "";
    const bundle = bundles[file];
    if (bundle && frame.lineNumber >= 0) {
      const e = bundle.map.findEntry(frame.lineNumber, frame.columnNumber);
      if (e?.originalSource) {
        const index = bundle.sources.indexOf(e.originalSource);
        const source = bundle.names[index] ?? e.originalSource;
        const text = bundle.contents[index]?.split("\n")[e.originalLine] ?? "";
        const snippet = text
          .slice(Math.max(0, e.originalColumn - 0), e.originalColumn + 70)
          .trim()
          .replace(/\s+/g, " ");
        l = { module: moduleOf(source), fn: `${shortSource(source)}:${e.originalLine + 1} ${e.name ?? snippet}` };
      }
    }
    l ??= {
      module: frame.url
        ? frame.url.replace(/^file:\/\/.*\//, "")
        : /^\(.*\)$/.test(frame.functionName)
          ? frame.functionName
          : NATIVE,
      fn: `${frame.functionName || "(anonymous)"} ${frame.url ? `${path.basename(frame.url)}:${frame.lineNumber + 1}` : "(native)"}`,
    };
    label.set(key, l);
    return l;
  };
  const parent = new Map();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** The innermost function of src/ on a node's stack, or the leaf's kind of work when there is none. */
  const callerOf = (id) => {
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const l = where(byId.get(cur).callFrame);
      if (l.module.startsWith("src/")) return l.fn;
    }
    return `(no src/ frame) ${kindOf(where(byId.get(id).callFrame).module)}`;
  };
  const byFunction = new Map();
  const byModule = new Map();
  const byKind = new Map();
  const byCaller = new Map();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    if (node.callFrame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    totalUs += us;
    const { module, fn } = where(node.callFrame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    const kind = kindOf(module);
    byKind.set(kind, (byKind.get(kind) ?? 0) + us);
    const caller = callerOf(id);
    byCaller.set(caller, (byCaller.get(caller) ?? 0) + us);
  }
  const per = requests ? 1 / requests : undefined;
  const sorted = (m) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: us / 1000, perRequestUs: per ? us * per : undefined, share: us / totalUs }));
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    perRequestUs: per ? totalUs * per : undefined,
    requests,
    byFunction: sorted(byFunction),
    byModule: sorted(byModule),
    byKind: sorted(byKind),
    byCaller: sorted(byCaller),
  };
}

/** A Markdown table of the first `top` entries of a summary list. */
export function markdown(title, entries, top, { perRequest = true } = {}) {
  const rows = entries.slice(0, top);
  const head = perRequest ? `| ${title} | µs/request | ms | share |` : `| ${title} | ms | share |`;
  const sep = perRequest ? "|---|---:|---:|---:|" : "|---|---:|---:|";
  const line = (e) =>
    perRequest
      ? `| ${e.name.replaceAll("|", "\\|")} | ${e.perRequestUs?.toFixed(1) ?? "-"} | ${e.ms.toFixed(1)} | ${(e.share * 100).toFixed(1)} % |`
      : `| ${e.name.replaceAll("|", "\\|")} | ${e.ms.toFixed(2)} | ${(e.share * 100).toFixed(1)} % |`;
  return [head, sep, ...rows.map(line)].join("\n");
}

/** The bucket of `startupByModule` for V8 compiling module bodies in the profiling variant. */
export const COMPILE = "(compiling module bodies: the profiling variant only)";

/** esbuild's lazily initialised modules are methods named after their path: `"src/app.ts"() {...}`. */
const MODULE_INIT = /^(node_modules\/.+|src\/.+|.+\.(m?js|ts))$/;

/**
 * Start-up by module, for a bundle whose every module is lazily initialised (an entry that imports
 * the app dynamically: esbuild wraps each module in a function named after its path). Each sample
 * goes to the innermost module initialiser on its stack: a module's figure is the evaluation of its
 * own top-level code, the library calls it makes included (zod building its schemas, drizzle its
 * tables), the modules it imports excluded (they have their own). Samples outside every initialiser
 * are the first request's own work, given to the innermost function of src/ on their stack.
 */
export function startupByModule(cpuprofile, { bundles = {} } = {}) {
  const { nodes, samples, timeDeltas } = cpuprofile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const owner = new Map();
  const ownerOf = (id) => {
    if (owner.has(id)) return owner.get(id);
    let result;
    const node = byId.get(id);
    const name = node.callFrame.functionName;
    if (name === "(idle)") result = null;
    else if (/^\(.*\)$/.test(name)) result = name;
    // esbuild's `__init` calls a module's initialiser; its own time is V8 compiling that function
    // (the module's body) on its first call. The deployed bundle's module bodies are one top-level
    // function, compiled when workerd creates the isolate, before the first request: not start-up
    // as measured here, and not the module's evaluation.
    else if (name === "__init") result = COMPILE;
    else {
      let srcFrame;
      for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
        const frame = byId.get(cur).callFrame;
        if (MODULE_INIT.test(frame.functionName)) {
          result = `evaluate ${frame.functionName}`;
          break;
        }
        srcFrame ??= sourceOf(frame, bundles)?.startsWith("src/") ? frame : undefined;
      }
      if (!result) {
        const source = srcFrame && sourceOf(srcFrame, bundles);
        result = source ? `first request: ${source} ${srcFrame.functionName || "(anonymous)"}` : "first request: other";
      }
    }
    owner.set(id, result);
    return result;
  };
  const totals = new Map();
  let totalUs = 0;
  const dt = sampleUs(timeDeltas);
  for (const id of samples) {
    const who = ownerOf(id);
    if (who === null) continue;
    totals.set(who, (totals.get(who) ?? 0) + dt);
    totalUs += dt;
  }
  const entries = [...totals.entries()].sort((a, b) => b[1] - a[1]);
  const list = entries.map(([name, us]) => ({ name, ms: us / 1000, share: us / totalUs }));
  const byPackage = new Map();
  for (const e of list) {
    const m = e.name.match(/^evaluate (.*)$/);
    const key = m
      ? `evaluate ${moduleOf(m[1] ?? "").replace(/^src\/(modules\/[^/]+|[^/]+)\/.*$/, "src/$1/")}`
      : e.name.startsWith("first request")
        ? "first request (not module evaluation)"
        : e.name;
    byPackage.set(key, (byPackage.get(key) ?? 0) + e.ms);
  }
  return {
    totalMs: totalUs / 1000,
    byModule: list,
    byPackage: [...byPackage.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => ({ name, ms, share: ms / (totalUs / 1000) })),
  };
}

/** The source file (relative to the project) a frame's function comes from, through the bundle's source map. */
function sourceOf(frame, bundles) {
  const bundle = bundles[path.basename(frame.url.replace(/^file:\/\//, ""))];
  if (!bundle || frame.lineNumber < 0) return undefined;
  const e = bundle.map.findEntry(frame.lineNumber, frame.columnNumber);
  if (!e?.originalSource) return undefined;
  return bundle.names[bundle.sources.indexOf(e.originalSource)] ?? e.originalSource;
}

/**
 * The time one sample stands for: the median interval between samples. Every sample weighs the
 * same, rather than the time since the one before: when other processes take the CPU (a loaded
 * machine), the thread is not sampled while it waits, and the next sample would otherwise carry
 * the whole wait (one 40 ms sample in a module that takes 0.1 ms). So the figures approach CPU time.
 */
function sampleUs(timeDeltas) {
  const sorted = timeDeltas.filter((d) => d > 0).sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 0;
}
