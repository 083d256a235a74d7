/**
 * The counting pass's entry module: wraps a Worker (`./worker.js`, the built bundle or the floor)
 * and hands it an env whose `DB` counts D1 round trips, reported in the `x-d1-calls` response
 * header. A round trip is one call that reaches D1: `batch`, `exec`, or `first`/`all`/`run`/`raw`
 * on a statement outside a batch. Only the counting pass loads this; the timed pass runs the
 * bundle untouched.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import worker from "./worker.js";

const perRequest = new AsyncLocalStorage();
const countCall = () => {
  const counter = perRequest.getStore();
  if (counter) counter.calls++;
};

const REAL = Symbol("real statement");

function countingStatement(stmt) {
  return {
    [REAL]: stmt,
    bind: (...values) => countingStatement(stmt.bind(...values)),
    first: (...args) => {
      countCall();
      return stmt.first(...args);
    },
    all: () => {
      countCall();
      return stmt.all();
    },
    run: () => {
      countCall();
      return stmt.run();
    },
    raw: (...args) => {
      countCall();
      return stmt.raw(...args);
    },
  };
}

function countingD1(db) {
  return {
    prepare: (sql) => countingStatement(db.prepare(sql)),
    batch: (statements) => {
      countCall();
      return db.batch(statements.map((s) => s[REAL] ?? s));
    },
    exec: (sql) => {
      countCall();
      return db.exec(sql);
    },
    dump: () => db.dump(),
    withSession: () => {
      throw new Error("withSession is not counted by the benchmark");
    },
  };
}

// One wrapped env per real env, so the app's per-env memoisation (deps, config) still holds.
const wrapped = new WeakMap();
function countingEnv(env) {
  let e = wrapped.get(env);
  if (!e) {
    e = { ...env, DB: countingD1(env.DB) };
    wrapped.set(env, e);
  }
  return e;
}

export default {
  async fetch(request, env, ctx) {
    const counter = { calls: 0 };
    const res = await perRequest.run(counter, () => worker.fetch(request, countingEnv(env), ctx));
    // Read the whole body first: a streamed body could still be querying.
    const body = res.body === null ? null : await res.arrayBuffer();
    const out = new Response(body, res);
    out.headers.set("x-d1-calls", String(counter.calls));
    return out;
  },
};
