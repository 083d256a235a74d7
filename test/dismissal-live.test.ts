/**
 * The live board's hub: a Durable Object per school (src/modules/dismissal/hub.ts) holds the
 * subscribers; the verbs publish to it after their commit. No watcher polls D1; a change reaches
 * every subscriber within a second; the hub restarted mid-afternoon, every subscriber resumes with
 * `after` (or Last-Event-ID) and misses nothing, none twice. Dates follow the test clock (Monday 23
 * November 2026, Mexico City; elementary's dismissal window is open at 14:40).
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { roleUsers, users } from "../src/db/schema/core";
import { delegates } from "../src/db/schema/delegate";
import { guardians } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { grantsOf } from "../src/modules";
import { fixturePhone, readJson } from "./fixture-kit";
import { makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
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
  const messages: (Event & { board?: { students: { studentId: number }[] } })[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(String(e.data)));
    for (const w of waiters.splice(0)) w();
  });
  const closing = new Promise<number>((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
  /** The close code the hub sent, waiting at most `ms` from now (-1: still open). */
  const closed = (ms = 3000) => Promise.race([closing, new Promise<number>((r) => setTimeout(() => r(-1), ms))]);
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
  return { ws, messages, events, last, until, closed };
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
  /** Reads until the hub ends the stream (true), or `ms` pass (false). */
  const ended = async (ms = 3000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const read = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 200))]);
      if (read?.done) return true;
      if (read?.value) text += decoder.decode(read.value);
    }
    return false;
  };
  return { events, until, last, ended, close: () => reader.cancel() };
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

/** The link between a parent profile and a student. */
async function linkOf(parentId: number, studentId: number) {
  const [link] = await t.db
    .select({ id: guardians.id })
    .from(guardians)
    .where(and(eq(guardians.parentId, parentId), eq(guardians.studentId, studentId)));
  if (!link) throw new Error("no link");
  return link.id;
}

/** A parent guardian of two children (`a`'s, and a sibling whose own parent collects them). */
async function twoChildren() {
  const a = await makeFamily(t, NORTH);
  const sib = await makeFamily(t, NORTH);
  await t.db.insert(guardians).values({ schoolId: NORTH, studentId: sib.studentId, parentId: a.parentId });
  return { a, sib, link: await linkOf(a.parentId, sib.studentId) };
}

