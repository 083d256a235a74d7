/**
 * Push delivery for real: FCM HTTP v1 against the stand-in on loopback (test/node/fcm-server.ts),
 * which checks the OAuth assertion's signature, the bearer token and the message shape, and fails
 * on demand. And the queue's promises: retries with backoff, the dead-letter queue, a message
 * delivered twice, two deliveries at once, the sweep for what was never dispatched, many chunks.
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { Batch } from "../src/db/batch";
import { auditLog } from "../src/db/schema/audit-log";
import { roles } from "../src/db/schema/core";
import { deviceTokens } from "../src/db/schema/device-token";
import { notificationPushes, notificationRecipients, notifications } from "../src/db/schema/notification";
import { withSearch } from "../src/db/search";
import type { QueueProducer } from "../src/deps";
import { jobCtx } from "../src/lib/context";
import { fcmPush, forgetAccessTokens } from "../src/lib/push";
import { notify } from "../src/modules/notification/api";
import { CHUNK } from "../src/modules/notification/fan-out";
import { sweepNotifications } from "../src/modules/notification/sweep";
import { makeTestApp, type TestApp } from "./helpers";
import { classWithFamilies } from "./notification-kit";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const endpoint = inject("fcmEndpoint");

/** An app whose pushes go to the FCM stand-in, with its push queue in the test's hands. */
function fcmApp() {
  const push = new PushQueue();
  const t = makeTestApp({ queues: { push } });
  const provider = fcmPush(
    { account: JSON.parse(inject("fcmServiceAccount")), baseUrl: endpoint, iidBaseUrl: endpoint },
    t.clock,
  );
  Object.assign(t.deps, { push: provider });
  return { t, push };
}

const standIn = async <T>(path: string, init?: RequestInit) =>
  (await (await fetch(`${endpoint}${path}`, init)).json()) as T;
const received = (token: string) =>
  standIn<{ token: string; message: Record<string, unknown>; authorization: string }[]>(
    `/stand-in/messages?token=${encodeURIComponent(token)}`,
  );
const script = (token: string, answers: (string | number)[]) =>
  standIn("/stand-in/script", { method: "POST", body: JSON.stringify({ token, answers }) });
const tokensIssued = async () => (await standIn<{ accessTokensIssued: number }>("/stand-in/stats")).accessTokensIssued;

