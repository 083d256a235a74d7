/**
 * The floor: the least a Worker can do to give the answer an endpoint gives. No framework, no auth,
 * no validation, no shaping: it replays the D1 statements (and R2 calls) the endpoint itself made,
 * captured by the counting pass (bench/count-d1.mjs), with the same method (`all`, `first`, `run`,
 * `raw`), the same batches and the same concurrency, and answers the endpoint's status with the rows
 * as JSON. So an endpoint's "× floor" is the price of routing, auth, validation, shaping and logging
 * alone, on top of exactly its own database work.
 *
 * `GET|POST|... /__floor/<row>[?u=<unique>]` replays `env.FLOOR_PLANS[<row>]`:
 *
 *   { status, unique?, trace: [step, ...] }   (steps as bench/count-d1.mjs records them)
 *
 * Writes that need a unique value per request (a new document's slug): the row's request puts its
 * unique value in `u`, and every string parameter has the captured request's value (`unique`)
 * replaced by it, as the API row's own request does. Random tokens the endpoint made per request
 * (`fresh`: a new record's public slug) are replaced, wherever they appear, by new random tokens of
 * the same length. A UUID the Worker makes itself (a notification's key) is made anew per replay
 * when the plan says `uuids`: each captured UUID becomes one new UUID for the whole request. The
 * request body, if any, is not read.
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const PREFIX = "/__floor/";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A random token of `length` characters (base64url's alphabet). */
function randomToken(length) {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 63];
  return out;
}

function param(value) {
  if (value !== null && typeof value === "object") {
    if ("$bytes" in value) return Uint8Array.from(atob(value.$bytes), (c) => c.charCodeAt(0));
    if ("$bigint" in value) return Number(value.$bigint);
  }
  return value;
}

function statement(db, { sql, params }, swap) {
  const values = params.map((p) => (swap && typeof p === "string" ? swap(p) : param(p)));
  const stmt = db.prepare(sql);
  return values.length ? stmt.bind(...values) : stmt;
}

/** One step: its result's rows (or object, or raw arrays), as the API would read them. */
async function replay(env, step, swap) {
  switch (step.kind) {
    case "batch": {
      try {
        const results = await env.DB.batch(step.statements.map((s) => statement(env.DB, s, swap)));
        return results.map((r) => r.results);
      } catch (err) {
        // A batch the endpoint's guard aborted (a boarding recorded already) aborts here too.
        if (step.failed) return null;
        throw err;
      }
    }
    case "all":
      return (await statement(env.DB, step, swap).all()).results;
    case "first":
      return statement(env.DB, step, swap).first(...step.args);
    case "run":
      return (await statement(env.DB, step, swap).run()).meta;
    case "raw":
      return statement(env.DB, step, swap).raw(...step.args);
    case "exec":
      return env.DB.exec(step.sql);
    case "r2": {
      const result = await env.DOCUMENTS[step.method](...step.args);
      return result && typeof result === "object" ? { key: result.key, size: result.size } : result;
    }
    default:
      throw new Error(`the floor cannot replay a ${step.kind} step`);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const plan = env.FLOOR_PLANS?.[url.pathname.slice(PREFIX.length)];
    if (!plan) return new Response("no floor plan for this row", { status: 404 });
    const u = url.searchParams.get("u");
    const swaps = [];
    if (plan.unique && u) swaps.push([plan.unique, u]);
    for (const token of plan.fresh ?? []) swaps.push([token, randomToken(token.length)]);
    const renewed = new Map();
    const uuids = (p) =>
      p.replace(UUID, (old) => {
        if (!renewed.has(old)) renewed.set(old, crypto.randomUUID());
        return renewed.get(old);
      });
    const swap =
      swaps.length || plan.uuids
        ? (p) => {
            const swapped = swaps.reduce((s, [from, to]) => s.replaceAll(from, to), p);
            return plan.uuids ? uuids(swapped) : swapped;
          }
        : undefined;
    const out = [];
    // Steps of one group ran together (Promise.all); groups one after the other.
    for (let i = 0; i < plan.trace.length; ) {
      const group = plan.trace[i].group;
      const together = [];
      for (; i < plan.trace.length && plan.trace[i].group === group; i++)
        together.push(replay(env, plan.trace[i], swap));
      out.push(...(await Promise.all(together)));
    }
    if (plan.status === 204) return new Response(null, { status: 204 });
    return Response.json(out.length === 1 ? out[0] : out, { status: plan.status });
  },
};
