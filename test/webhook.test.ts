/**
 * Webhooks to the Standard Webhooks specification: endpoints managed by a school admin with a
 * secret shown once and stored encrypted; events delivered through the webhook queue to a REAL
 * receiver on loopback (test/node/webhook-receiver.ts) that verifies every signature with the
 * `standardwebhooks` library; once per endpoint however often a queue message is redelivered; a
 * retried attempt keeps its webhook-id (a replay the receiver recognises); backoff for about 24 hours,
 * then failed; the delivery log and manual retry; secret rotation with both signatures during the
 * overlap; an endpoint that keeps failing paused and the school's admins told.
 */
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { notifications } from "../src/db/schema/notification";
import { guardians } from "../src/db/schema/student";
import { webhookDeliveries, webhookEndpoints } from "../src/db/schema/webhook";
import { jobCtx } from "../src/lib/context";
import { dohResolver } from "../src/lib/dns";
import { grantsOf } from "../src/modules";
import { emitWebhookEvent } from "../src/modules/webhook/api";
import { MAX_ATTEMPTS, PAUSE_AFTER, RETRY_SCHEDULE } from "../src/modules/webhook/queue";
import { refusedDestination, refusedUrl } from "../src/modules/webhook/url";
import { confirmedAbsence, makeFamily, parentToken, schoolDate } from "./fixtures/modules/exit-permission";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";
import type { PushQueue } from "./push-queue";

const NORTH = 1;
const RECEIVER = inject("webhookReceiver");

type Webhook = {
  id: number;
  url: string;
  status: string;
  eventTypes: string[];
  secret?: string;
  failureStreak: number;
};
type Received = { id: string; body: string; verifiedWith: number[]; refusals: string[]; replay: boolean };
type Delivery = {
  id: number;
  status: string;
  messageId: string;
  attempts: number;
  attemptLog: { statusCode: number | null; error: string | null }[];
};

const admin = (t: TestApp) => t.token(DEMO.northAdmin.id, { [NORTH]: grantsOf("school-admin").map((p) => p.name) });
const queueOf = (t: TestApp) => t.deps.queues.webhook as PushQueue;

let receivers = 0;
/** A receiver endpoint of its own (a name on the loopback receiver) with what it answers. */
async function receiver(status = 204) {
  const name = `r${++receivers}-${Math.random().toString(36).slice(2, 8)}`;
  return { name, url: `${RECEIVER}/hook/${name}`, status };
}

async function configure(t: TestApp, name: string, secrets: string[], status = 204) {
  const res = await fetch(`${RECEIVER}/endpoints/${name}`, {
    method: "PUT",
    body: JSON.stringify({ secrets, status, now: Math.floor(t.clock.now().getTime() / 1000) }),
  });
  expect(res.status).toBe(204);
}

const received = async (name: string) => (await (await fetch(`${RECEIVER}/received/${name}`)).json()) as Received[];

