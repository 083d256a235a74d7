/**
 * The counting pass's entry module: wraps a Worker (`./worker.js`: the built bundle, a baseline
 * bundle or the floor) and hands it an env whose `DB` counts D1 round trips and records each one,
 * and whose `DOCUMENTS` (R2) records its calls. Only the counting pass loads this; the timed pass
 * runs the Worker untouched.
 *
 * A round trip is one call that reaches D1: `batch`, `exec`, or `first`/`all`/`run`/`raw` on a
 * statement outside a batch. Every answer carries the count in `x-d1-calls`. A request sent with
 * `x-bench-trace: 1` is answered instead with a JSON description of what happened:
 *
 *   { status, contentType, body, calls, trace: [step, ...] }
 *
 * where each step is, in the order the Worker started them,
 *
 *   { kind: "all" | "first" | "run" | "raw", sql, params, args, group }   a statement outside a batch
 *   { kind: "batch", statements: [{ sql, params }, ...], group, failed? }  one batch (failed: it aborted)
 *   { kind: "exec", sql, group }
 *   { kind: "r2", method, args, group }                                   R2 (`DOCUMENTS`)
 *
 * `group` numbers the steps that ran at the same time: a step started while an earlier one was
 * still pending joins its group (the Worker awaited them together, e.g. `Promise.all`). Binary
 * parameters are written `{ $bytes: "<base64>" }`. The floor (bench/floor-worker.js) replays a
 * trace step for step.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import worker from "./worker.js";

const perRequest = new AsyncLocalStorage();

/** A JSON-safe copy of a bound value. */
function param(value) {
  if (value instanceof ArrayBuffer) value = new Uint8Array(value);
  if (ArrayBuffer.isView(value)) {
    const bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    let s = "";
    for (const b of bytes) s += String.fromCharCode(b);
    return { $bytes: btoa(s) };
  }
  if (typeof value === "bigint") return { $bigint: String(value) };
  return value;
}

/**
 * Counts (when `roundTrip`) and records one step of the current request around `call`; outside a
 * request (none here) it only calls.
 */
function step(record, roundTrip, call) {
  const state = perRequest.getStore();
  if (!state) return call();
  if (roundTrip) state.calls++;
  record.group = state.pending > 0 ? state.group : ++state.group;
  state.trace.push(record);
  state.pending++;
  const done = () => {
    state.pending--;
  };
  let result;
  try {
    result = call();
  } catch (err) {
    done();
    throw err;
  }
  // `then` on the side: the Worker gets the original promise, and a rejection stays its own (noted:
  // a guarded batch that aborts is a round trip the floor replays and lets fail too).
  Promise.resolve(result).then(done, () => {
    record.failed = true;
    done();
  });
  return result;
}

const REAL = Symbol("real statement");
const SQL = Symbol("sql");
const PARAMS = Symbol("params");

function recordingStatement(stmt, sql, params) {
  const run = (kind, args, call) => step({ kind, sql, params: params.map(param), args }, true, call);
  return {
    [REAL]: stmt,
    [SQL]: sql,
    [PARAMS]: params,
    bind: (...values) => recordingStatement(stmt.bind(...values), sql, values),
    first: (...args) => run("first", args, () => stmt.first(...args)),
    all: () => run("all", [], () => stmt.all()),
    run: () => run("run", [], () => stmt.run()),
    raw: (...args) => run("raw", args, () => stmt.raw(...args)),
  };
}

/** The binding, or a D1 session opened on it (every request runs in one: src/db/client.ts), recording alike. */
function recordingD1(db) {
  return {
    prepare: (sql) => recordingStatement(db.prepare(sql), sql, []),
    batch: (statements) =>
      step(
        {
          kind: "batch",
          statements: statements.map((s) => ({ sql: s[SQL], params: (s[PARAMS] ?? []).map(param) })),
        },
        true,
        () => db.batch(statements.map((s) => s[REAL] ?? s)),
      ),
    exec: (sql) => step({ kind: "exec", sql }, true, () => db.exec(sql)),
    dump: () => db.dump(),
    withSession: (start) => recordingD1(db.withSession(start)),
    getBookmark: () => db.getBookmark(),
  };
}

/** R2: every call recorded with its string arguments (keys, prefixes); none is a D1 round trip. */
function recordingR2(bucket) {
  return new Proxy(bucket, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      return (...args) =>
        step(
          { kind: "r2", method: String(name), args: args.map((a) => (typeof a === "string" ? a : null)) },
          false,
          () => value.apply(target, args),
        );
    },
  });
}

// One wrapped env per real env, so the app's per-env memoisation (deps, config) still holds.
const wrapped = new WeakMap();
function recordingEnv(env) {
  let e = wrapped.get(env);
  if (!e) {
    e = { ...env, DB: recordingD1(env.DB) };
    if (env.DOCUMENTS) e.DOCUMENTS = recordingR2(env.DOCUMENTS);
    wrapped.set(env, e);
  }
  return e;
}

export default {
  async fetch(request, env, ctx) {
    const state = { calls: 0, trace: [], pending: 0, group: 0 };
    const traced = request.headers.get("x-bench-trace") === "1";
    const res = await perRequest.run(state, () => worker.fetch(request, recordingEnv(env), ctx));
    // Read the whole body first: a streamed body could still be querying.
    const body = res.body === null ? null : await res.arrayBuffer();
    if (traced) {
      return Response.json({
        status: res.status,
        contentType: res.headers.get("content-type"),
        body: body === null ? null : new TextDecoder().decode(body).slice(0, 2000),
        calls: state.calls,
        trace: state.trace,
      });
    }
    const out = new Response(body, res);
    out.headers.set("x-d1-calls", String(state.calls));
    return out;
  },
};
