/**
 * The bus run: the driver starts today's run of a route (once a day), records boardings and drops
 * (idempotent; a rider not on today's final list is a 422 naming why unless the driver insists with
 * a reason), positions (one every 5 s: 429 with RateLimit headers), and finishes it; staff read its
 * state (stops reached, delay); a guardian sees their child's bus (boarded, the time at their stop,
 * the position between the first stop and theirs) and nothing of other children; pushes "boarded /
 * dropped" and "five minutes away" once each; webhooks hear route.boarded and route.dropped.
 */

import { env } from "cloudflare:test";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it, onTestFinished } from "vitest";
import { d1 } from "../src/db/client";
import { devPushOutbox } from "../src/db/schema/dev";
import { dismissalEvents } from "../src/db/schema/dismissal";
import { notifications } from "../src/db/schema/notification";
import { routeRunEvents, routeRunPositions } from "../src/db/schema/route-run";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { routeAvailabilities, routeAvailabilityStudents, routeStudents } from "../src/db/schema/transport";
import { webhookDeliveries, webhookMessages } from "../src/db/schema/webhook";
import { BUILTIN_ROLES } from "../src/lib/access";
import { grantsOf } from "../src/modules";
import { sweepRunPositions } from "../src/modules/route-run/run-sweep";
import { makeFamily } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, makeTestApp, problem, type Recorded, recordingD1, type TestApp } from "./helpers";
import { device } from "./notification-kit";
import type { PushQueue } from "./push-queue";

const NORTH = 1;
/** Monday 2026-11-23, 15:00 in Mexico City (the demo school's zone): before the first stop (15:10). */
const AFTERNOON = new Date("2026-11-23T21:00:00.000Z");

type State = {
  id: number | null;
  status: string;
  stopsReached: number[];
  delayMinutes: number | null;
  positions: { lat: number; lon: number }[];
  events: { id: number; studentId: number; event: string; insistReason: string | null }[];
};
type Live = {
  data: {
    student: { id: number };
    route: { id: number };
    run: string;
    boardedAt: string | null;
    droppedAt: string | null;
    estimatedAt: string | null;
    delayMinutes: number | null;
    position: { lat: number; lon: number } | null;
  }[];
};

const admin = (t: TestApp) => t.token(DEMO.northAdmin.id, { [NORTH]: grantsOf("school-admin").map((p) => p.name) });

async function setUp() {
  const t = makeTestApp();
  t.clock.current = new Date(AFTERNOON);
  // Ana rides to the first stop (15:10), Beto to the second (15:25).
  const route = await makeRoute(t, NORTH, {
    riders: [
      ["Ana", "Run"],
      ["Beto", "Run"],
    ],
  });
  const [ana, beto] = route.studentIds as [number, number];
  const [first, second] = route.stopIds as [number, number];
  const anaFamily = await makeFamily(t, NORTH, { studentId: ana });
  const betoFamily = await makeFamily(t, NORTH, { studentId: beto });
  const guardian = (f: { userId: number }) => t.token(f.userId, { [NORTH]: grantsOf("parent").map((p) => p.name) });
  const path = `/api/v1/route/${route.routeId}/run`;
  const call = async (suffix: string, method: string, body?: unknown) =>
    t.request(`${path}${suffix}`, { method, token: await admin(t), body });
  const board = (studentId: number, event: string, stopId: number, extra: object = {}) =>
    call("/boarding", "POST", { studentId, event, stopId, at: t.clock.now().toISOString(), ...extra });
  const live = async (f: { userId: number }) => {
    const res = await t.request("/api/v1/route/mine/live", { token: await guardian(f) });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as Live).data.filter((d) => d.route.id === route.routeId);
  };
  return { t, route, ana, beto, first, second, anaFamily, betoFamily, path, call, board, live, guardian };
}

