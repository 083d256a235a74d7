/**
 * The data reset: refused unless the setting enables it (never in production: test/config.test.ts),
 * only for the super-admin, only with the confirmation phrase; then every school's data, every user
 * but the super-admins and the push provider's topics are gone, and the audit trail records it.
 */
import { count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { permissions, schools, users } from "../src/db/schema/core";
import { devPushOutbox } from "../src/db/schema/dev";
import { pushSubscriptions } from "../src/db/schema/notification";
import { configWith, makeTestApp, problem } from "./helpers";
import { device, member } from "./notification-kit";
import { PushQueue } from "./push-queue";

const path = "/api/v1/reset-data";
const confirm = { confirm: "DELETE ALL DATA" };

describe("DELETE /api/v1/reset-data", () => {
  it("is refused (403 naming the setting) unless RESET_DATA_ENABLED=true, and nothing is removed", async () => {
    const t = makeTestApp();
    const res = await t.request(path, { method: "DELETE", token: await t.token(1, {}, true), body: confirm });
    expect(res.status).toBe(403);
    expect((await problem(res)).detail).toMatch(/RESET_DATA_ENABLED=true/);
    const [n] = await t.db.select({ n: count() }).from(schools);
    expect(n?.n).toBeGreaterThanOrEqual(2);
  });

  it("only for the super-admin, only with the phrase", async () => {
    const t = makeTestApp({ config: configWith({ RESET_DATA_ENABLED: "true" }) });
    const admin = await t.token(2, { 1: ["school.read"] });
    expect((await t.request(path, { method: "DELETE", token: admin, school: 1, body: confirm })).status).toBe(403);
    const wrong = await t.request(path, {
      method: "DELETE",
      token: await t.token(1, {}, true),
      body: { confirm: "delete all data" },
    });
    expect(wrong.status).toBe(400);
    expect((await problem(wrong)).errors?.[0]?.message).toMatch(/DELETE ALL DATA/);
    const none = await t.request(path, { method: "DELETE", token: await t.token(1, {}, true) });
    expect(none.status).toBe(400);
  });

  it("removes every school, every user but the super-admins and the provider's topics; the trail records it", async () => {
    const push = new PushQueue();
    const t = makeTestApp({
      config: configWith({ RESET_DATA_ENABLED: "true" }),
      queues: { push },
    });
    // A member with a device subscribed to the school's parent topic.
    const parent = await member(t, 1);
    const token = await device(t, parent);
    const admin = await t.token(2, { 1: "all" });
    const synced = await t.request("/api/v1/user/push-provider/sync-role", {
      method: "POST",
      token: admin,
      school: 1,
      body: { roleId: 5 },
    });
    expect(synced.status).toBe(200);
    expect(await t.db.select().from(pushSubscriptions)).not.toEqual([]);
    // What the provider is told, as it is told it.
    const told: [string, readonly string[]][] = [];
    const provider = t.deps.push;
    Object.assign(t.deps, {
      push: {
        ...provider,
        unsubscribe: (topic: string, tokens: readonly string[]) => {
          told.push([topic, tokens]);
          return provider.unsubscribe(topic, tokens);
        },
      },
    });
    const before = await t.db.select({ n: count() }).from(schools);
    const res = await t.request(path, { method: "DELETE", token: await t.token(1, {}, true), body: confirm });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(await t.db.select().from(schools)).toEqual([]);
    const left = await t.db.select({ id: users.id, isSuperAdmin: users.isSuperAdmin }).from(users);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((u) => u.isSuperAdmin)).toBe(true);
    expect(await t.db.select().from(pushSubscriptions)).toEqual([]);
    // The built-in catalogue stays.
    const [builtins] = await t.db.select({ n: count() }).from(permissions);
    expect(builtins?.n).toBeGreaterThan(50);
    // The provider was told: the device left both topics.
    expect(told.sort()).toEqual([
      ["school-1", [token]],
      ["school-1-role-5", [token]],
    ]);
    const [row] = await t.db.select().from(auditLog).where(eq(auditLog.entity, "reset-data"));
    expect(row).toMatchObject({ actorType: "user", actorId: 1, action: "delete", schoolId: null });
    expect(JSON.parse(row?.changes ?? "{}")).toMatchObject({
      schools: { old: before[0]?.n, new: 0 },
      pushTopics: { old: 2, new: 0 },
    });
    expect(await t.db.select().from(devPushOutbox)).toEqual([]);
    // Signing in still works for the super-admin; the school admin is gone.
    const again = await t.request("/api/v1/user/me", { token: await t.token(1, {}, true) });
    expect(again.status).toBe(200);
  });
});
