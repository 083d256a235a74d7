/**
 * Notifications: the service verb every feature sends through (`notify`), the inbox, sending,
 * the fan-out through the push queue, push delivery and preferences.
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { Batch } from "../src/db/batch";
import { auditLog } from "../src/db/schema/audit-log";
import { schools } from "../src/db/schema/core";
import { devPushOutbox } from "../src/db/schema/dev";
import { groupTeachers } from "../src/db/schema/group";
import { notificationPushes, notificationRecipients, notifications } from "../src/db/schema/notification";
import { parents } from "../src/db/schema/parent";
import { guardians } from "../src/db/schema/student";
import { teachers } from "../src/db/schema/teacher";
import type { QueueProducer } from "../src/deps";
import { jobCtx } from "../src/lib/context";
import { notify } from "../src/modules/notification/api";
import { sweepNotifications } from "../src/modules/notification/sweep";
import { makeTestApp, problem, type TestApp } from "./helpers";
import { classWithFamilies, member, student } from "./notification-kit";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const SOUTH = 2;

/** The users with a copy of notification `id`, ascending. */
async function recipientsOf(t: TestApp, id: number, school = NORTH) {
  const rows = await (await t.schoolDb(school))
    .select({ userId: notificationRecipients.userId })
    .from(notificationRecipients)
    .where(eq(notificationRecipients.notificationId, id))
    .orderBy(asc(notificationRecipients.userId));
  return rows.map((r) => r.userId);
}

/** What the log provider pushed to a device token, newest first. */
const pushesTo = (t: TestApp, token: string) =>
  t.db.select().from(devPushOutbox).where(eq(devPushOutbox.token, token)).orderBy(desc(devPushOutbox.id));

/** The ids in a user's inbox (first page of 100) in the first school. */
async function inboxIds(t: TestApp, user: number) {
  const res = await t.request("/api/v1/notification?pageSize=100", {
    token: await t.token(user, { [NORTH]: [] }),
    school: NORTH,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { id: number }[] }).data.map((n) => n.id);
}
const PABLO = 1;
const PALOMA = 2001;

/** The push queue as the API sees it, recording what was sent (the consumer is run by hand). */
function recordingQueue(): QueueProducer & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    send: async (body) => {
      sent.push(body);
    },
    sendBatch: async (messages) => {
      for (const m of messages) sent.push(m.body);
    },
  };
}

describe("notify: the verb every feature sends through", () => {
  it("writes the notification in the caller's batch, counts its recipients once each, and dispatches after", async () => {
    const push = recordingQueue();
    const t = makeTestApp({ queues: { push } });
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, {
      category: "afternoon",
      title: { en: "Pickup changed", es: "Cambio de salida" },
      body: "Today Pablo and Paloma go home by bus",
      about: { entity: "student", id: PABLO },
      audience: { guardiansOf: [PABLO, PALOMA] },
    });
    const batch = new Batch(ctx).add(...sending.statements);
    await batch.commit();
    expect(push.sent).toEqual([]);
    const [row] = await t.db.select().from(notifications).where(eq(notifications.key, sending.key));
    // Siblings: a guardian of both children is one recipient.
    const links = await t.db
      .select({ userId: parents.userId })
      .from(guardians)
      .innerJoin(parents, eq(parents.id, guardians.parentId))
      .where(inArray(guardians.studentId, [PABLO, PALOMA]));
    expect(links.filter((l) => l.userId === 4)).toHaveLength(2);
    expect(row).toMatchObject({
      schoolId: NORTH,
      category: "afternoon",
      urgent: false,
      title: { en: "Pickup changed", es: "Cambio de salida" },
      body: { en: "Today Pablo and Paloma go home by bus", es: "Today Pablo and Paloma go home by bus" },
      aboutEntity: "student",
      aboutId: PABLO,
      audience: { guardiansOf: [PABLO, PALOMA] },
      senderId: null,
      recipientCount: new Set(links.map((l) => l.userId)).size,
      dispatchedAt: null,
    });
    const audit = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.recordId, row?.id ?? 0));
    expect(audit.filter((a) => a.entity === "notification")).toMatchObject([{ action: "create", actorType: "job" }]);
    await sending.dispatch();
    expect(push.sent).toEqual([{ kind: "fan-out", key: sending.key, schoolId: NORTH, after: 0 }]);
  });

  it("a batch that fails writes no notification", async () => {
    const push = recordingQueue();
    const t = makeTestApp({ queues: { push } });
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, { category: "general", title: "Hello", body: "World", audience: { school: true } });
    const { guard } = await import("../src/db/write");
    // The caller's business change did not happen (a guard after a statement that matched nothing).
    const failing = new Batch(ctx).add(
      ...sending.statements,
      t.db.delete(notifications).where(eq(notifications.id, -1)),
      guard(t.db),
    );
    await expect(failing.commit()).rejects.toThrow();
    expect(await t.db.select().from(notifications).where(eq(notifications.key, sending.key))).toEqual([]);
  });

  it("dispatch never rejects when the queue is down (the sweep enqueues the row later)", async () => {
    const down: QueueProducer = {
      send: () => Promise.reject(new Error("Queue send failed")),
      sendBatch: () => Promise.reject(new Error("Queue send failed")),
    };
    const t = makeTestApp({ queues: { push: down } });
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, { category: "general", title: "Hi", body: "There", audience: { users: [2] } });
    await new Batch(ctx).add(...sending.statements).commit();
    await expect(sending.dispatch()).resolves.toBeUndefined();
  });
});