describe("the run", () => {
  it("starts once a day, records boardings idempotently, finishes once", async () => {
    const { t, ana, first, call, board } = await setUp();
    const before = await board(ana, "boarded", first);
    expect((await problem(before)).status).toBe(422);

    const started = await call("", "POST");
    expect(started.status, await started.clone().text()).toBe(201);
    const run = (await started.json()) as State;
    expect(run).toMatchObject({ status: "running", stopsReached: [], delayMinutes: null });
    const again = (await (await call("", "POST")).json()) as State;
    expect(again.id).toBe(run.id);

    t.clock.advance(14 * 60); // 15:14: four minutes behind the first stop's 15:10
    const boarded = await board(ana, "boarded", first);
    expect(boarded.status, await boarded.clone().text()).toBe(201);
    const event = (await boarded.json()) as { id: number };
    const repeat = await board(ana, "boarded", first);
    expect(((await repeat.json()) as { id: number }).id).toBe(event.id);
    const rows = await t.db.select().from(routeRunEvents).where(eq(routeRunEvents.studentId, ana));
    expect(rows).toHaveLength(1);
    const told = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.aboutEntity, "route"), eq(notifications.category, "transport")));
    expect(told.filter((n) => JSON.stringify(n.title).includes("is on the bus"))).toHaveLength(1);

    const state = (await (await call("", "GET")).json()) as State;
    expect(state).toMatchObject({ status: "running", stopsReached: [first], delayMinutes: 4 });
    expect(state.events.map((e) => [e.studentId, e.event])).toEqual([[ana, "boarded"]]);

    const finished = await call("/finish", "PATCH");
    expect(finished.status).toBe(200);
    expect(((await finished.json()) as State).status).toBe("finished");
    expect((await problem(await call("/finish", "PATCH"))).status).toBe(409);
    expect((await problem(await board(ana, "dropped", first))).status).toBe(422);
  });

  it("refuses a rider not on today's list (422 naming why), records them when the driver insists", async () => {
    const { t, first, call, board } = await setUp();
    await call("", "POST");
    const stranger = await makeFamily(t, NORTH);
    const refused = await board(stranger.studentId, "boarded", first);
    const p = await problem(refused);
    expect(p.status).toBe(422);
    expect(p.detail).toContain(`Student ${stranger.studentId} is not on today's list`);
    const insisted = await board(stranger.studentId, "boarded", first, { insistReason: "Her mother asked" });
    expect(insisted.status).toBe(201);
    expect(await insisted.json()).toMatchObject({ insistReason: "Her mother asked" });
    expect((await problem(await board(stranger.studentId, "boarded", 999_999))).status).toBe(422);
  });

  it("a rider's standing is the final list's: away by a change or a suspension is a 422 naming why, an unconfirmed change counts for nothing, a joiner boards", async () => {
    const { t, route, ana, beto, first, call, board } = await setUp();
    const date = "2026-11-23";
    const joiner = await makeFamily(t, NORTH);
    const pending = await makeFamily(t, NORTH);
    const [day] = await t.db
      .insert(routeAvailabilities)
      .values({ schoolId: NORTH, routeId: route.routeId, date })
      .returning({ id: routeAvailabilities.id });
    const dayId = day?.id ?? 0;
    await t.db.insert(routeAvailabilityStudents).values([
      { schoolId: NORTH, routeAvailabilityId: dayId, studentId: ana, kind: "away", reason: "Picked up by a parent" },
      { schoolId: NORTH, routeAvailabilityId: dayId, studentId: joiner.studentId, stopId: first, kind: "join" },
      {
        schoolId: NORTH,
        routeAvailabilityId: dayId,
        studentId: pending.studentId,
        stopId: first,
        kind: "join",
        confirmed: false,
      },
    ]);
    await t.db
      .update(routeStudents)
      .set({ suspendedFrom: "2026-11-01", suspensionReason: "Unpaid fees" })
      .where(eq(routeStudents.studentId, beto));
    await call("", "POST");
    const away = await problem(await board(ana, "boarded", first));
    expect([away.status, away.detail]).toEqual([422, expect.stringContaining("Picked up by a parent")]);
    const suspended = await problem(await board(beto, "boarded", first));
    expect([suspended.status, suspended.detail]).toEqual([422, expect.stringContaining("Unpaid fees")]);
    expect((await problem(await board(pending.studentId, "boarded", first))).status).toBe(422);
    expect((await board(joiner.studentId, "boarded", first)).status).toBe(201);
    const recorded = await t.db.select().from(routeRunEvents).where(eq(routeRunEvents.stopId, first));
    expect(recorded.filter((e) => [ana, beto, pending.studentId].includes(e.studentId))).toHaveLength(0);
    // The same standing as the final list shows.
    const list = await t.request(
      `/api/v1/route-availability-student/route/${route.routeId}/final-status?date=${date}`,
      {
        token: await admin(t),
      },
    );
    expect(list.status, await list.clone().text()).toBe(200);
    const { students } = (await list.json()) as { students: { studentId: number; status: string }[] };
    const status = (id: number) => students.find((x) => x.studentId === id)?.status;
    expect([status(ana), status(beto), status(joiner.studentId), status(pending.studentId)]).toEqual([
      "away",
      "away",
      "joining",
      undefined,
    ]);
  });

  it("refuses a boarding or a position timed before the run started or ahead of the server's clock (422), nothing recorded", async () => {
    const { t, ana, first, call, board } = await setUp();
    await call("", "POST");
    t.clock.advance(10 * 60);
    const dayBefore = new Date(t.clock.now().getTime() - 26 * 3600_000).toISOString();
    const ahead = new Date(t.clock.now().getTime() + 60 * 60_000).toISOString();
    for (const at of [dayBefore, ahead]) {
      const refused = await problem(await board(ana, "boarded", first, { at }));
      expect(refused.status).toBe(422);
      expect(refused.detail).toContain(at);
      const position = await call("/position", "POST", { lat: 19.4, lon: -99.1, at });
      expect((await problem(position)).status).toBe(422);
      t.clock.advance(6);
    }
    expect(await t.db.select().from(routeRunEvents).where(eq(routeRunEvents.studentId, ana))).toHaveLength(0);
    // A phone's clock a minute off, or an event sent late from a phone that was offline, is taken.
    const late = new Date(t.clock.now().getTime() - 5 * 60_000).toISOString();
    expect((await board(ana, "boarded", first, { at: late })).status).toBe(201);
    const skewed = new Date(t.clock.now().getTime() + 60_000).toISOString();
    expect((await call("/position", "POST", { lat: 19.4, lon: -99.1, at: skewed })).status).toBe(201);
    // The file's tests share the store: the sweep's tests count every position left.
    await t.db.delete(routeRunPositions);
  });

  it("takes one position every 5 s (429 beyond, RateLimit headers)", async () => {
    const { t, call } = await setUp();
    await call("", "POST");
    const position = () => call("/position", "POST", { lat: 19.43, lon: -99.13, at: t.clock.now().toISOString() });
    const ok = await position();
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect(ok.headers.get("ratelimit")).toContain("route-position");
    const limited = await position();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    t.clock.advance(5);
    expect((await position()).status).toBe(201);
    // Kept for the day only: the sweep deletes them a day later (the run keeps its last position).
    expect(await t.db.select().from(routeRunPositions)).not.toHaveLength(0);
    t.clock.advance(24 * 3600 + 60);
    await sweepRunPositions(t.deps);
    expect(await t.db.select().from(routeRunPositions)).toHaveLength(0);
  });

  it("a school year that keeps no positions: none stored, the run's last one alone; the live view and its time still work", async () => {
    const { t, ana, beto, first, betoFamily, call, board, live } = await setUp();
    // The demo school year of the day says so (the file's later tests get it back).
    const [current] = await t.db
      .select({ id: schoolConfigurations.id })
      .from(schoolConfigurations)
      .where(
        and(
          eq(schoolConfigurations.schoolId, NORTH),
          sql`${schoolConfigurations.startDate} <= '2026-11-23' AND ${schoolConfigurations.endDate} >= '2026-11-23'`,
        ),
      );
    const year = await t.request(`/api/v1/school-configuration/${current?.id}`, {
      method: "PUT",
      token: await admin(t),
      body: { keepBusPositions: false },
    });
    expect(year.status, await year.clone().text()).toBeLessThan(300);
    onTestFinished(async () => {
      await t.db.update(schoolConfigurations).set({ keepBusPositions: true });
    });
    await call("", "POST");
    t.clock.advance(14 * 60);
    await board(ana, "dropped", first);
    t.clock.advance(60);
    const sent = await call("/position", "POST", { lat: 19.41, lon: -99.11, at: t.clock.now().toISOString() });
    expect(sent.status, await sent.clone().text()).toBe(201);
    expect(await sent.json()).toMatchObject({ id: null, lat: 19.41, lon: -99.11 });
    t.clock.advance(5);
    await call("/position", "POST", { lat: 19.42, lon: -99.12, at: t.clock.now().toISOString() });
    expect(await t.db.select().from(routeRunPositions)).toHaveLength(0);
    const state = (await (await call("", "GET")).json()) as State;
    expect(state.positions).toEqual([expect.objectContaining({ lat: 19.42, lon: -99.12 })]);
    const [between] = await live(betoFamily);
    expect(between).toMatchObject({ student: { id: beto }, delayMinutes: 4, estimatedAt: "15:29" });
    expect(between?.position).toMatchObject({ lat: 19.42, lon: -99.12 });
  });

  it("a position refused (no run under way, or its time off) spends no slot: the next one is taken at once", async () => {
    const { t, call } = await setUp();
    const position = (at = t.clock.now().toISOString()) => call("/position", "POST", { lat: 19.43, lon: -99.13, at });
    expect((await problem(await position())).status).toBe(422);
    await call("", "POST");
    const ahead = new Date(t.clock.now().getTime() + 60 * 60_000).toISOString();
    expect((await problem(await position(ahead))).status).toBe(422);
    const ok = await position();
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect((await position()).status).toBe(429);
  });

  it("webhooks hear route.boarded and route.dropped", async () => {
    const { t, ana, first, call, board } = await setUp();
    const res = await t.request("/api/v1/webhook", {
      method: "POST",
      token: await admin(t),
      body: { url: "http://127.0.0.1:9/hook", eventTypes: ["route.boarded", "route.dropped"] },
    });
    expect(res.status).toBe(201);
    await call("", "POST");
    await board(ana, "boarded", first);
    await board(ana, "dropped", first);
    const sent = await t.db.select().from(webhookMessages);
    expect(sent.map((s) => s.eventType)).toEqual(["route.boarded", "route.dropped"]);
    expect(JSON.parse(sent[0]?.payload ?? "{}").data).toMatchObject({ studentId: ana, stopId: first });
  });

  it("the dismissal board hears the bus leave, boardings and drops: events on its live stream, the child boarded", async () => {
    const { t, route, ana, beto, first, call, board } = await setUp();
    type Live = {
      board: { seq: number; students: { studentId: number; status: string }[] } | null;
      events: { seq: number; type: string; studentId: number | null; routeId?: number }[];
    };
    const live = async (after?: number) => {
      const query = after === undefined ? "" : `&after=${after}`;
      const res = await t.request(`/api/v1/dismissal/live?date=2026-11-23${query}`, { token: await admin(t) });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Live;
    };
    const before = await live();
    const seq = before.board?.seq ?? -1;
    expect(before.board?.students.find((s) => s.studentId === ana)?.status).not.toBe("boarded");
    await call("", "POST");
    expect((await board(ana, "boarded", first)).status).toBe(201);
    expect((await board(ana, "dropped", first)).status).toBe(201);
    const after = await live(seq);
    expect(after.events.map((e) => [e.type, e.studentId])).toEqual([
      ["bus-departed", null],
      ["boarded", ana],
      ["dropped", ana],
    ]);
    expect(after.events[0]).toMatchObject({ seq: seq + 1, routeId: route.routeId });
    expect(after.events[1]).toMatchObject({ seq: seq + 2, stopId: first });
    const now = await live();
    expect(now.board?.students.find((s) => s.studentId === ana)?.status).toBe("boarded");
    expect(now.board?.students.find((s) => s.studentId === beto)?.status).not.toBe("boarded");
  });
});