async function create(t: TestApp, url: string, eventTypes = ["student.created"]) {
  const res = await t.request("/api/v1/webhook", { method: "POST", token: await admin(t), body: { url, eventTypes } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Webhook & { secret: string };
}

/** Delivers every held webhook message once (as the queue would), answering the retry delays asked. */
async function deliverAll(t: TestApp) {
  const queue = queueOf(t);
  const results: { retried: boolean; delay: number | undefined }[] = [];
  while (queue.held.length > 0) {
    const message = queue.held.shift();
    if (!message) break;
    const r = await queue.deliverOne(t.deps, message);
    results.push({ retried: r.retryMessages.length > 0, delay: r.delays[0] });
    if (r.retryMessages.length > 0) queue.held.push({ ...message, attempts: message.attempts + 1 });
    if (results.length > 50) throw new Error("the webhook queue never drained");
    // Each retry is delivered when its delay has passed.
    if (r.retryMessages.length > 0) t.clock.advance(r.delays[0] ?? 10);
  }
  return results;
}

const ctxOf = (t: TestApp) => jobCtx(t.deps, "test", NORTH);

// Each test starts with no endpoint (the file's storage is shared by its tests): an earlier test's
// endpoint would receive this test's events too.
beforeEach(async () => {
  await makeTestApp().db.delete(webhookEndpoints);
});

describe("endpoints", () => {
  it("shows the secret once, keeps it encrypted, redacts it in the audit trail", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["student.created", "route.boarded", "student.created"]);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook.eventTypes).toEqual(["route.boarded", "student.created"]);
    const got = await t.request(`/api/v1/webhook/${hook.id}`, { token: await admin(t) });
    expect(got.status).toBe(200);
    expect(await got.json()).not.toHaveProperty("secret");
    const [row] = await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, hook.id));
    expect(row?.secret).toMatch(/^v1:/);
    expect(row?.secret).not.toContain(hook.secret.slice(6));
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "webhook"), eq(auditLog.recordId, hook.id)));
    expect(JSON.stringify(audits.map((a) => a.changes))).not.toContain(hook.secret.slice(6));
    expect(JSON.stringify(audits.map((a) => a.changes))).toContain("[redacted]");
  });

  it("refuses a teacher (403), an unknown event type (400)", async () => {
    const t = makeTestApp();
    const teacher = await t.token(DEMO.northTeacher.id, { [NORTH]: grantsOf("teacher").map((p) => p.name) });
    const res = await t.request("/api/v1/webhook", {
      method: "POST",
      token: teacher,
      body: { url: "https://example.org/h", eventTypes: ["student.created"] },
    });
    expect(res.status).toBe(403);
    const bad = await t.request("/api/v1/webhook", {
      method: "POST",
      token: await admin(t),
      body: { url: "https://example.org/h", eventTypes: ["student.deleted"] },
    });
    expect(bad.status).toBe(400);
  });

  it("in production: https to public addresses only; development may use localhost", () => {
    for (const url of [
      "http://example.org/h",
      "https://localhost/h",
      "https://127.0.0.1/h",
      "https://10.1.2.3/h",
      "https://192.168.0.10/h",
      "https://172.20.0.1/h",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/h",
      "https://[fd00::1]/h",
      "https://[::ffff:127.0.0.1]/h",
      "https://intranet/h",
      "https://db.internal/h",
      "https://metadata.google.internal/h",
      "https://user:pw@example.org/h",
    ]) {
      expect(refusedUrl(url, false), url).toBeTypeOf("string");
    }
    expect(refusedUrl("https://sis.example.org/hooks", false)).toBeUndefined();
    expect(refusedUrl("https://93.184.216.34/h", false)).toBeUndefined();
    expect(refusedUrl("http://127.0.0.1:8080/h", true)).toBeUndefined();
  });

  it("a paused endpoint receives nothing; resuming forgets its failures", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    const pause = await t.request(`/api/v1/webhook/${hook.id}`, {
      method: "PUT",
      token: await admin(t),
      body: { status: "paused" },
    });
    expect(pause.status).toBe(204);
    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 1 } });
    expect(queueOf(t).held).toHaveLength(0);
    const resume = await t.request(`/api/v1/webhook/${hook.id}`, {
      method: "PUT",
      token: await admin(t),
      body: { status: "active" },
    });
    expect(resume.status).toBe(204);
  });
});