describe("sending to a group: the copies and pushes reach exactly its guardians", () => {
  it("one copy per guardian (siblings once), none for a muted guardianship; the answer counts them", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const klass = await classWithFamilies(t, NORTH);
    const admin = await t.token(2, { [NORTH]: "all" });
    const res = await t.request(`/api/v1/group/${klass.groupId}/notification`, {
      method: "POST",
      token: admin,
      school: NORTH,
      body: { title: "Field trip", body: "Bring a hat" },
    });
    expect(res.status).toBe(201);
    const sent = (await res.json()) as { id: number; recipients: number; audience: unknown; category: string };
    expect(sent).toMatchObject({ recipients: 3, audience: { groups: [klass.groupId] }, category: "general" });
    await push.drain(t.deps);
    expect(await recipientsOf(t, sent.id)).toEqual(klass.guardians);
    for (const user of klass.guardians) {
      const outbox = await pushesTo(t, klass.tokens.get(user) ?? "");
      expect(outbox).toHaveLength(1);
      expect(outbox[0]?.payload).toMatchObject({
        message: {
          token: klass.tokens.get(user),
          notification: { title: "Field trip", body: "Bring a hat" },
          data: { notificationId: String(sent.id), category: "general" },
          android: { priority: "NORMAL" },
        },
      });
    }
    expect(await pushesTo(t, klass.tokens.get(klass.muted) ?? "")).toEqual([]);
  });

  it("another school's group is a 404 and nothing is sent; so is a group the teacher does not teach", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const south = await classWithFamilies(t, SOUTH);
    const admin = await t.token(2, { [NORTH]: "all" });
    const body = { title: "Hello", body: "There" };
    const res = await t.request(`/api/v1/group/${south.groupId}/notification`, {
      method: "POST",
      token: admin,
      school: NORTH,
      body,
    });
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toBe(`Group ${south.groupId} not found`);
    const viaList = await t.request("/api/v1/notification", {
      method: "POST",
      token: admin,
      school: NORTH,
      body: { ...body, groups: [south.groupId] },
    });
    expect(viaList.status).toBe(404);
    expect((await problem(viaList)).detail).toBe(`Group ${south.groupId} not found`);
    expect(push.sent).toEqual([]);
    // A teacher (notification.send-group without notification.send) reaches the groups they teach only.
    const north = await classWithFamilies(t, NORTH);
    const teacher = await member(t, NORTH, { role: 4 });
    const asTeacher = await t.token(teacher, { [NORTH]: ["notification.send-group", "group.read"] });
    const refused = await t.request(`/api/v1/group/${north.groupId}/notification`, {
      method: "POST",
      token: asTeacher,
      school: NORTH,
      body,
    });
    expect(refused.status).toBe(404);
    const [profile] = await t.db.select({ id: teachers.id }).from(teachers).where(eq(teachers.userId, teacher));
    await t.db.insert(groupTeachers).values({
      schoolId: NORTH,
      groupId: north.groupId,
      teacherId: profile?.id ?? 0,
      createdAt: "2026-11-01T00:00:00.000Z",
      updatedAt: "2026-11-01T00:00:00.000Z",
    });
    const allowed = await t.request(`/api/v1/group/${north.groupId}/notification`, {
      method: "POST",
      token: asTeacher,
      school: NORTH,
      body,
    });
    expect(allowed.status).toBe(201);
    expect(((await allowed.json()) as { recipients: number }).recipients).toBe(3);
  });

  it("every part of an audience must be the school's: a role, a student or a member of another is a 404", async () => {
    const t = makeTestApp({ queues: { push: new PushQueue() } });
    const admin = await t.token(2, { [NORTH]: "all" });
    const southStudent = await student(t, SOUTH);
    const southMember = await member(t, SOUTH);
    const send = (extra: object) =>
      t.request("/api/v1/notification", {
        method: "POST",
        token: admin,
        school: NORTH,
        body: { title: "T", body: "B", ...extra },
      });
    expect((await problem(await send({ guardiansOf: [PABLO, southStudent] }))).detail).toBe(
      `Student ${southStudent} not found`,
    );
    expect((await problem(await send({ users: [2, southMember] }))).detail).toBe(`User ${southMember} not found`);
    expect((await problem(await send({ roles: [987654] }))).detail).toBe("Role 987654 not found");
    const none = await send({});
    expect(none.status).toBe(400);
    expect(
      await t.db
        .select()
        .from(notifications)
        .where(eq(notifications.title, { en: "T", es: "T" })),
    ).toEqual([]);
  });
});