describe("the guardians' transport preference", () => {
  it("transport pushes off: the boarding is in the inbox, not pushed; another guardian gets the push", async () => {
    const { t, ana, first, anaFamily, call, board } = await setUp();
    const other = await makeFamily(t, NORTH, { studentId: ana });
    const [quiet, loud] = [await device(t, anaFamily.userId), await device(t, other.userId)];
    const save = await t.request("/api/v1/notification-preference", {
      method: "POST",
      token: await t.token(anaFamily.userId, { [NORTH]: [] }),
      body: { categories: { transport: { push: false } } },
    });
    expect(save.status, await save.clone().text()).toBe(201);
    await call("", "POST");
    await board(ana, "boarded", first);
    await (t.deps.queues.push as PushQueue).drain(t.deps);
    const pushed = (token: string) => t.db.select().from(devPushOutbox).where(eq(devPushOutbox.token, token));
    expect(await pushed(quiet)).toHaveLength(0);
    expect(await pushed(loud)).toHaveLength(1);
    const inbox = await t.request("/api/v1/notification", { token: await t.token(anaFamily.userId, { [NORTH]: [] }) });
    const { data } = (await inbox.json()) as { data: { category: string; title: string }[] };
    expect(data.filter((n) => n.category === "transport")).toHaveLength(1);
  });
});