describe("where a host name points (DNS over HTTPS, a real DoH server on loopback)", () => {
  const resolver = dohResolver(`${RECEIVER}/dns-query`);
  const names = (suffix: string) => ({
    public: `public-${suffix}.example.org`,
    mixed: `mixed-${suffix}.example.org`,
    loopback6: `loop6-${suffix}.example.org`,
    metadata: `meta-${suffix}.example.org`,
    broken: `broken-${suffix}.example.org`,
    unknown: `unknown-${suffix}.example.org`,
  });
  const zone = async (name: string, records: { A?: string[]; AAAA?: string[]; fail?: boolean }) => {
    const res = await fetch(`${RECEIVER}/dns/${name}`, { method: "PUT", body: JSON.stringify(records) });
    expect(res.status).toBe(204);
  };
  const asked = async (name: string) =>
    ((await (await fetch(`${RECEIVER}/dns-queries/${name}`)).json()) as { count: number }).count;

  it("refuses a name any of whose A or AAAA addresses is private, loopback, link-local or metadata, or that does not resolve", async () => {
    const n = names(Math.random().toString(36).slice(2, 8));
    await zone(n.public, { A: ["93.184.216.34"], AAAA: ["2606:2800:220:1:248:1893:25c8:1946"] });
    await zone(n.mixed, { A: ["93.184.216.34", "10.0.0.5"] });
    await zone(n.loopback6, { AAAA: ["::1"] });
    await zone(n.metadata, { A: ["169.254.169.254"] });
    await zone(n.broken, { fail: true });
    expect(await resolver.resolve(n.public)).toEqual(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]);
    expect(await refusedDestination(`https://${n.public}/h`, false, resolver)).toBeUndefined();
    for (const name of [n.mixed, n.loopback6, n.metadata]) {
      expect(await refusedDestination(`https://${name}/h`, false, resolver), name).toBe(
        "its host name resolves to a private, loopback or link-local address",
      );
    }
    expect(await refusedDestination(`https://${n.unknown}/h`, false, resolver)).toBe("its host name does not resolve");
    expect(await refusedDestination(`https://${n.broken}/h`, false, resolver)).toBe(
      "its host name could not be resolved",
    );
    // The literal checks come first (no question asked); development resolves nothing.
    expect(await refusedDestination("https://10.0.0.1/h", false, resolver)).toBe(
      "a private, loopback or link-local address",
    );
    expect(await refusedDestination(`http://${n.mixed}/h`, true, resolver)).toBeUndefined();
    expect(await asked(n.mixed)).toBe(2);
  });

  it("in production: a name resolving inward is a 422; a name that turns inward after it was saved is refused at the attempt", async () => {
    const base = makeTestApp();
    const t = makeTestApp({ config: { ...base.deps.config, environment: "production" } });
    const n = names(Math.random().toString(36).slice(2, 8));
    await zone(n.mixed, { A: ["93.184.216.34", "192.168.1.20"] });
    await zone(n.public, { A: ["93.184.216.34"] });
    const inward = await t.request("/api/v1/webhook", {
      method: "POST",
      token: await admin(t),
      body: { url: `https://${n.mixed}/hook`, eventTypes: ["student.created"] },
    });
    expect((await problem(inward)).detail).toBe(
      "This URL cannot receive webhooks: its host name resolves to a private, loopback or link-local address",
    );
    const hook = await create(t, `https://${n.public}/hook`);
    // DNS changes: the name now points at the metadata address.
    await zone(n.public, { A: ["169.254.169.254"] });
    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 9 } });
    await deliverAll(t);
    const [delivery] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, hook.id));
    expect(delivery?.attemptLog[0]).toMatchObject({
      statusCode: null,
      error: "refused: its host name resolves to a private, loopback or link-local address",
    });
    // Asked twice per look (A, AAAA): when saved, and at the attempt.
    expect(await asked(n.public)).toBeGreaterThanOrEqual(4);
  });
});

