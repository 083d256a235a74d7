/**
 * Read replicas (D1's Sessions API): every request runs its queries in one D1 session, from the
 * `x-d1-bookmark` the client sent (it reads what it wrote, on any replica), else a GET/HEAD from any
 * replica and anything else from the primary; every answer carries where the session got to. Cron
 * runs and queue batches run in a session from the primary. The local D1 supports sessions (its
 * bookmarks advance with each query), so what is checked here is which session each unit of work
 * opens, that every query goes through it, and what the answers say.
 */
import { createMessageBatch, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { d1 } from "../src/db/client";
import { handleQueue } from "../src/jobs/queue";
import { runScheduled } from "../src/jobs/scheduled";
import { uniq } from "./fixtures";
import { countingTestApp, DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/**
 * The D1 binding, recording each session opened on it (where it starts) and where each statement
 * was prepared or batch sent: on the binding itself, or in a session.
 */
function recordingD1() {
  const seen = { starts: [] as string[], direct: 0, inSession: 0 };
  const record = <B extends D1Database | D1DatabaseSession>(target: B, session: boolean): B =>
    new Proxy(target, {
      get(real, prop) {
        if (prop === "prepare" || prop === "batch") {
          if (session) seen.inSession++;
          else seen.direct++;
        }
        if (prop === "withSession" && "withSession" in real) {
          return (start: string) => {
            seen.starts.push(start);
            return record(real.withSession(start), true);
          };
        }
        const value = Reflect.get(real, prop, real);
        return typeof value === "function" ? value.bind(real) : value;
      },
    });
  /** Forgets what was seen so far. */
  const reset = () => {
    seen.starts = [];
    seen.direct = 0;
    seen.inSession = 0;
  };
  return { binding: record(env.DB, false), seen, reset };
}

const recording = recordingD1();
const t = makeTestApp({ db: d1(recording.binding) });
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
// The first request builds the OpenAPI document its answer is checked against (a GET of its own).
await t.request("/api/openapi.json");

async function createDocument(token: string, headers: Record<string, string> = {}) {
  const res = await t.request("/api/v1/documents", {
    method: "POST",
    token,
    school: NORTH,
    headers,
    body: { name: "Horario", slug: `${NORTH}/documents/${uniq("replica")}.pdf` },
  });
  expect(res.status).toBe(201);
  return { res, id: ((await res.json()) as { id: number }).id };
}

describe("a request's D1 session", () => {
  it("the bookmark round trip: a write answers a bookmark from the primary; a read sent with it starts there and answers one not older", async () => {
    const token = await admin();
    recording.reset();
    const { res: created, id } = await createDocument(token);
    const written = created.headers.get("x-d1-bookmark");
    expect(written).toMatch(BOOKMARK);
    expect(recording.seen.starts).toEqual(["first-primary"]);

    recording.reset();
    const read = await t.request(`/api/v1/documents/${id}`, {
      token,
      school: NORTH,
      headers: { "x-d1-bookmark": written ?? "" },
    });
    expect(read.status).toBe(200);
    expect(recording.seen.starts).toEqual([written]);
    const after = read.headers.get("x-d1-bookmark");
    expect(after).toMatch(BOOKMARK);
    // Bookmarks are fixed-width hex: ordered as strings.
    expect(after && written && after >= written).toBe(true);
  });

  it("read-your-writes through two requests: the GET sent with the POST's bookmark sees the record", async () => {
    const token = await admin();
    const name = `Menú ${uniq("ryw")}`;
    const created = await t.request("/api/v1/documents", {
      method: "POST",
      token,
      school: NORTH,
      body: { name, slug: `${NORTH}/documents/${uniq("ryw")}.pdf` },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const bookmark = created.headers.get("x-d1-bookmark") ?? "";
    recording.reset();
    const read = await t.request(`/api/v1/documents/${id}`, {
      token,
      school: NORTH,
      headers: { "x-d1-bookmark": bookmark },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { name: string }).name).toBe(name);
    // Every query of the request went through the session that started at the bookmark.
    expect(recording.seen.starts).toEqual([bookmark]);
    expect(recording.seen.direct).toBe(0);
    expect(recording.seen.inSession).toBeGreaterThan(0);
  });

  it("without a bookmark, a GET or HEAD reads from any replica and any other method starts at the primary", async () => {
    const token = await admin();
    const { id } = await createDocument(token);
    recording.reset();
    expect((await t.request(`/api/v1/documents/${id}`, { token, school: NORTH })).status).toBe(200);
    expect((await t.request(`/api/v1/documents/${id}`, { method: "HEAD", token, school: NORTH })).status).toBe(200);
    const removed = await t.request(`/api/v1/documents/${id}`, { method: "DELETE", token, school: NORTH });
    expect(removed.status).toBe(204);
    expect(removed.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    expect(recording.seen.starts).toEqual(["first-unconstrained", "first-unconstrained", "first-primary"]);
    expect(recording.seen.direct).toBe(0);
  });

  it("a malformed bookmark is ignored (as if none were sent), never a 400 or a 500; the answer carries a good one", async () => {
    const token = await admin();
    const { id } = await createDocument(token);
    for (const bad of [
      "garbage",
      "00000000-00000041-00000000",
      `${"0".repeat(8)}-${"z".repeat(8)}-x`,
      "first-primary",
    ]) {
      recording.reset();
      const read = await t.request(`/api/v1/documents/${id}`, {
        token,
        school: NORTH,
        headers: { "x-d1-bookmark": bad },
      });
      expect(read.status, bad).toBe(200);
      expect(read.headers.get("x-d1-bookmark"), bad).toMatch(BOOKMARK);
      expect(recording.seen.starts, bad).toEqual(["first-unconstrained"]);
    }
    recording.reset();
    const write = await createDocument(token, { "x-d1-bookmark": "first-unconstrained" });
    expect(write.res.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    expect(recording.seen.starts).toEqual(["first-primary"]);
  });

  it("problem answers and 304s carry the bookmark too", async () => {
    const token = await admin();
    const { res: created, id } = await createDocument(token);
    const bookmark = created.headers.get("x-d1-bookmark") ?? "";

    const missing = await t.request("/api/v1/documents/999999", { token, school: NORTH });
    expect(missing.status).toBe(404);
    await problem(missing);
    expect(missing.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);

    // Refused before any query: the bookmark sent is where the session stands.
    const anonymous = await t.request(`/api/v1/documents/${id}`, { headers: { "x-d1-bookmark": bookmark } });
    expect(anonymous.status).toBe(401);
    await problem(anonymous);
    expect(anonymous.headers.get("x-d1-bookmark")).toBe(bookmark);

    const first = await t.request(`/api/v1/documents/${id}`, { token, school: NORTH });
    const fresh = await t.request(`/api/v1/documents/${id}`, {
      token,
      school: NORTH,
      headers: { "if-none-match": first.headers.get("etag") ?? "", "x-d1-bookmark": bookmark },
    });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });

  it("a read is still one D1 round trip, with a bookmark or without", async () => {
    const { t: counted, measure } = countingTestApp();
    const token = await counted.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const created = await counted.request("/api/v1/documents", {
      method: "POST",
      token,
      school: NORTH,
      body: { name: "Uno", slug: `${NORTH}/documents/${uniq("trip")}.pdf` },
    });
    const { id } = (await created.json()) as { id: number };
    const bookmark = created.headers.get("x-d1-bookmark") ?? "";
    for (const headers of [{}, { "x-d1-bookmark": bookmark }] as Record<string, string>[]) {
      const { res, calls } = await measure(() =>
        counted.request(`/api/v1/documents/${id}`, { token, school: NORTH, headers }),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
      expect(calls).toBe(1);
    }
  });
});

describe("jobs and queue consumers", () => {
  it("a cron run's queries go through one session from the primary", async () => {
    const jobs = recordingD1();
    await runScheduled({ ...t.deps, db: d1(jobs.binding) }, "*/5 * * * *");
    expect(jobs.seen.starts).toEqual(["first-primary"]);
    expect(jobs.seen.direct).toBe(0);
    expect(jobs.seen.inSession).toBeGreaterThan(0);
  });

  it("a queue batch's queries go through one session from the primary", async () => {
    const consumer = recordingD1();
    // An import that does not exist: the consumer looks it up (and finds nothing to do).
    const batch = createMessageBatch("school-bulk", [
      {
        id: uniq("replica-msg"),
        body: { bulkProcessId: 999_999, schoolId: NORTH },
        timestamp: new Date(),
        attempts: 1,
      },
    ]);
    await handleQueue({ ...t.deps, db: d1(consumer.binding) }, batch);
    expect(consumer.seen.starts).toEqual(["first-primary"]);
    expect(consumer.seen.direct).toBe(0);
    expect(consumer.seen.inSession).toBeGreaterThan(0);
  });
});