describe("preferences and quiet hours", () => {
  it("push off: an inbox copy, no push; inbox off: a push, no inbox copy; an emergency ignores both", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const klass = await classWithFamilies(t, NORTH);
    const [a, b] = klass.guardians as [number, number, number];
    const save = async (user: number, body: object) => {
      const res = await t.request("/api/v1/notification-preference", {
        method: "POST",
        token: await t.token(user, { [NORTH]: [] }),
        school: NORTH,
        body,
      });
      expect(res.status).toBe(201);
    };
    await save(a, { categories: { events: { push: false } } });
    await save(b, { categories: { events: { inbox: false } } });
    const admin = await t.token(2, { [NORTH]: "all" });
    const send = async (category: string) => {
      const res = await t.request(`/api/v1/notification`, {
        method: "POST",
        token: admin,
        school: NORTH,
        body: { category, title: category, body: "x", groups: [klass.groupId] },
      });
      expect(res.status).toBe(201);
      await push.drain(t.deps);
      return ((await res.json()) as { id: number }).id;
    };
    const events = await send("events");
    expect(await pushesTo(t, klass.tokens.get(a) ?? "")).toHaveLength(0);
    expect(await pushesTo(t, klass.tokens.get(b) ?? "")).toHaveLength(1);
    expect(await inboxIds(t, a)).toContain(events);
    expect(await inboxIds(t, b)).not.toContain(events);
    const emergency = await send("emergency");
    expect(await pushesTo(t, klass.tokens.get(a) ?? "")).toHaveLength(1);
    expect(await inboxIds(t, b)).toContain(emergency);
    const [urgentPush] = await pushesTo(t, klass.tokens.get(a) ?? "");
    expect(urgentPush?.payload).toMatchObject({
      message: { android: { priority: "HIGH" }, apns: { headers: { "apns-priority": "10" } } },
    });
  });

  it("during quiet hours (the school's zone) a push waits until they end, then the sweep sends it; urgent ones go at once", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    // 15:00Z on 2026-11-23 is 10:00 in New York (EST), the zone the test gives the school.
    await t.db.update(schools).set({ timeZone: "America/New_York" }).where(eq(schools.id, NORTH));
    const klass = await classWithFamilies(t, NORTH);
    const [quiet, loud] = klass.guardians as [number, number, number];
    await t.request("/api/v1/notification-preference", {
      method: "POST",
      token: await t.token(quiet, { [NORTH]: [] }),
      school: NORTH,
      body: { quietHours: { start: "09:00", end: "11:30" } },
    });
    const admin = await t.token(2, { [NORTH]: "all" });
    const send = async (urgent: boolean) => {
      const res = await t.request(`/api/v1/notification`, {
        method: "POST",
        token: admin,
        school: NORTH,
        body: { urgent, title: "Quiet?", body: "x", groups: [klass.groupId] },
      });
      await push.drain(t.deps);
      return ((await res.json()) as { id: number }).id;
    };
    const later = await send(false);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toHaveLength(0);
    expect(await pushesTo(t, klass.tokens.get(loud) ?? "")).toHaveLength(1);
    // In the inbox at once: only the push waits.
    expect(await inboxIds(t, quiet)).toContain(later);
    const held = await t.db
      .select({ dueAt: notificationPushes.dueAt, status: notificationPushes.status })
      .from(notificationPushes)
      .innerJoin(notificationRecipients, eq(notificationRecipients.id, notificationPushes.recipientId))
      .where(and(eq(notificationPushes.notificationId, later), eq(notificationRecipients.userId, quiet)));
    expect(held).toEqual([{ dueAt: "2026-11-23T16:30:00.000Z", status: "pending" }]);
    await send(true);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toHaveLength(1);
    // Before the end: the sweep sends nothing; after it, the waiting push.
    t.clock.advance(60 * 60);
    await sweepNotifications(t.deps);
    await push.drain(t.deps);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toHaveLength(1);
    t.clock.advance(31 * 60);
    await sweepNotifications(t.deps);
    await push.drain(t.deps);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toHaveLength(2);
    // Run again: nothing more.
    t.clock.advance(10 * 60);
    await sweepNotifications(t.deps);
    await push.drain(t.deps);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toHaveLength(2);
  });
});

