/**
 * The inbox: each user's own notifications, newest first, in their language; read and unread,
 * delete one and all; nobody reads or changes another's. Preferences: the caller's own.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { notificationPreferences, notifications } from "../src/db/schema/notification";
import { makeTestApp, problem, type TestApp } from "./helpers";
import { member } from "./notification-kit";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const SOUTH = 2;

type Inbox = {
  data: {
    id: number;
    title: string;
    body: string;
    read: boolean;
    readAt: string | null;
    category: string;
    about: unknown;
  }[];
  total: number;
  next: string | null;
};

function app() {
  const push = new PushQueue();
  const t = makeTestApp({ queues: { push } });
  return { t, push };
}

/** Sends to `users` in `school` as the super-admin, fanned out: the notification's id. */
async function sendTo(t: TestApp, push: PushQueue, users: number[], body: object = {}, school = NORTH) {
  const res = await t.request("/api/v1/notification", {
    method: "POST",
    token: await t.token(1, {}, true),
    school,
    body: { title: "Hello", body: "World", users, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  await push.drain(t.deps);
  return ((await res.json()) as { id: number }).id;
}

/** The member's token; `language` is theirs, as a token from sign-in carries it (the `lng` claim). */
const as = async (t: TestApp, user: number, school = NORTH, language: "es" | "en" = "en") => ({
  token: await t.token(user, { [school]: [] }, false, language),
  school,
});

describe("the inbox", () => {
  it("lists the caller's notifications newest first, with the filters and the envelope", async () => {
    const { t, push } = app();
    const me = await member(t, NORTH);
    const other = await member(t, NORTH);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await sendTo(t, push, [me], { title: `n${i}`, category: i === 1 ? "events" : "general" }));
      t.clock.advance(60);
    }
    await sendTo(t, push, [other], { title: "not mine" });
    const page = (await (await t.request("/api/v1/notification?pageSize=2", await as(t, me))).json()) as Inbox;
    expect(page.data.map((n) => n.id)).toEqual([ids[2], ids[1]]);
    expect(page.total).toBe(3);
    expect(page.next).toBe("/api/v1/notification?pageSize=2&page=2");
    const events = (await (await t.request("/api/v1/notification?category=events", await as(t, me))).json()) as Inbox;
    expect(events.data.map((n) => n.id)).toEqual([ids[1]]);
    await t.request(`/api/v1/notification/${ids[0]}/read`, { method: "PATCH", ...(await as(t, me)) });
    const unread = (await (await t.request("/api/v1/notification?unread=true", await as(t, me))).json()) as Inbox;
    expect(unread.data.map((n) => n.id)).toEqual([ids[2], ids[1]]);
    const read = (await (await t.request("/api/v1/notification?unread=false", await as(t, me))).json()) as Inbox;
    expect(read.data.map((n) => n.id)).toEqual([ids[0]]);
  });

  it("texts the service writes are in the recipient's language (Accept-Language first); staff texts as sent", async () => {
    const { t, push } = app();
    const es = await member(t, NORTH, { language: "es" });
    const { notify } = await import("../src/modules/notification/api");
    const { jobCtx } = await import("../src/lib/context");
    const { Batch } = await import("../src/db/batch");
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, {
      category: "tasks",
      title: { en: "A new task", es: "Una nueva tarea" },
      body: { en: "Sign the form", es: "Firme el formulario" },
      about: { entity: "task", id: 7 },
      audience: { users: [es] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await sending.dispatch();
    await push.drain(t.deps);
    const [row] = await t.db
      .select({ id: notifications.id })
      .from(notifications)
      .where(eq(notifications.key, sending.key));
    const id = row?.id ?? 0;
    const get = async (headers: Record<string, string> = {}) =>
      (await (
        await t.request(`/api/v1/notification/${id}`, { ...(await as(t, es, NORTH, "es")), headers })
      ).json()) as Inbox["data"][number];
    expect(await get()).toMatchObject({
      title: "Una nueva tarea",
      body: "Firme el formulario",
      about: { entity: "task", id: 7 },
    });
    expect(await get({ "accept-language": "en-US" })).toMatchObject({ title: "A new task" });
    const staff = await sendTo(t, push, [es], { title: "Reunión", body: "Hoy" });
    expect(
      (await (await t.request(`/api/v1/notification/${staff}`, await as(t, es, NORTH, "es"))).json()) as object,
    ).toMatchObject({
      title: "Reunión",
      body: "Hoy",
    });
  });

  it("read, unread, delete: the caller's own copy only; another's is a 404 and stays as it was", async () => {
    const { t, push } = app();
    const [me, other] = [await member(t, NORTH), await member(t, NORTH)];
    const shared = await sendTo(t, push, [me, other]);
    const theirs = await sendTo(t, push, [other]);
    const mine = await as(t, me);
    for (const [method, path, body] of [
      ["GET", `/api/v1/notification/${theirs}`, undefined],
      ["PUT", `/api/v1/notification/${theirs}`, { read: true }],
      ["PATCH", `/api/v1/notification/${theirs}/read`, undefined],
      ["DELETE", `/api/v1/notification/${theirs}`, undefined],
    ] as const) {
      const res = await t.request(path, { method, ...mine, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await problem(res)).detail).toBe(`Notification ${theirs} not found`);
    }
    const marked = await t.request(`/api/v1/notification/${shared}/read`, { method: "PATCH", ...mine });
    expect(marked.status).toBe(200);
    expect(await marked.json()).toMatchObject({ id: shared, read: true, readAt: t.clock.now().toISOString() });
    // Only the caller's copy is read: the other recipient's is not.
    const theirsShared = (await (await t.request(`/api/v1/notification/${shared}`, await as(t, other))).json()) as {
      read: boolean;
    };
    expect(theirsShared.read).toBe(false);
    expect(
      (await t.request(`/api/v1/notification/${shared}`, { method: "PUT", ...mine, body: { read: false } })).status,
    ).toBe(204);
    expect(((await (await t.request(`/api/v1/notification/${shared}`, mine)).json()) as { read: boolean }).read).toBe(
      false,
    );
    const audits = await t.db
      .select({ action: auditLog.action, actorId: auditLog.actorId, changes: auditLog.changes })
      .from(auditLog)
      .where(and(eq(auditLog.entity, "notification"), eq(auditLog.recordId, shared), eq(auditLog.actorId, me)));
    expect(audits.map((a) => a.action)).toEqual(["read", "update"]);
    expect(JSON.parse(audits[1]?.changes ?? "{}")).toEqual({ readAt: { old: t.clock.now().toISOString(), new: null } });
    expect((await t.request(`/api/v1/notification/${shared}`, { method: "DELETE", ...mine })).status).toBe(204);
    expect((await t.request(`/api/v1/notification/${shared}`, mine)).status).toBe(404);
    expect((await t.request(`/api/v1/notification/${shared}`, await as(t, other))).status).toBe(200);
  });

  it("a deleted copy never comes back, even when its fan-out is delivered again", async () => {
    const { t, push } = app();
    const me = await member(t, NORTH);
    const id = await sendTo(t, push, [me]);
    await t.request(`/api/v1/notification/${id}`, { method: "DELETE", ...(await as(t, me)) });
    const [row] = await t.db.select({ key: notifications.key }).from(notifications).where(eq(notifications.id, id));
    await push.deliverOne(t.deps, {
      id: "again",
      body: { kind: "fan-out", key: row?.key, schoolId: NORTH, after: 0 },
      attempts: 1,
      queue: "school-push",
    });
    expect((await t.request(`/api/v1/notification/${id}`, await as(t, me))).status).toBe(404);
  });

  it("delete all: every copy of the caller's in this school, each audited; others' and other schools' stay", async () => {
    const { t, push } = app();
    const me = await member(t, NORTH);
    const other = await member(t, NORTH);
    const { roleUsers } = await import("../src/db/schema/core");
    await t.anchorUsers(SOUTH, me);
    await (await t.schoolDb(SOUTH)).insert(roleUsers).values({
      schoolId: SOUTH,
      userId: me,
      roleId: 5,
      createdAt: "2026-11-01T00:00:00.000Z",
      updatedAt: "2026-11-01T00:00:00.000Z",
    });
    const ids = [await sendTo(t, push, [me, other]), await sendTo(t, push, [me])];
    const south = await sendTo(t, push, [me], {}, SOUTH);
    expect((await t.request("/api/v1/notification", { method: "DELETE", ...(await as(t, me)) })).status).toBe(204);
    expect(((await (await t.request("/api/v1/notification", await as(t, me))).json()) as Inbox).total).toBe(0);
    expect((await t.request(`/api/v1/notification/${ids[0]}`, await as(t, other))).status).toBe(200);
    expect((await t.request(`/api/v1/notification/${south}`, await as(t, me, SOUTH))).status).toBe(200);
    const audits = await t.db
      .select({ recordId: auditLog.recordId })
      .from(auditLog)
      .where(and(eq(auditLog.entity, "notification"), eq(auditLog.action, "delete"), eq(auditLog.actorId, me)));
    expect(audits.map((a) => a.recordId).sort()).toEqual([...ids].sort());
    // Nothing left: a second call changes nothing and writes no audit row.
    expect((await t.request("/api/v1/notification", { method: "DELETE", ...(await as(t, me)) })).status).toBe(204);
  });

  it("a school with the notifications module off: 403 naming it", async () => {
    const { t } = app();
    const { applicationModules, schoolModules } = await import("../src/db/schema/application-module");
    const [module] = await t.db
      .select({ id: applicationModules.id })
      .from(applicationModules)
      .where(eq(applicationModules.key, "notifications"));
    await (await t.schoolDb(SOUTH))
      .update(schoolModules)
      .set({ enabled: false })
      .where(and(eq(schoolModules.schoolId, SOUTH), eq(schoolModules.moduleId, module?.id ?? 0)));
    const res = await t.request("/api/v1/notification", { token: await t.token(1, {}, true), school: SOUTH });
    expect(res.status).toBe(403);
    expect((await problem(res)).detail).toMatch(/notifications/i);
  });
});

describe("preferences: the caller's own", () => {
  it("the defaults until saved; save creates (201) then changes the fields sent (200); PUT, DELETE", async () => {
    const { t } = app();
    const me = await member(t, NORTH);
    const mine = await as(t, me);
    const defaults = await (await t.request("/api/v1/notification-preference/mine", mine)).json();
    expect(defaults).toMatchObject({ id: null, quietHours: null, categories: { events: { push: true, inbox: true } } });
    const created = await t.request("/api/v1/notification-preference", {
      method: "POST",
      ...mine,
      body: { categories: { events: { push: false } } },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const changed = await t.request("/api/v1/notification-preference", {
      method: "POST",
      ...mine,
      body: { quietHours: { start: "22:00", end: "06:30" } },
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      id,
      categories: { events: { push: false, inbox: true }, general: { push: true, inbox: true } },
      quietHours: { start: "22:00", end: "06:30" },
    });
    expect(
      (await t.request(`/api/v1/notification-preference/${id}`, { method: "PUT", ...mine, body: { quietHours: null } }))
        .status,
    ).toBe(204);
    expect(await (await t.request("/api/v1/notification-preference/mine", mine)).json()).toMatchObject({
      id,
      quietHours: null,
    });
    const same = await t.request("/api/v1/notification-preference", {
      method: "POST",
      ...mine,
      body: { quietHours: { start: "07:00", end: "07:00" } },
    });
    expect(same.status).toBe(400);
    expect((await t.request(`/api/v1/notification-preference/${id}`, { method: "DELETE", ...mine })).status).toBe(204);
    expect(await (await t.request("/api/v1/notification-preference/mine", mine)).json()).toMatchObject({ id: null });
  });

  it("another user's preference is a 404, even for the school's admin", async () => {
    const { t } = app();
    const me = await member(t, NORTH);
    const res = await t.request("/api/v1/notification-preference", {
      method: "POST",
      ...(await as(t, me)),
      body: { categories: { tasks: { inbox: false } } },
    });
    const { id } = (await res.json()) as { id: number };
    const admin = { token: await t.token(2, { [NORTH]: "all" }), school: NORTH };
    expect((await t.request(`/api/v1/notification-preference/${id}`, admin)).status).toBe(404);
    expect(
      (
        await t.request(`/api/v1/notification-preference/${id}`, {
          method: "PUT",
          ...admin,
          body: { quietHours: null },
        })
      ).status,
    ).toBe(404);
    expect((await t.request(`/api/v1/notification-preference/${id}`, { method: "DELETE", ...admin })).status).toBe(404);
  });

  it("two saves at once: one row, both answered", async () => {
    const { t } = app();
    const me = await member(t, NORTH);
    const mine = await as(t, me);
    const answers = await Promise.all(
      [true, false].map((push) =>
        t.request("/api/v1/notification-preference", {
          method: "POST",
          ...mine,
          body: { categories: { general: { push } } },
        }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 201]);
    const rows = await t.db.select().from(notificationPreferences).where(eq(notificationPreferences.userId, me));
    expect(rows).toHaveLength(1);
  });
});
