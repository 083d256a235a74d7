/**
 * The cost pass's entry module of `npm run bench:peak` (bench/peak.mjs): wraps the built Worker
 * (`./worker.js`) and hands it an env whose D1 bindings (`DB` and every `DB_SHARD_*`) count, per
 * request, the round trips and what D1 reports in each result's `meta`: `rows_read`, `rows_written`
 * and `duration` (the ms the database spent executing the SQL: a database runs one query at a time,
 * so this is the time the request holds its database). Only the cost pass loads this; the timed peak runs the Worker untouched.
 *
 * A round trip is one call that reaches D1: `batch`, `exec`, or `first`/`all`/`run`/`raw` on a
 * statement outside a batch. `first` and `raw` answer no `meta`: `first` runs as `all` (the same
 * statement, its first row); a `raw` read (a SELECT) runs once more as `all` for its meta, outside
 * the count; a `raw` write is counted as a round trip and in `x-d1-unmetered` (its rows unknown).
 * Every answer carries `x-d1-calls`, `x-d1-rows-read`, `x-d1-rows-written`, `x-d1-duration-ms` and
 * `x-d1-unmetered`. A `raw` read's duration is its `all` run's.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import worker from "./worker.js";

const perRequest = new AsyncLocalStorage();
const REAL = Symbol("real statement");
const SQL = Symbol("sql");

const isRead = (sql) => /^\s*(select|with\b(?![\s\S]*\b(insert|update|delete|replace)\b))/i.test(sql);

function meter(meta) {
  const state = perRequest.getStore();
  if (!state || !meta) return;
  state.read += meta.rows_read ?? 0;
  state.written += meta.rows_written ?? 0;
  state.duration += meta.duration ?? 0;
}

function call() {
  const state = perRequest.getStore();
  if (state) state.calls++;
}

function statement(stmt, sql) {
  return {
    [REAL]: stmt,
    [SQL]: sql,
    bind: (...values) => statement(stmt.bind(...values), sql),
    async first(column) {
      call();
      const result = await stmt.all();
      meter(result.meta);
      const row = result.results[0];
      if (row === undefined) return null;
      return column === undefined ? row : row[column];
    },
    async all() {
      call();
      const result = await stmt.all();
      meter(result.meta);
      return result;
    },
    async run() {
      call();
      const result = await stmt.run();
      meter(result.meta);
      return result;
    },
    async raw(options) {
      call();
      const rows = await stmt.raw(options);
      if (isRead(sql)) {
        const again = await stmt.all();
        meter(again.meta);
      } else {
        const state = perRequest.getStore();
        if (state) state.unmetered++;
      }
      return rows;
    },
  };
}

function database(db) {
  return {
    prepare: (sql) => statement(db.prepare(sql), sql),
    async batch(statements) {
      call();
      const results = await db.batch(statements.map((s) => s[REAL] ?? s));
      for (const r of results) meter(r.meta);
      return results;
    },
    async exec(sql) {
      call();
      return db.exec(sql);
    },
    dump: () => db.dump(),
    withSession: (start) => database(db.withSession(start)),
    getBookmark: () => db.getBookmark(),
  };
}

// One wrapped env per real env, so the app's per-env memoisation (deps, config) still holds.
const wrapped = new WeakMap();
function meteredEnv(env) {
  let e = wrapped.get(env);
  if (!e) {
    e = { ...env };
    for (const name of Object.keys(env))
      if (name === "DB" || name.startsWith("DB_SHARD_")) e[name] = database(env[name]);
    wrapped.set(env, e);
  }
  return e;
}

export default {
  async fetch(request, env, ctx) {
    const state = { calls: 0, read: 0, written: 0, duration: 0, unmetered: 0 };
    const res = await perRequest.run(state, () => worker.fetch(request, meteredEnv(env), ctx));
    // Read the whole body first: a streamed body could still be querying.
    const body = res.body === null ? null : await res.arrayBuffer();
    const out = new Response(body, res);
    out.headers.set("x-d1-calls", String(state.calls));
    out.headers.set("x-d1-rows-read", String(state.read));
    out.headers.set("x-d1-rows-written", String(state.written));
    out.headers.set("x-d1-duration-ms", String(state.duration));
    out.headers.set("x-d1-unmetered", String(state.unmetered));
    return out;
  },
};