describe("delivery", () => {
  it("posts the event signed (the library verifies it), once however often the queue redelivers it", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["student.created"]);
    const other = await receiver();
    const notSubscribed = await create(t, other.url, ["route.boarded"]);
    await configure(t, r.name, [hook.secret]);
    await configure(t, other.name, [notSubscribed.secret]);

    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 7, firstName: "Pablo" } });
    const queue = queueOf(t);
    expect(queue.held).toHaveLength(1);
    const message = queue.held[0];
    if (!message) throw new Error("no message");
    await deliverAll(t);
    // The same queue message again (a redelivery), twice: nothing is sent twice.
    await queue.deliverOne(t.deps, message);
    await queue.deliverOne(t.deps, { ...message, attempts: 2 });

    const got = await received(r.name);
    expect(got).toHaveLength(1);
    expect(got[0]?.verifiedWith).toEqual([0]);
    expect(got[0]?.id).toMatch(/^msg_/);
    const body = JSON.parse(got[0]?.body ?? "{}");
    expect(body).toMatchObject({ type: "student.created", timestamp: "2026-11-23T15:00:00.000Z" });
    expect(body.data).toEqual({ student: { id: 7, firstName: "Pablo" } });
    expect(await received(other.name)).toHaveLength(0);

    const log = await t.request(`/api/v1/webhook/${hook.id}/delivery`, { token: await admin(t) });
    expect(log.status).toBe(200);
    const page = (await log.json()) as { data: Delivery[]; total: number };
    expect(page.total).toBe(1);
    expect(page.data[0]).toMatchObject({ status: "delivered", messageId: got[0]?.id, attempts: 1 });
    expect(page.data[0]?.attemptLog).toEqual([expect.objectContaining({ statusCode: 204, error: null })]);
  });

  it("a signature the receiver's secret does not match is refused by the library", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    await configure(t, r.name, ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", hook.secret]);
    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 1 } });
    await deliverAll(t);
    const [got] = await received(r.name);
    expect(got?.verifiedWith).toEqual([1]);
    expect(got?.refusals).toEqual(["No matching signature found"]);
  });

  it("retries a failed attempt with backoff and the same webhook-id (a replay the receiver recognises)", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    await configure(t, r.name, [hook.secret], 503);
    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 1 } });
    const queue = queueOf(t);
    const message = queue.held.shift();
    if (!message) throw new Error("no message");
    const first = await queue.deliverOne(t.deps, message);
    expect(first.retryMessages).toHaveLength(1);
    // The consumer asks for the schedule's first delay (the dispatcher's floor is 10 s).
    expect(first.delays[0]).toBe(Math.max(10, RETRY_SCHEDULE[0]));
    // Redelivered before it is due: no attempt, asked back later.
    const early = await queue.deliverOne(t.deps, { ...message, attempts: 2 });
    expect(early.retryMessages).toHaveLength(1);
    expect(await received(r.name)).toHaveLength(1);

    t.clock.advance(RETRY_SCHEDULE[0]);
    await configure(t, r.name, [hook.secret], 200);
    await queue.deliverOne(t.deps, { ...message, attempts: 3 });
    const got = await received(r.name);
    expect(got).toHaveLength(2);
    expect(got[1]?.id).toBe(got[0]?.id);
    expect(got[1]?.replay).toBe(true);
    expect(got.every((g) => g.verifiedWith.length === 1)).toBe(true);
    const [delivery] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, hook.id));
    expect(delivery).toMatchObject({ status: "delivered", attempts: 2 });
    expect(delivery?.attemptLog.map((a) => a.statusCode)).toEqual([503, 200]);
  });

  it("gives up after about 24 hours of retries; a manual retry starts a new round", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    await configure(t, r.name, [hook.secret], 500);
    const start = t.clock.now().getTime();
    await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 1 } });
    await deliverAll(t);
    expect(await received(r.name)).toHaveLength(MAX_ATTEMPTS);
    const hours = (t.clock.now().getTime() - start) / 3_600_000;
    expect(hours).toBeGreaterThan(23);
    expect(hours).toBeLessThan(25);
    const log = (await (
      await t.request(`/api/v1/webhook/${hook.id}/delivery?status=failed`, { token: await admin(t) })
    ).json()) as { data: Delivery[] };
    expect(log.data).toHaveLength(1);
    const failed = log.data[0] as Delivery;
    expect(failed.attemptLog).toHaveLength(MAX_ATTEMPTS);
    expect(failed.attemptLog.every((a) => a.statusCode === 500 && a.error === "HTTP 500")).toBe(true);

    await configure(t, r.name, [hook.secret], 204);
    const retry = await t.request(`/api/v1/webhook/${hook.id}/delivery/${failed.id}/retry`, {
      method: "POST",
      token: await admin(t),
    });
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ status: "pending", attempts: 0 });
    const again = await t.request(`/api/v1/webhook/${hook.id}/delivery/${failed.id}/retry`, {
      method: "POST",
      token: await admin(t),
    });
    expect((await problem(again)).status).toBe(409);
    await deliverAll(t);
    const got = await received(r.name);
    expect(got.at(-1)?.id).toBe(failed.messageId);
    expect(got.at(-1)?.replay).toBe(true);
    const [row] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, failed.id));
    expect(row?.status).toBe("delivered");
  });

  it("pauses an endpoint after repeated failures and tells the school's admins", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    await configure(t, r.name, [hook.secret], 500);
    await emitWebhookEvent(ctxOf(t), "student.created", { n: 1 });
    await deliverAll(t); // MAX_ATTEMPTS failures
    await emitWebhookEvent(ctxOf(t), "student.created", { n: 2 });
    await deliverAll(t); // the rest up to PAUSE_AFTER, then the endpoint is paused
    expect(await received(r.name)).toHaveLength(PAUSE_AFTER);
    const got = (await (await t.request(`/api/v1/webhook/${hook.id}`, { token: await admin(t) })).json()) as Webhook & {
      pausedReason: string;
    };
    expect(got).toMatchObject({ status: "paused", failureStreak: PAUSE_AFTER });
    expect(got.pausedReason).toContain(String(PAUSE_AFTER));
    const told = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.aboutEntity, "webhook"), eq(notifications.aboutId, hook.id)));
    expect(told).toHaveLength(1);
    // The second event's delivery failed with the pause; later events are not sent.
    await emitWebhookEvent(ctxOf(t), "student.created", { n: 3 });
    expect(queueOf(t).held).toHaveLength(0);
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "webhook"), eq(auditLog.recordId, hook.id), eq(auditLog.action, "pause")));
    expect(audits).toHaveLength(1);
  });

  it("signs with both secrets during a rotation's overlap, then with the new one alone", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url);
    const rotated = await t.request(`/api/v1/webhook/${hook.id}/rotate-secret`, {
      method: "PATCH",
      token: await admin(t),
    });
    expect(rotated.status).toBe(200);
    const { secret, previousSecretUntil } = (await rotated.json()) as { secret: string; previousSecretUntil: string };
    expect(secret).not.toBe(hook.secret);
    expect(previousSecretUntil).toBe("2026-11-24T15:00:00.000Z");
    await configure(t, r.name, [secret, hook.secret]);
    await emitWebhookEvent(ctxOf(t), "student.created", { n: 1 });
    await deliverAll(t);
    const [during] = await received(r.name);
    expect(during?.verifiedWith).toEqual([0, 1]);
    expect(during?.body).toContain('"n":1');

    t.clock.advance(24 * 3600 + 1);
    await configure(t, r.name, [secret, hook.secret]);
    await emitWebhookEvent(ctxOf(t), "student.created", { n: 2 });
    await deliverAll(t);
    const after = (await received(r.name))[1];
    expect(after?.verifiedWith).toEqual([0]);
  });
});