describe("a copy deleted while its push waits", () => {
  it("is not pushed when the quiet hours end", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    await t.db.update(schools).set({ timeZone: "America/New_York" }).where(eq(schools.id, NORTH));
    const klass = await classWithFamilies(t, NORTH);
    const [quiet] = klass.guardians as [number];
    const asQuiet = { token: await t.token(quiet, { [NORTH]: [] }), school: NORTH };
    await t.request("/api/v1/notification-preference", {
      method: "POST",
      ...asQuiet,
      body: { quietHours: { start: "09:00", end: "11:30" } },
    });
    const res = await t.request("/api/v1/notification", {
      method: "POST",
      token: await t.token(2, { [NORTH]: "all" }),
      school: NORTH,
      body: { title: "Later", body: "x", groups: [klass.groupId] },
    });
    const { id } = (await res.json()) as { id: number };
    await push.drain(t.deps);
    expect((await t.request(`/api/v1/notification/${id}`, { method: "DELETE", ...asQuiet })).status).toBe(204);
    t.clock.advance(2 * 3600);
    await sweepNotifications(t.deps);
    await push.drain(t.deps);
    expect(await pushesTo(t, klass.tokens.get(quiet) ?? "")).toEqual([]);
    const rows = await t.db
      .select({ status: notificationPushes.status })
      .from(notificationPushes)
      .innerJoin(notificationRecipients, eq(notificationRecipients.id, notificationPushes.recipientId))
      .where(and(eq(notificationPushes.notificationId, id), eq(notificationRecipients.userId, quiet)));
    expect(rows).toEqual([{ status: "dropped" }]);
  });
});

describe("a school with the notifications module off", () => {
  it("delivers nothing but emergencies", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const klass = await classWithFamilies(t, SOUTH);
    const { applicationModules, schoolModules } = await import("../src/db/schema/application-module");
    const [module] = await t.db
      .select({ id: applicationModules.id })
      .from(applicationModules)
      .where(eq(applicationModules.key, "notifications"));
    await (await t.schoolDb(SOUTH))
      .update(schoolModules)
      .set({ enabled: false })
      .where(and(eq(schoolModules.schoolId, SOUTH), eq(schoolModules.moduleId, module?.id ?? 0)));
    const ctx = jobCtx(t.deps, "test", SOUTH);
    const ids: Record<string, string> = {};
    for (const category of ["events", "emergency"] as const) {
      const sending = notify(ctx, { category, title: category, body: "x", audience: { groups: [klass.groupId] } });
      await new Batch(ctx).add(...sending.statements).commit();
      await sending.dispatch();
      ids[category] = sending.key;
    }
    await push.drain(t.deps);
    const copies = async (key: string) => {
      const [row] = await (await t.schoolDb(SOUTH)).select().from(notifications).where(eq(notifications.key, key));
      expect(row?.fannedOutAt).not.toBeNull();
      return recipientsOf(t, row?.id ?? 0, SOUTH);
    };
    expect(await copies(ids.events ?? "")).toEqual([]);
    expect(await copies(ids.emergency ?? "")).toEqual(klass.guardians);
  });
});