/** The group's notification from the admin: its id. */
async function sendToGroup(t: TestApp, groupId: number, extra: object = {}) {
  const res = await t.request("/api/v1/notification", {
    method: "POST",
    token: await t.token(2, { [NORTH]: "all" }),
    school: NORTH,
    body: { title: "Snow day", body: "School is closed", groups: [groupId], ...extra },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

const pushesOf = (t: TestApp, id: number) =>
  t.db
    .select({
      status: notificationPushes.status,
      attempts: notificationPushes.attempts,
      userId: notificationRecipients.userId,
      error: notificationPushes.error,
    })
    .from(notificationPushes)
    .innerJoin(notificationRecipients, eq(notificationRecipients.id, notificationPushes.recipientId))
    .where(eq(notificationPushes.notificationId, id))
    .orderBy(asc(notificationRecipients.userId));

beforeEach(() => forgetAccessTokens());

describe("FCM HTTP v1 (the stand-in verifies the OAuth assertion, the bearer token and the message)", () => {
  it("each guardian's device gets the message; one access token serves every send until it expires", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const before = await tokensIssued();
    const id = await sendToGroup(t, klass.groupId);
    await push.drain(t.deps);
    const bearers = new Set<string>();
    for (const user of klass.guardians) {
      const got = await received(klass.tokens.get(user) ?? "");
      expect(got).toHaveLength(1);
      expect(got[0]?.message).toMatchObject({
        token: klass.tokens.get(user),
        notification: { title: "Snow day", body: "School is closed" },
        data: { notificationId: String(id), category: "general" },
      });
      bearers.add(got[0]?.authorization ?? "");
    }
    expect(await tokensIssued()).toBe(before + 1);
    expect(bearers.size).toBe(1);
    expect(await pushesOf(t, id)).toEqual(
      klass.guardians.map((userId) => expect.objectContaining({ userId, status: "sent", attempts: 1 })),
    );
    // An hour later the cached token has expired: a new one is asked for.
    t.clock.advance(3600);
    await sendToGroup(t, klass.groupId);
    await push.drain(t.deps);
    expect(await tokensIssued()).toBe(before + 2);
  });

  it("a token FCM calls unregistered or invalid is removed (audited); the copy and the other pushes stay", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const [gone, invalid, fine] = klass.guardians as [number, number, number];
    await script(klass.tokens.get(gone) ?? "", ["UNREGISTERED"]);
    await script(klass.tokens.get(invalid) ?? "", ["INVALID_ARGUMENT"]);
    const id = await sendToGroup(t, klass.groupId);
    await push.drain(t.deps);
    expect(push.deadLettered).toEqual([]);
    const left = await t.db
      .select({ userId: deviceTokens.userId })
      .from(deviceTokens)
      .where(sql`${deviceTokens.userId} IN (${gone}, ${invalid}, ${fine})`);
    expect(left).toEqual([{ userId: fine }]);
    const audits = await t.db
      .select({ action: auditLog.action, actorName: auditLog.actorName, schoolId: auditLog.schoolId })
      .from(auditLog)
      .where(and(eq(auditLog.entity, "device-token"), eq(auditLog.action, "unregistered")));
    expect(audits).toEqual([
      { action: "unregistered", actorName: "notification-push", schoolId: NORTH },
      { action: "unregistered", actorName: "notification-push", schoolId: NORTH },
    ]);
    expect(await received(klass.tokens.get(fine) ?? "")).toHaveLength(1);
    const copies = await t.db
      .select()
      .from(notificationRecipients)
      .where(eq(notificationRecipients.notificationId, id));
    expect(copies).toHaveLength(3);
  });

  it("429: retried by the queue no sooner than Retry-After, then sent once", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const [busy] = klass.guardians as [number];
    await script(klass.tokens.get(busy) ?? "", [429]);
    const id = await sendToGroup(t, klass.groupId);
    await push.drain(t.deps);
    expect(push.retryDelays).toEqual([10]);
    expect(await received(klass.tokens.get(busy) ?? "")).toHaveLength(1);
    const rows = await pushesOf(t, id);
    expect(rows.find((r) => r.userId === busy)).toMatchObject({ status: "sent", attempts: 2 });
    // The others were sent by the first delivery and not again.
    for (const user of klass.guardians.slice(1)) expect(await received(klass.tokens.get(user) ?? "")).toHaveLength(1);
  });

  it("500 three times: the message lands in the dead-letter queue, the push is failed, nothing is lost", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const [down] = klass.guardians as [number];
    await script(klass.tokens.get(down) ?? "", [500, 500, 500]);
    const id = await sendToGroup(t, klass.groupId);
    await push.drain(t.deps);
    expect(push.deadLettered).toEqual([{ kind: "push", notificationId: id, schoolId: NORTH }]);
    expect(push.retryDelays.slice(0, 2)).toEqual([10, 30]);
    const row = (await pushesOf(t, id)).find((r) => r.userId === down);
    expect(row).toMatchObject({ status: "failed", attempts: 3 });
    expect(row?.error).toMatch(/^500 INTERNAL/);
    // The copy is in the inbox; the others got their push once.
    const inbox = await t.request(`/api/v1/notification/${id}`, {
      token: await t.token(down, { [NORTH]: [] }),
      school: NORTH,
    });
    expect(inbox.status).toBe(200);
    for (const user of klass.guardians.slice(1)) expect(await received(klass.tokens.get(user) ?? "")).toHaveLength(1);
    expect(await received(klass.tokens.get(down) ?? "")).toHaveLength(0);
    // The sweep does not try a failed push again.
    t.clock.advance(3600);
    await sweepNotifications(t.deps);
    await push.drain(t.deps);
    expect(await received(klass.tokens.get(down) ?? "")).toHaveLength(0);
  });
});

