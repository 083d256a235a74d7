/**
 * The live board's hub: a Durable Object per school (src/modules/dismissal/hub.ts) holds the
 * subscribers; the verbs publish to it after their commit. No watcher polls D1; a change reaches
 * every subscriber within a second; the hub restarted mid-afternoon, every subscriber resumes with
 * `after` (or Last-Event-ID) and misses nothing, none twice. Dates follow the test clock (Monday 23
 * November 2026, Mexico City; elementary's dismissal window is open at 14:40).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { makeFamily } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO } from "./helpers";

const NORTH = 1;
const D = "/api/v1/dismissal";
const TODAY = "2026-11-23";
const { t, measure } = countingTestApp();
const before = t.clock.current;
/** 14:40 in Mexico City: inside elementary's dismissal window. */
t.clock.current = new Date("2026-11-23T20:40:00.000Z");
afterAll(() => {
  t.clock.current = before;
});

type Event = { seq: number; type: string; studentId: number | null };

const staff = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const gate = () => t.token(DEMO.northAdmin.id, { [NORTH]: grantsOf("gate").map((p) => p.name) });
const parent = (f: { userId: number }) => t.token(f.userId, { [NORTH]: grantsOf("parent").map((p) => p.name) });

async function release(f: { studentId: number; parentId: number }) {
  const res = await t.request(`${D}/release`, {
    method: "POST",
    token: await gate(),
    school: NORTH,
    body: { studentId: f.studentId, collector: { kind: "guardian", id: f.parentId } },
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** A WebSocket watcher: every message it got, in order. */
async function socket(token: string, after?: number) {
  const res = await t.request(`${D}/live?date=${TODAY}${after === undefined ? "" : `&after=${after}`}`, {
    token,
    school: NORTH,
    headers: { upgrade: "websocket" },
  });
  expect(res.status).toBe(101);
  const ws = res.webSocket;
  if (!ws) throw new Error("no WebSocket");
  const messages: (Event & { board?: unknown })[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(String(e.data)));
    for (const w of waiters.splice(0)) w();
  });
  ws.accept();
  /** Resolves once `ok(messages)` holds (or fails after `ms`). */
  const until = async (ok: (m: typeof messages) => boolean, ms = 3000) => {
    const end = Date.now() + ms;
    while (!ok(messages)) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`not seen in ${ms} ms: ${JSON.stringify(messages.map((m) => [m.seq, m.type]))}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, left);
      });
    }
  };
  const events = () => messages.filter((m) => m.type !== "snapshot");
  const last = () => Math.max(0, ...messages.map((m) => m.seq));
  return { ws, messages, events, last, until };
}

/** An SSE watcher: its events, read until `done`. */
async function sse(token: string, lastEventId?: number) {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  const res = await t.request(`${D}/live?date=${TODAY}`, { token, school: NORTH, headers });
  expect(res.status).toBe(200);
  const reader = res.body?.getReader();
  if (!reader) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  const events = () =>
    [...text.matchAll(/id: (\d+)\nevent: change\ndata: (.*)\n/g)].map((m) => JSON.parse(m[2] ?? "{}") as Event);
  const until = async (ok: (e: Event[]) => boolean, ms = 3000) => {
    const end = Date.now() + ms;
    while (!ok(events())) {
      if (Date.now() > end) throw new Error(`not seen in ${ms} ms: ${text}`);
      const read = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 200))]);
      if (read?.done) throw new Error("the stream ended");
      if (read?.value) text += decoder.decode(read.value);
    }
  };
  const last = () => Math.max(lastEventId ?? 0, ...events().map((e) => e.seq));
  return { events, until, last, close: () => reader.cancel() };
}

/** The day's events after `after` as the JSON answer gives them (D1's log: the truth). */
async function logAfter(token: string, after: number) {
  const res = await t.request(`${D}/live?date=${TODAY}&after=${after}`, { token, school: NORTH });
  return (await readJson<{ events: Event[] }>(res)).events;
}

const hub = () => env.DISMISSAL_LIVE.getByName(String(NORTH));

const seqs = (events: Event[]) => events.map((e) => e.seq);

describe("the live board's hub", () => {
  it("holds the watchers (no D1 read while nothing changes) and brings a change to each within a second", async () => {
    const a = await makeFamily(t, NORTH);
    const watcher = await socket(await staff());
    await watcher.until((m) => m.some((x) => x.type === "snapshot"));
    // Idle: the Worker reads nothing while the watcher waits (a poll would read twice a second).
    const { calls } = await measure(() => new Promise((r) => setTimeout(r, 1200)));
    expect(calls).toBe(0);
    const watchers = await (await hub().fetch("https://hub/watchers")).json<{ websockets: number }>();
    expect(watchers.websockets).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    await release(a);
    await watcher.until((m) => m.some((x) => x.type === "released" && x.studentId === a.studentId), 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    watcher.ws.close();
  });

  it("restarted mid-afternoon: every subscriber resumes with `after` or Last-Event-ID and misses nothing, none twice", async () => {
    const a = await makeFamily(t, NORTH);
    const b = await makeFamily(t, NORTH);
    const c = await makeFamily(t, NORTH);
    const staffToken = await staff();
    const parentToken = await parent(a);
    const start = (await logAfter(staffToken, 0)).at(-1)?.seq ?? 0;

    // Three subscribers: the office (WebSocket and SSE), and a's parent (their child only).
    const office = await socket(staffToken);
    const officeSse = await sse(staffToken, start);
    const mine = await socket(parentToken);
    await office.until((m) => m.some((x) => x.type === "snapshot"));
    await mine.until((m) => m.some((x) => x.type === "snapshot"));
    const held = await (await hub().fetch("https://hub/watchers")).json<{ websockets: number; streams: number }>();
    expect(held.websockets).toBeGreaterThanOrEqual(2);
    expect(held.streams).toBeGreaterThanOrEqual(1);

    // a and b leave; everyone sees what they may.
    await t.request(`${D}/arrival`, { method: "POST", token: parentToken, school: NORTH, body: {} });
    await release(a);
    await release(b);
    await office.until((m) => m.some((x) => x.type === "released" && x.studentId === b.studentId));
    await officeSse.until((e) => e.some((x) => x.type === "released" && x.studentId === b.studentId));
    await mine.until((m) => m.some((x) => x.type === "released" && x.studentId === a.studentId));

    // The hub goes away (evicted, redeployed): its in-memory streams are lost.
    await runInDurableObject(hub(), (_instance, state) => state.abort("restart")).catch(() => undefined);
    // A fresh instance: the SSE streams it held are gone.
    expect((await (await hub().fetch("https://hub/watchers")).json<{ streams: number }>()).streams).toBe(0);
    const seen = { office: office.last(), sse: officeSse.last(), mine: mine.last() };
    office.ws.close();
    mine.ws.close();
    await officeSse.close();

    // While nobody is connected: c arrives and leaves.
    await t.request(`${D}/arrival`, { method: "POST", token: await parent(c), school: NORTH, body: {} });
    await release(c);

    // Each resumes where it was; a change after the reconnect comes live.
    const office2 = await socket(staffToken, seen.office);
    const sse2 = await sse(staffToken, seen.sse);
    const mine2 = await socket(parentToken, seen.mine);
    const d = await makeFamily(t, NORTH);
    await release(d);
    await office2.until((m) => m.some((x) => x.type === "released" && x.studentId === d.studentId));
    await sse2.until((e) => e.some((x) => x.type === "released" && x.studentId === d.studentId));
    const all = await logAfter(staffToken, start);
    const theirs = await logAfter(parentToken, start);
    expect(seqs(all).at(-1)).toBeGreaterThan(seen.office);

    // The office: every event of the day after it started, in order, none twice, across the restart.
    expect(seqs([...office.events(), ...office2.events()])).toEqual(seqs(all));
    expect(office2.messages.some((m) => m.type === "snapshot")).toBe(false);
    expect(seqs([...officeSse.events(), ...sse2.events()])).toEqual(seqs(all));
    // The parent: only their child's, all of them.
    await new Promise((r) => setTimeout(r, 300));
    expect(seqs([...mine.events(), ...mine2.events()])).toEqual(seqs(theirs));
    expect(theirs.every((e) => e.studentId === a.studentId || e.studentId === null)).toBe(true);
    expect(theirs.map((e) => e.type)).toEqual(["arrival", "released"]);
    office2.ws.close();
    mine2.ws.close();
    await sse2.close();
  });

  it("a subscriber joining while changes commit gets each once, in order", async () => {
    const families = await Promise.all([1, 2, 3, 4, 5, 6].map(() => makeFamily(t, NORTH)));
    const token = await staff();
    const start = (await logAfter(token, 0)).at(-1)?.seq ?? 0;
    // Releases and subscriptions interleaved: each subscription starts between commits.
    const watchers: Awaited<ReturnType<typeof socket>>[] = [];
    for (const f of families) {
      watchers.push(await socket(token, start));
      await release(f);
    }
    const all = await logAfter(token, start);
    for (const w of watchers) {
      await w.until((m) => m.filter((x) => x.type !== "snapshot").length >= all.length);
      expect(seqs(w.events())).toEqual(seqs(all));
      w.ws.close();
    }
  });

  it("announces a bus leaving on its run to the office once, not on a guardian's stream", async () => {
    const route = await makeRoute(t, NORTH, { riders: [["Dora", "Departs"]] });
    const rider = await makeFamily(t, NORTH, { studentId: route.studentIds[0] });
    const token = await staff();
    const start = (await logAfter(token, 0)).at(-1)?.seq ?? 0;
    const office = await socket(token, start);
    const family = await socket(await parent(rider), start);
    const run = () => t.request(`/api/v1/route/${route.routeId}/run`, { method: "POST", token });
    expect((await run()).status).toBe(201);
    await office.until((m) => m.some((x) => x.type === "bus-departed"), 1000);
    expect(office.events().find((e) => e.type === "bus-departed")).toMatchObject({
      studentId: null,
      routeId: route.routeId,
    });
    // Started again: the same run, no second departure.
    expect((await run()).status).toBeLessThan(300);
    const events = await logAfter(token, start);
    expect(events.filter((e) => e.type === "bus-departed")).toHaveLength(1);
    expect(family.events().filter((e) => e.type === "bus-departed")).toEqual([]);
    expect(await logAfter(await parent(rider), start)).toEqual([]);
    office.ws.close();
    family.ws.close();
  });
});