describe("round trips", () => {
  it("a boarding: one round trip (the event, the push, the webhook's deliveries, the live board's row), each once; a repeat: two", async () => {
    const { t, measure } = countingTestApp();
    t.clock.current = new Date(AFTERNOON);
    const route = await makeRoute(t, NORTH, { riders: [["Ana", "Trips"]] });
    const token = await admin(t);
    const hook = await t.request("/api/v1/webhook", {
      method: "POST",
      token,
      body: { url: "http://127.0.0.1:9/hook", eventTypes: ["route.boarded"] },
    });
    expect(hook.status).toBe(201);
    await t.request(`/api/v1/route/${route.routeId}/run`, { method: "POST", token });
    const [ana] = route.studentIds as [number];
    const board = () =>
      t.request(`/api/v1/route/${route.routeId}/run/boarding`, {
        method: "POST",
        token,
        body: { studentId: ana, event: "boarded", stopId: route.stopIds[0], at: t.clock.now().toISOString() },
      });
    const first = await measure(board);
    expect(first.res.status, await first.res.clone().text()).toBe(201);
    // The checks are the guard of the write's own batch; the school event's writes join it.
    expect(first.calls).toBe(1);
    // Recorded already: the guard refuses, one read answers the first record.
    const repeat = await measure(board);
    expect(repeat.res.status).toBe(201);
    expect(repeat.calls).toBe(2);
    expect(((await repeat.res.json()) as { id: number }).id).toBe(((await first.res.json()) as { id: number }).id);
    const sent = (await t.db.select().from(webhookMessages)).filter(
      (w) => JSON.parse(w.payload).data.routeId === route.routeId,
    );
    expect(sent.map((w) => w.eventType)).toEqual(["route.boarded"]);
    const endpoint = ((await hook.json()) as { id: number }).id;
    const deliveries = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint));
    expect(deliveries.map((d) => d.messageId)).toEqual([sent[0]?.id]);
    const logged = await t.db
      .select()
      .from(dismissalEvents)
      .where(and(eq(dismissalEvents.studentId, ana), eq(dismissalEvents.type, "boarded")));
    expect(logged).toHaveLength(1);
    const told = await t.db.select().from(notifications).where(eq(notifications.aboutId, route.routeId));
    expect(told.map((n) => n.title)).toEqual([{ en: "Ana is on the bus", es: "Ana subió al autobús" }]);
    expect(told[0]?.body).toEqual({ en: "Boarded at Plaza Mayor.", es: "Subió en Plaza Mayor." });
  });

  it("a boarding whose batch fails leaves nothing: no event, no push, no webhook, no board row", async () => {
    const { t, route, ana, first, call, board } = await setUp();
    const hook = await t.request("/api/v1/webhook", {
      method: "POST",
      token: await admin(t),
      body: { url: "http://127.0.0.1:9/hook", eventTypes: ["route.boarded"] },
    });
    expect(hook.status).toBe(201);
    await call("", "POST");
    // The live board's row is the batch's last write: refused, the whole boarding is.
    await t.db.run(
      sql.raw(
        "CREATE TRIGGER test_refuse_board BEFORE INSERT ON dismissal_event WHEN NEW.type = 'boarded' BEGIN SELECT RAISE(ABORT, 'refused'); END",
      ),
    );
    onTestFinished(async () => {
      await t.db.run(sql.raw("DROP TRIGGER IF EXISTS test_refuse_board"));
    });
    const failed = await board(ana, "boarded", first);
    expect(failed.status).toBe(500);
    expect(await t.db.select().from(routeRunEvents).where(eq(routeRunEvents.studentId, ana))).toHaveLength(0);
    const sent = (await t.db.select().from(webhookMessages)).filter(
      (w) => JSON.parse(w.payload).data.routeId === route.routeId,
    );
    expect(sent).toHaveLength(0);
    expect(await t.db.select().from(notifications).where(eq(notifications.aboutId, route.routeId))).toHaveLength(0);
  });
});