describe("a rule holds after every change of the facts it reads: who may still watch", () => {
  const changes: Record<string, (link: number) => { method: string; path: string; body?: unknown }> = {
    removed: (link: number) => ({ method: "DELETE", path: `/api/v1/student-guardian/${link}` }),
    restricted: (link: number) => ({
      method: "PATCH",
      path: `/api/v1/student-guardian/${link}/restriction`,
      body: { restricted: true, reason: "Court order 2026/211" },
    }),
  };
  for (const [name, change] of Object.entries(changes)) {
    it(`a guardian ${name} from a child: their open WebSocket and SSE stream stop carrying that child's events`, async () => {
      const { a, sib, link } = await twoChildren();
      const token = await parent(a);
      const ws = await socket(token);
      await ws.until((m) => m.some((x) => x.type === "snapshot"));
      const snap = ws.messages.find((x) => x.type === "snapshot")?.board?.students.map((x) => x.studentId);
      expect(snap?.sort()).toEqual([a.studentId, sib.studentId].sort());
      const stream = await sse(token, ws.last());
      const issued = await t.request(`${D}/live/ticket`, { method: "POST", token, school: NORTH });
      const { ticket } = await readJson<{ ticket: string }>(issued);

      const { method, path, body } = change(link);
      const res = await t.request(path, { method, token: await staff(), school: NORTH, body });
      expect(res.status, await res.clone().text()).toBeLessThan(300);

      // The sibling leaves first, then their own child: the second arrives, the first never did.
      await release(sib);
      await release(a);
      await ws.until((m) => m.some((x) => x.type === "released" && x.studentId === a.studentId));
      await stream.until((e) => e.some((x) => x.type === "released" && x.studentId === a.studentId));
      expect(ws.events().filter((e) => e.studentId === sib.studentId)).toEqual([]);
      expect(stream.events().filter((e) => e.studentId === sib.studentId)).toEqual([]);
      // A stream opened now (a ticket, a reconnect) shows the child no more either.
      const again = await socket(token);
      await again.until((m) => m.some((x) => x.type === "snapshot"));
      const now = again.messages.find((x) => x.type === "snapshot")?.board?.students.map((x) => x.studentId);
      expect(now).toEqual([a.studentId]);
      // A ticket issued before the change opens a board without the child.
      const viaTicket = await t.request(`${D}/live?date=${TODAY}&ticket=${ticket}`);
      const board = (await readJson<{ board: { students: { studentId: number }[] } }>(viaTicket)).board;
      expect(board.students.map((x) => x.studentId)).toEqual([a.studentId]);
      ws.ws.close();
      again.ws.close();
      await stream.close();
    });
  }

  it("a guardian removed from their only child: the hub closes their WebSocket and ends their SSE stream", async () => {
    const a = await makeFamily(t, NORTH);
    const token = await parent(a);
    const ws = await socket(token);
    await ws.until((m) => m.some((x) => x.type === "snapshot"));
    const stream = await sse(token, ws.last());
    const res = await t.request(`/api/v1/student-guardian/${await linkOf(a.parentId, a.studentId)}`, {
      method: "DELETE",
      token: await staff(),
      school: NORTH,
    });
    expect(res.status).toBe(204);
    // The school still releases the child (to another guardian): the former one hears nothing.
    const other = await makeFamily(t, NORTH, { studentId: a.studentId });
    await release({ studentId: a.studentId, parentId: other.parentId });
    expect(await ws.closed()).toBe(4403);
    expect(await stream.ended()).toBe(true);
    expect(ws.events()).toEqual([]);
    expect(stream.events()).toEqual([]);
  });

  it("a guardian removed from their only child hears no school-wide event after: a reunification closes their stream", async () => {
    const a = await makeFamily(t, NORTH);
    const ws = await socket(await parent(a));
    await ws.until((m) => m.some((x) => x.type === "snapshot"));
    const removed = await t.request(`/api/v1/student-guardian/${await linkOf(a.parentId, a.studentId)}`, {
      method: "DELETE",
      token: await staff(),
      school: NORTH,
    });
    expect(removed.status).toBe(204);
    const office = await staff();
    const started = await t.request(`${D}/reunification`, {
      method: "POST",
      token: office,
      school: NORTH,
      body: { reason: "Drill" },
    });
    expect(started.status, await started.clone().text()).toBe(201);
    try {
      expect(await ws.closed()).toBe(4403);
      expect(ws.events()).toEqual([]);
    } finally {
      const ended = await t.request(`${D}/reunification`, { method: "DELETE", token: office, school: NORTH });
      expect(ended.status).toBeLessThan(300);
    }
  });

  it("a delegation withdrawn: the delegate's open stream stops carrying the parent's child", async () => {
    const a = await makeFamily(t, NORTH);
    const helper = await makeFamily(t, NORTH);
    await makeDelegate(t, NORTH, a.parentId, helper.userId);
    const ws = await socket(await parent(helper));
    await ws.until((m) => m.some((x) => x.type === "snapshot"));
    const snap = ws.messages.find((x) => x.type === "snapshot")?.board?.students.map((x) => x.studentId);
    expect(snap?.sort()).toEqual([a.studentId, helper.studentId].sort());
    await t.db.delete(delegates).where(and(eq(delegates.parentId, a.parentId), eq(delegates.userId, helper.userId)));
    await release(a);
    await release(helper);
    await ws.until((m) => m.some((x) => x.type === "released" && x.studentId === helper.studentId));
    expect(ws.events().filter((e) => e.studentId === a.studentId)).toEqual([]);
    ws.ws.close();
  });

  it("a staff member whose role is taken: the open stream closes at the next change, a new one is the school's no more", async () => {
    const [member] = await t.db
      .insert(users)
      .values(withSearch(users, { phone: fixturePhone(), firstName: "Gus", lastName: "Gate", status: "active" }))
      .returning({ id: users.id });
    if (!member) throw new Error("no user");
    await t.db.insert(roleUsers).values({ schoolId: NORTH, userId: member.id, roleId: 7 });
    // Their token (10 minutes) still carries the gate role's permissions after it is taken.
    const token = await t.token(member.id, { [NORTH]: grantsOf("gate").map((p) => p.name) });
    const a = await makeFamily(t, NORTH);
    const ws = await socket(token);
    await ws.until((m) => m.some((x) => x.type === "snapshot"));
    expect(ws.messages.find((x) => x.type === "snapshot")?.board?.students.length).toBeGreaterThan(1);
    const stream = await sse(token, ws.last());
    await t.db.delete(roleUsers).where(eq(roleUsers.userId, member.id));
    await release(a);
    expect(await ws.closed()).toBe(4403);
    expect(await stream.ended()).toBe(true);
    expect(ws.events()).toEqual([]);
    // A new stream, with the same token or a ticket it gets: not the school's (they guard no child).
    const again = await socket(token);
    await again.until((m) => m.some((x) => x.type === "snapshot"));
    expect(again.messages.find((x) => x.type === "snapshot")?.board?.students).toEqual([]);
    again.ws.close();
    const ticket = await t.request(`${D}/live/ticket`, { method: "POST", token, school: NORTH });
    const { ticket: one } = await readJson<{ ticket: string }>(ticket);
    const viaTicket = await t.request(`${D}/live?date=${TODAY}&ticket=${one}`);
    expect((await readJson<{ board: { students: unknown[] } }>(viaTicket)).board.students).toEqual([]);
  });
});

describe("the hub's storage", () => {
  it("forgets a WebSocket subscription whose upgrade never came (its alarm)", async () => {
    const subscription = {
      schoolId: NORTH,
      date: TODAY,
      children: [],
      last: 0,
      userId: 1,
      today: TODAY,
      snapshot: null,
      mode: "websocket",
    };
    const prepared = await hub().fetch("https://hub/prepare", {
      method: "POST",
      body: JSON.stringify({ key: "never-upgraded", subscription }),
    });
    expect(prepared.status).toBe(204);
    const pending = () =>
      runInDurableObject(hub(), async (_instance, state) => ({
        keys: [...(await state.storage.list({ prefix: "pending:" })).keys()],
        alarm: await state.storage.getAlarm(),
      }));
    const held = await pending();
    expect(held.keys).toContain("pending:never-upgraded");
    // An alarm is set for when it has expired.
    expect(held.alarm).not.toBeNull();
    // Before then the alarm keeps it (an upgrade may still come) ...
    await runDurableObjectAlarm(hub());
    expect((await pending()).keys).toContain("pending:never-upgraded");
    // ... after then, forgets it; the upgrade is refused.
    await runInDurableObject(hub(), async (_instance, state) => {
      const row = (await state.storage.get("pending:never-upgraded")) as { expiresAt: number };
      await state.storage.put("pending:never-upgraded", { ...row, expiresAt: Date.now() - 1 });
    });
    await runDurableObjectAlarm(hub());
    expect((await pending()).keys).not.toContain("pending:never-upgraded");
    const late = await hub().fetch("https://hub/subscribe?key=never-upgraded", { headers: { upgrade: "websocket" } });
    expect(late.status).toBe(410);
  });
});