describe("fan-out", () => {
  it("one event to 20 endpoints: one D1 round trip (the message, 20 deliveries, read back) and one queue send", async () => {
    const { t, measure } = countingTestApp();
    const hooks = [];
    for (let i = 0; i < 20; i++) hooks.push(await create(t, `${RECEIVER}/hook/fan-${i}`));
    const queue = queueOf(t);
    queue.held.length = 0;
    let sends = 0;
    const send = queue.sendBatch.bind(queue);
    queue.sendBatch = async (messages) => {
      sends++;
      return send(messages);
    };
    const emitted = await measure(async () => {
      await emitWebhookEvent(ctxOf(t), "student.created", { student: { id: 11 } });
      return new Response(null, { status: 204 });
    });
    expect(emitted.calls).toBe(1);
    expect(sends).toBe(1);
    expect(queue.held).toHaveLength(20);
    const endpoints = await t.db.select({ id: webhookDeliveries.endpointId }).from(webhookDeliveries);
    expect(new Set(endpoints.map((e) => e.id))).toEqual(new Set(hooks.map((h) => h.id)));
  });
});

describe("events the school emits", () => {
  const events = async (name: string) =>
    (await received(name)).map(
      (r) => JSON.parse(r.body) as { type: string; data: Record<string, Record<string, unknown>> },
    );

  it("student.created and student.updated from the student routes", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["student.created", "student.updated"]);
    await configure(t, r.name, [hook.secret]);
    const res = await t.request("/api/v1/student", {
      method: "POST",
      token: await admin(t),
      body: { firstName: "Pablo", lastName: "Ruiz" },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: number };
    const put = await t.request(`/api/v1/student/${id}`, {
      method: "PUT",
      token: await admin(t),
      body: { lastName: "Ruiz Gómez" },
    });
    expect(put.status).toBe(204);
    await deliverAll(t);
    const got = await events(r.name);
    expect(got.map((e) => e.type)).toEqual(["student.created", "student.updated"]);
    expect(got[0]?.data.student).toMatchObject({ id, firstName: "Pablo", lastName: "Ruiz" });
    expect(got[1]?.data.student).toEqual({ id, changed: { lastName: "Ruiz Gómez" } });
    expect((await received(r.name)).every((x) => x.verifiedWith.length === 1)).toBe(true);
  });

  it("exit-permission.confirmed when the office confirms, exit-permission.withdrawn when it withdraws", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["exit-permission.confirmed", "exit-permission.withdrawn"]);
    await configure(t, r.name, [hook.secret]);
    const family = await makeFamily(t, NORTH);
    const id = await confirmedAbsence(t, NORTH, await admin(t), family.studentId, schoolDate(t));
    const withdraw = await t.request(`/api/v1/exit-permission/${id}`, { method: "DELETE", token: await admin(t) });
    expect(withdraw.status).toBe(204);
    await deliverAll(t);
    const got = await events(r.name);
    expect(got.map((e) => e.type)).toEqual(["exit-permission.confirmed", "exit-permission.withdrawn"]);
    expect(got[0]?.data.exitPermission).toMatchObject({ id, studentId: family.studentId, status: "confirmed" });
    expect(got[1]?.data.exitPermission).toMatchObject({ id, studentId: family.studentId, status: "cancelled" });
  });

  it("dismissal.released for a release at the gate and for each release a gate device sends later", async () => {
    const t = makeTestApp();
    // Monday 23 November 2026, 14:40 in Mexico City: elementary's dismissal.
    t.clock.current = new Date("2026-11-23T20:40:00.000Z");
    const r = await receiver();
    const hook = await create(t, r.url, ["dismissal.released"]);
    await configure(t, r.name, [hook.secret]);
    const [a, b, c] = [await makeFamily(t, NORTH), await makeFamily(t, NORTH), await makeFamily(t, NORTH)];
    const gate = await t.token(DEMO.northAdmin.id, { [NORTH]: grantsOf("gate").map((p) => p.name) });
    const online = await t.request("/api/v1/dismissal/release", {
      method: "POST",
      token: gate,
      body: { studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } },
    });
    expect(online.status, await online.clone().text()).toBe(201);
    const offline = await t.request("/api/v1/dismissal/release/batch", {
      method: "POST",
      token: gate,
      body: {
        releases: [
          { clientId: "wh-1", release: { studentId: b.studentId, collector: { kind: "guardian", id: b.parentId } } },
          { clientId: "wh-2", release: { studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } } },
          { clientId: "wh-3", release: { studentId: c.studentId, collector: { kind: "guardian", id: c.parentId } } },
        ],
      },
    });
    expect(offline.status, await offline.clone().text()).toBe(200);
    const results = ((await offline.json()) as { results: { result: string }[] }).results.map((x) => x.result);
    expect(results).toEqual(["released", "duplicate", "released"]);
    await deliverAll(t);
    const got = await events(r.name);
    expect(got.map((e) => e.type)).toEqual(["dismissal.released", "dismissal.released", "dismissal.released"]);
    // The duplicate (a was released at the gate already) is not heard twice.
    expect(got.map((e) => (e.data.release as { studentId: number }).studentId)).toEqual([
      a.studentId,
      b.studentId,
      c.studentId,
    ]);
    expect(got[1]?.data).toMatchObject({
      date: "2026-11-23",
      release: { collector: { kind: "guardian", id: b.parentId } },
    });
  });

  it("exit-permission.withdrawn when a guardian's restriction withdraws a confirmed pickup", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["exit-permission.withdrawn"]);
    await configure(t, r.name, [hook.secret]);
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const [made] = await t.db
      .insert(exitPermissions)
      .values({
        schoolId: NORTH,
        studentId: family.studentId,
        date,
        kind: "auto_pickup",
        status: "confirmed",
        parentId: family.parentId,
        pickupParentId: family.parentId,
        slug: crypto.randomUUID().replaceAll("-", ""),
        decidedAt: "2026-11-20T10:00:00.000Z",
      })
      .returning({ id: exitPermissions.id });
    const [link] = await t.db
      .select({ id: guardians.id })
      .from(guardians)
      .where(eq(guardians.parentId, family.parentId));
    const restricted = await t.request(`/api/v1/student-guardian/${link?.id}/restriction`, {
      method: "PATCH",
      token: await admin(t),
      body: { restricted: true, reason: "Court order" },
    });
    expect(restricted.status, await restricted.clone().text()).toBe(200);
    await deliverAll(t);
    const got = await events(r.name);
    expect(got.map((e) => e.type)).toEqual(["exit-permission.withdrawn"]);
    expect(got[0]?.data.exitPermission).toMatchObject({
      id: made?.id,
      studentId: family.studentId,
      date,
      kind: "auto_pickup",
      status: "withdrawn",
    });
  });

  it("a fixed permission's confirmation: confirmed for each day it confirms, withdrawn for the one a day supersedes", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["exit-permission.confirmed", "exit-permission.withdrawn"]);
    await configure(t, r.name, [hook.secret]);
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    // The office's absence of that day, confirmed.
    const absence = await confirmedAbsence(t, NORTH, await admin(t), family.studentId, date);
    // The family's pickup of that weekday, confirmed as a pattern: its day replaces the absence.
    const fixed = await fixedPickup(t, family, date, date);
    const decided = await t.request(`/api/v1/exit-permission/fixed/auto-pickup/${fixed}/confirm`, {
      method: "PATCH",
      token: await admin(t),
      body: { status: "confirmed" },
    });
    expect(decided.status, await decided.clone().text()).toBe(200);
    const days = await t.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed));
    expect(days.map((d) => d.status)).toEqual(["confirmed"]);
    await deliverAll(t);
    const got = (await events(r.name)).map((e) => [e.type, e.data.exitPermission?.id, e.data.exitPermission?.status]);
    expect(got).toEqual([
      ["exit-permission.confirmed", absence, "confirmed"],
      ["exit-permission.withdrawn", absence, "superseded"],
      ["exit-permission.confirmed", days[0]?.id, "confirmed"],
    ]);
  });

  it("the fixed permissions' daily job: each day it makes confirmed is heard; deleting the pattern withdraws its confirmed days", async () => {
    const t = makeTestApp();
    const r = await receiver();
    const hook = await create(t, r.url, ["exit-permission.confirmed", "exit-permission.withdrawn"]);
    const family = await makeFamily(t, NORTH);
    const date = schoolDate(t);
    const fixed = await fixedPickup(t, family, date, "2027-06-30");
    const decided = await t.request(`/api/v1/exit-permission/fixed/auto-pickup/${fixed}/confirm`, {
      method: "PATCH",
      token: await admin(t),
      body: { status: "confirmed" },
    });
    expect(decided.status).toBe(200);
    const daysOf = () => t.db.select().from(exitPermissions).where(eq(exitPermissions.fixedId, fixed));
    const first = await daysOf();
    // A week later the job makes the week's new day: confirmed with its pattern, and heard.
    t.clock.advance(7 * 24 * 3600);
    const { generateFixedExitPermissions } = await import("../src/modules/exit-permission/fixed");
    await generateFixedExitPermissions(t.deps);
    const all = await daysOf();
    const made = all.filter((d) => !first.some((f) => f.id === d.id));
    expect(made.length).toBeGreaterThan(0);
    expect(made.every((d) => d.status === "confirmed")).toBe(true);
    // Deleted, its confirmed days from today on are withdrawn (cancelled), each heard.
    const gone = await t.request(`/api/v1/exit-permission/fixed/auto-pickup/${fixed}`, {
      method: "DELETE",
      token: await parentToken(t, family, NORTH),
    });
    expect(gone.status).toBe(204);
    const cancelled = (await daysOf()).filter((d) => d.status === "cancelled").map((d) => d.id);
    expect(cancelled.length).toBeGreaterThan(made.length);
    await configure(t, r.name, [hook.secret]);
    await deliverAll(t);
    // The job makes the days of every school's fixed permissions (the demo's too): this family's only.
    const got = (await events(r.name)).filter((e) => e.data.exitPermission?.studentId === family.studentId);
    const ids = (type: string, status: string) =>
      got
        .filter((e) => e.type === type && e.data.exitPermission?.status === status)
        .map((e) => e.data.exitPermission?.id)
        .sort();
    expect(ids("exit-permission.confirmed", "confirmed")).toEqual(all.map((d) => d.id).sort());
    expect(ids("exit-permission.withdrawn", "cancelled")).toEqual(cancelled.sort());
    expect(got).toHaveLength(all.length + cancelled.length);
  });
});

/** The family's fixed pickup on `from`'s weekday from `from` to `until`, asked by the parent: its id. */
async function fixedPickup(t: TestApp, family: { userId: number; studentId: number }, from: string, until: string) {
  const weekday = new Date(`${from}T00:00:00Z`).getUTCDay();
  const res = await t.request("/api/v1/exit-permission/fixed/auto-pickup", {
    method: "POST",
    token: await parentToken(t, family, NORTH),
    body: { studentId: family.studentId, weekdays: [weekday], fromDate: from, untilDate: until },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: number }).id;
}