describe("a boarding's one batch", () => {
  it("reads through indexes: no statement of it scans one of our tables", async () => {
    const log: Recorded[] = [];
    const t = makeTestApp({ db: d1(recordingD1(env.DB, log)) });
    t.clock.current = new Date(AFTERNOON);
    const route = await makeRoute(t, NORTH, { riders: [["Ana", "Plans"]] });
    const token = await admin(t);
    await t.request(`/api/v1/route/${route.routeId}/run`, { method: "POST", token });
    log.length = 0;
    const res = await t.request(`/api/v1/route/${route.routeId}/run/boarding`, {
      method: "POST",
      token,
      body: {
        studentId: route.studentIds[0],
        event: "boarded",
        stopId: route.stopIds[0],
        at: t.clock.now().toISOString(),
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(log.length).toBeGreaterThan(5);
    const scans: string[] = [];
    for (const statement of log) {
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
        .bind(...statement.args)
        .all<{ detail: string }>();
      for (const { detail } of plan.results) {
        // Ours only: not the id sequence, json_each over a bound list, nor a subquery's own rows (its tables are planned above it).
        if (
          /^SCAN (?!CONSTANT ROW|json_each |sqlite_sequence|\(subquery-)/.test(detail) &&
          !/USING (COVERING )?INDEX/.test(detail)
        )
          scans.push(`${detail}: ${statement.sql.slice(0, 160)}`);
      }
    }
    expect(scans).toEqual([]);
  });
});

describe("round trips of start and finish", () => {
  it("a start: one read (with the calendar), one write (the state read back and the departure on the board's log in it); again: one read; a finish: one", async () => {
    const { t, measure } = countingTestApp();
    t.clock.current = new Date(AFTERNOON);
    const route = await makeRoute(t, NORTH, { riders: [["Ana", "Starts"]] });
    const token = await admin(t);
    const path = `/api/v1/route/${route.routeId}/run`;
    // The school's zone is kept in memory: read once before measuring.
    await t.request(`${path}?date=2026-11-23`, { token });
    const start = await measure(() => t.request(path, { method: "POST", token }));
    expect(start.res.status, await start.res.clone().text()).toBe(201);
    // The calendar joins the first read; the live board's `bus-departed` row joins the write.
    expect(start.calls).toBe(2);
    const again = await measure(() => t.request(path, { method: "POST", token }));
    expect(again.res.status).toBe(201);
    expect(again.calls).toBe(1);
    const finish = await measure(() => t.request(`${path}/finish`, { method: "PATCH", token }));
    expect(finish.res.status).toBe(200);
    expect(((await finish.res.json()) as State).status).toBe("finished");
    expect(finish.calls).toBe(1);
    const twice = await measure(() => t.request(`${path}/finish`, { method: "PATCH", token }));
    expect((await problem(twice.res)).status).toBe(409);
    expect(twice.calls).toBe(1);
  });

  it("a position: one read (the route, the run under way), the rate limit, one write", async () => {
    const { t, measure } = countingTestApp();
    t.clock.current = new Date(AFTERNOON);
    const route = await makeRoute(t, NORTH, { riders: [["Ana", "Positions"]] });
    const token = await admin(t);
    const path = `/api/v1/route/${route.routeId}/run`;
    expect((await t.request(path, { method: "POST", token })).status).toBe(201);
    // The "five minutes away" check (once a minute per run) done first, so the position measured is a plain one.
    await t.request(`${path}/position`, {
      method: "POST",
      token,
      body: { lat: 19.4, lon: -99.1, at: t.clock.now().toISOString() },
    });
    t.clock.advance(5);
    const sent = await measure(() =>
      t.request(`${path}/position`, {
        method: "POST",
        token,
        body: { lat: 19.41, lon: -99.11, at: t.clock.now().toISOString() },
      }),
    );
    expect(sent.res.status, await sent.res.clone().text()).toBe(201);
    expect(sent.calls).toBe(3);
  });
});

describe("who runs a route", () => {
  it("a driver runs the routes of the vehicle they drive; any other route is a 404 to them", async () => {
    const t = makeTestApp();
    t.clock.current = new Date(AFTERNOON);
    // The demo teacher (user 3) as a signed-in driver: the built-in driver role in the school.
    const userId = DEMO.northTeacher.id;
    await t.db.run(
      sql`INSERT OR IGNORE INTO role_user (school_id, user_id, role_id) VALUES (${NORTH}, ${userId}, ${BUILTIN_ROLES.driver.id})`,
    );
    const token = await t.token(userId, { [NORTH]: grantsOf("driver").map((p) => p.name) });
    const theirs = await makeRoute(t, NORTH, { driverUserId: userId });
    const other = await makeRoute(t, NORTH);
    const start = (routeId: number) => t.request(`/api/v1/route/${routeId}/run`, { method: "POST", token });
    expect((await start(theirs.routeId)).status).toBe(201);
    expect((await problem(await start(other.routeId))).status).toBe(404);
    const parent = await t.token(DEMO.northParent.id, { [NORTH]: grantsOf("parent").map((p) => p.name) });
    const refused = await t.request(`/api/v1/route/${theirs.routeId}/run`, { method: "POST", token: parent });
    expect(refused.status).toBe(403);
  });
});

describe("a guardian's live view", () => {
  it("shows their child's bus, the time at their stop, the position only between the first stop and theirs", async () => {
    const { t, ana, beto, first, second, betoFamily, call, board, live } = await setUp();
    const [notStarted] = await live(betoFamily);
    expect(notStarted).toMatchObject({ student: { id: beto }, run: "not-started", estimatedAt: "15:25" });

    await call("", "POST");
    await call("/position", "POST", { lat: 19.4, lon: -99.1, at: t.clock.now().toISOString() });
    const [beforeFirst] = await live(betoFamily);
    expect(beforeFirst?.position).toBeNull();

    t.clock.advance(14 * 60);
    await board(ana, "dropped", first); // home: Ana leaves at the first stop, four minutes late
    t.clock.advance(60);
    await call("/position", "POST", { lat: 19.41, lon: -99.11, at: t.clock.now().toISOString() });
    const [between] = await live(betoFamily);
    expect(between).toMatchObject({ run: "running", delayMinutes: 4, estimatedAt: "15:29", droppedAt: null });
    expect(between?.position).toMatchObject({ lat: 19.41, lon: -99.11 });
    // Nothing of Ana: only Beto's ride, and no events of others.
    expect(await live(betoFamily)).toHaveLength(1);
    expect(JSON.stringify(between)).not.toContain(String(ana));

    t.clock.advance(14 * 60);
    await board(beto, "dropped", second);
    const [after] = await live(betoFamily);
    expect(after).toMatchObject({ estimatedAt: null, position: null });
    expect(after?.droppedAt).not.toBeNull();
  });

  it("a child who joins another bus for the day (a route change) is shown on that bus, not on their own", async () => {
    const { t, beto, route, betoFamily, guardian } = await setUp();
    // Beto goes home on another bus today, to its second stop (15:25), where Cata gets off first.
    const other = await makeRoute(t, NORTH, { riders: [["Cata", "Other"]] });
    const [cata] = other.studentIds as [number];
    const [otherFirst, otherSecond] = other.stopIds as [number, number];
    const date = "2026-11-23";
    const [ownDay, otherDay] = await t.db
      .insert(routeAvailabilities)
      .values([
        { schoolId: NORTH, routeId: route.routeId, date },
        { schoolId: NORTH, routeId: other.routeId, date },
      ])
      .returning({ id: routeAvailabilities.id });
    await t.db.insert(routeAvailabilityStudents).values([
      { schoolId: NORTH, routeAvailabilityId: ownDay?.id ?? 0, studentId: beto, kind: "away", reason: "Route change" },
      {
        schoolId: NORTH,
        routeAvailabilityId: otherDay?.id ?? 0,
        studentId: beto,
        stopId: otherSecond,
        kind: "join",
        reason: "Route change",
      },
    ]);
    const liveOf = async () => {
      const res = await t.request("/api/v1/route/mine/live", { token: await guardian(betoFamily) });
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as Live).data.filter((d) => d.student.id === beto);
    };
    const before = await liveOf();
    expect(before.map((d) => d.route.id)).toEqual([other.routeId]);
    expect(before[0]).toMatchObject({ run: "not-started", stop: { id: otherSecond }, estimatedAt: "15:25" });

    const start = await t.request(`/api/v1/route/${other.routeId}/run`, { method: "POST", token: await admin(t) });
    expect(start.status).toBe(201);
    t.clock.advance(14 * 60);
    const dropped = await t.request(`/api/v1/route/${other.routeId}/run/boarding`, {
      method: "POST",
      token: await admin(t),
      body: { studentId: cata, event: "dropped", stopId: otherFirst, at: t.clock.now().toISOString() },
    });
    expect(dropped.status, await dropped.clone().text()).toBe(201);
    const [riding] = await liveOf();
    expect(riding).toMatchObject({
      route: { id: other.routeId },
      run: "running",
      delayMinutes: 4,
      estimatedAt: "15:29",
    });
  });

  it('pushes "five minutes away" once, when the time at the child\'s stop is five minutes off', async () => {
    const { t, ana, beto, first, call, board } = await setUp();
    await call("", "POST");
    t.clock.advance(14 * 60);
    await board(ana, "dropped", first); // four minutes late: Beto's stop expected at 15:29
    const position = async () => {
      t.clock.advance(60);
      await call("/position", "POST", { lat: 19.41, lon: -99.11, at: t.clock.now().toISOString() });
    };
    await position(); // 15:15: fourteen minutes off
    const approaching = async () =>
      (
        await t.db
          .select()
          .from(notifications)
          .where(and(eq(notifications.aboutEntity, "route")))
      ).filter((n) => JSON.stringify(n.title).includes("five minutes away"));
    expect(await approaching()).toHaveLength(0);
    t.clock.advance(8 * 60); // 15:24
    await position(); // 15:25: four minutes off
    expect(await approaching()).toHaveLength(1);
    await position();
    await position();
    const sent = await approaching();
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0]?.body)).toContain("15:29");
    expect(sent[0]?.audience).toEqual({ guardiansOf: [beto] });
  });
});