describe("at least once: a message twice, two at once", () => {
  it("the same fan-out and push messages delivered twice: no second copy, no second push", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const id = await sendToGroup(t, klass.groupId);
    const [fanOut] = push.held.splice(0);
    if (!fanOut) throw new Error("no fan-out message");
    await push.deliverOne(t.deps, fanOut);
    await push.deliverOne(t.deps, fanOut);
    const pushes = push.held.splice(0);
    // Each delivery of the fan-out queued its push message: two of them, each delivered twice.
    expect(pushes.map((m) => m.body)).toEqual([
      { kind: "push", notificationId: id, schoolId: NORTH },
      { kind: "push", notificationId: id, schoolId: NORTH },
    ]);
    for (const m of [...pushes, ...pushes]) await push.deliverOne(t.deps, m);
    const [copies] = await t.db
      .select({ n: count() })
      .from(notificationRecipients)
      .where(eq(notificationRecipients.notificationId, id));
    expect(copies?.n).toBe(3);
    for (const user of klass.guardians) expect(await received(klass.tokens.get(user) ?? "")).toHaveLength(1);
  });

  it("two deliveries of one notification's pushes at the same time: each device once", async () => {
    const { t, push } = fcmApp();
    const klass = await classWithFamilies(t, NORTH);
    const id = await sendToGroup(t, klass.groupId);
    const [fanOut] = push.held.splice(0);
    if (!fanOut) throw new Error("no fan-out message");
    await push.deliverOne(t.deps, fanOut);
    const body = { kind: "push", notificationId: id, schoolId: NORTH };
    await Promise.all(
      ["a", "b", "c"].map((k) =>
        push.deliverOne(t.deps, { id: `concurrent-${k}-${id}`, body, attempts: 1, queue: "school-push" }),
      ),
    );
    for (const user of klass.guardians) expect(await received(klass.tokens.get(user) ?? "")).toHaveLength(1);
  });
});

describe("the sweep and large audiences", () => {
  it("a notification committed while the queue was down is fanned out by the sweep", async () => {
    const down: QueueProducer = {
      send: () => Promise.reject(new Error("Queue send failed")),
      sendBatch: () => Promise.reject(new Error("Queue send failed")),
    };
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push: down } });
    const klass = await classWithFamilies(t, NORTH);
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, {
      category: "events",
      title: { en: "Fair", es: "Feria" },
      body: "Saturday",
      audience: { groups: [klass.groupId] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await sending.dispatch();
    Object.assign(t.deps.queues, { push });
    // Within minutes it may still be on its way: the sweep waits.
    t.clock.advance(60);
    expect(await sweepNotifications(t.deps)).toMatch(/^0 fan-outs/);
    t.clock.advance(5 * 60);
    expect(await sweepNotifications(t.deps)).toMatch(/^1 fan-outs/);
    await push.drain(t.deps);
    const [row] = await t.db.select().from(notifications).where(eq(notifications.key, sending.key));
    const copies = await t.db
      .select()
      .from(notificationRecipients)
      .where(eq(notificationRecipients.notificationId, row?.id ?? 0));
    expect(copies.map((c) => c.userId).sort((a, b) => a - b)).toEqual(klass.guardians);
    expect(row?.fannedOutAt).not.toBeNull();
    // Run again: nothing left to queue.
    t.clock.advance(10 * 60);
    expect(await sweepNotifications(t.deps)).toMatch(/^0 fan-outs and 0/);
  });

  it(`more recipients than a chunk (${CHUNK}): every one once, in several messages`, async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const at = t.clock.now().toISOString();
    const [role] = await t.db
      .insert(roles)
      .values(
        withSearch(roles, { schoolId: NORTH, name: `Volunteers ${crypto.randomUUID()}`, createdAt: at, updatedAt: at }),
      )
      .returning({ id: roles.id });
    const members = 2 * CHUNK + 37;
    // Members made in SQL: users with the role in the school.
    await t.db.run(sql`INSERT INTO "user" (phone, first_name, last_name, first_name_search, last_name_search, status, created_at, updated_at)
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${members})
      SELECT '+1555777' || printf('%04d', i), 'Vol', 'Unteer', 'vol', 'unteer', 'active', ${at}, ${at} FROM n`);
    await t.db.run(sql`INSERT INTO role_user (school_id, user_id, role_id, created_at, updated_at)
      SELECT ${NORTH}, id, ${role?.id}, ${at}, ${at} FROM "user" WHERE phone LIKE '+1555777%'`);
    const res = await t.request("/api/v1/notification", {
      method: "POST",
      token: await t.token(2, { [NORTH]: "all" }),
      school: NORTH,
      body: { title: "Thanks", body: "See you Saturday", roles: [role?.id] },
    });
    const sent = (await res.json()) as { id: number; recipients: number };
    expect(sent.recipients).toBe(members);
    const delivered = await push.drain(t.deps);
    expect(delivered.filter((m) => (m.body as { kind: string }).kind === "fan-out")).toHaveLength(3);
    const [copies] = await t.db
      .select({ n: count(), users: sql<number>`count(DISTINCT ${notificationRecipients.userId})` })
      .from(notificationRecipients)
      .where(eq(notificationRecipients.notificationId, sent.id));
    expect(copies).toEqual({ n: members, users: members });
  });
});
