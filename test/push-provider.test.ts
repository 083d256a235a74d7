/**
 * The push provider's users as topics (a school's, and each role's in it), against the FCM
 * stand-in's Instance ID API: sync a role, read a member's provider state, clean the topics of
 * the school and of schools that are gone. And the log provider's outbox in development.
 */
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers } from "../src/db/schema/core";
import { deviceTokens } from "../src/db/schema/device-token";
import { pushSubscriptions } from "../src/db/schema/notification";
import { fcmPush, forgetAccessTokens } from "../src/lib/push";
import { grantsOf } from "../src/modules";
import { makeTestApp, problem, type TestApp } from "./helpers";
import { device, member } from "./notification-kit";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const SOUTH = 2;
const endpoint = inject("fcmEndpoint");

function fcmApp() {
  const t = makeTestApp({ queues: { push: new PushQueue() } });
  const account = JSON.parse(inject("fcmServiceAccount"));
  Object.assign(t.deps, { push: fcmPush({ account, baseUrl: endpoint, iidBaseUrl: endpoint }, t.clock) });
  return t;
}

beforeEach(() => forgetAccessTokens());

type ProviderUser = {
  userId: number;
  provider: string;
  devices: { token: string; providerTopics: string[] | null; recordedTopics: string[] }[];
};

const admin = async (t: TestApp, school = NORTH) => ({
  token: await t.token(school === NORTH ? 2 : 5, { [school]: "all" }),
  school,
});

async function stateOf(t: TestApp, user: number, school = NORTH) {
  const res = await t.request(`/api/v1/user/${user}/push-provider`, await admin(t, school));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ProviderUser;
}

describe("a role's topic", () => {
  it("sync subscribes its members' devices (to the role's and the school's topics) and unsubscribes those who left", async () => {
    const t = fcmApp();
    const { roles } = await import("../src/db/schema/core");
    const { withSearch } = await import("../src/db/search");
    const at = t.clock.now().toISOString();
    const [role] = await t.db
      .insert(roles)
      .values(
        withSearch(roles, { schoolId: NORTH, name: `Drivers ${crypto.randomUUID()}`, createdAt: at, updatedAt: at }),
      )
      .returning({ id: roles.id });
    const roleId = role?.id ?? 0;
    const [stays, leaves] = [await member(t, NORTH), await member(t, NORTH)];
    for (const u of [stays, leaves])
      await t.db.insert(roleUsers).values({ schoolId: NORTH, userId: u, roleId, createdAt: at, updatedAt: at });
    const [a, b] = [await device(t, stays), await device(t, leaves)];
    const refused = await device(t, stays, `bad-${crypto.randomUUID()}`);
    const post = async () => {
      const res = await t.request("/api/v1/user/push-provider/sync-role", {
        method: "POST",
        ...(await admin(t)),
        body: { roleId },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return res.json();
    };
    const topic = `school-${NORTH}-role-${roleId}`;
    expect(await post()).toEqual({ roleId, topic, devices: 2, subscribed: 2, unsubscribed: 0 });
    const state = await stateOf(t, stays);
    const byToken = new Map(state.devices.map((d) => [d.token, d]));
    expect(byToken.get(`…${a.slice(-4)}`)).toMatchObject({
      providerTopics: [`school-${NORTH}`, topic].sort(),
      recordedTopics: [`school-${NORTH}`, topic].sort(),
    });
    // The token the provider refused is not recorded, and the provider does not know it.
    expect(byToken.get(`…${refused.slice(-4)}`)).toMatchObject({ providerTopics: null, recordedTopics: [] });
    expect(state.provider).toBe("fcm");
    // One left the role: the next sync unsubscribes their device from the role's topic.
    await t.db.delete(roleUsers).where(and(eq(roleUsers.userId, leaves), eq(roleUsers.roleId, roleId)));
    expect(await post()).toEqual({ roleId, topic, devices: 1, subscribed: 0, unsubscribed: 1 });
    const left = await stateOf(t, leaves);
    expect(left.devices[0]).toMatchObject({
      token: `…${b.slice(-4)}`,
      providerTopics: [`school-${NORTH}`],
      recordedTopics: [`school-${NORTH}`],
    });
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.recordId, NORTH), eq(auditLog.action, "sync-push-topic")));
    expect(audits.map((r) => JSON.parse(r.changes))).toEqual([
      { pushTopic: { old: topic, new: topic }, pushDevices: { old: 0, new: 2 } },
      { pushTopic: { old: topic, new: topic }, pushDevices: { old: 2, new: 1 } },
    ]);
  });

  it("another school's role or member is a 404", async () => {
    const t = fcmApp();
    const { roles } = await import("../src/db/schema/core");
    const { withSearch } = await import("../src/db/search");
    const at = t.clock.now().toISOString();
    const [theirs] = await t.db
      .insert(roles)
      .values(
        withSearch(roles, { schoolId: SOUTH, name: `South ${crypto.randomUUID()}`, createdAt: at, updatedAt: at }),
      )
      .returning({ id: roles.id });
    const res = await t.request("/api/v1/user/push-provider/sync-role", {
      method: "POST",
      ...(await admin(t)),
      body: { roleId: theirs?.id },
    });
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toBe(`Role ${theirs?.id} not found`);
    const southMember = await member(t, SOUTH);
    expect((await t.request(`/api/v1/user/${southMember}/push-provider`, await admin(t))).status).toBe(404);
  });
});

describe("clean tenants", () => {
  it("unsubscribes the school's topics and those of schools that are gone; other schools' stay", async () => {
    const t = fcmApp();
    const [north, south] = [await member(t, NORTH), await member(t, SOUTH)];
    const [nt, st] = [await device(t, north), await device(t, south)];
    for (const [school, token] of [
      [NORTH, admin(t, NORTH)],
      [SOUTH, admin(t, SOUTH)],
    ] as const) {
      const res = await t.request("/api/v1/user/push-provider/sync-role", {
        method: "POST",
        ...(await token),
        body: { roleId: 5 },
      });
      expect(res.status, `school ${school}`).toBe(200);
    }
    // A subscription to the topic of a school that no longer exists.
    const [orphan] = await t.db.select({ id: deviceTokens.id }).from(deviceTokens).where(eq(deviceTokens.token, nt));
    await t.db
      .insert(pushSubscriptions)
      .values({ deviceTokenId: orphan?.id ?? 0, topic: "school-999999", createdAt: t.clock.now().toISOString() });
    await t.deps.push.subscribe("school-999999", [nt]);
    const superAdmin = { token: await t.token(1, {}, true), school: NORTH };
    // A school admin's role does not grant it: the super-admin's alone.
    const schoolAdmin = await t.token(2, { [NORTH]: grantsOf("school-admin").map((p) => p.name) });
    const refused = await t.request("/api/v1/user/push-provider/tenants", {
      method: "DELETE",
      token: schoolAdmin,
      school: NORTH,
    });
    expect(refused.status).toBe(403);
    expect((await t.request("/api/v1/user/push-provider/tenants", { method: "DELETE", ...superAdmin })).status).toBe(
      204,
    );
    expect(await t.deps.push.topicsOf(nt)).toEqual([]);
    expect(await t.deps.push.topicsOf(st)).toEqual(["school-2", "school-2-role-5"]);
    const left = await t.db.select({ topic: pushSubscriptions.topic }).from(pushSubscriptions);
    expect(left.map((r) => r.topic).filter((x) => x.startsWith("school-1") || x === "school-999999")).toEqual([]);
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.action, "clean-push-topics")));
    // (An earlier test of this file synced a role of its own in the school: its topic goes too.)
    const changes = JSON.parse(audit?.changes ?? "{}") as { pushTopics: { old: string[]; new: string[] } };
    expect(changes.pushTopics.new).toEqual([]);
    expect(changes.pushTopics.old).toEqual(expect.arrayContaining(["school-1", "school-1-role-5", "school-999999"]));
    expect(
      changes.pushTopics.old.every((x) => x.startsWith("school-1-") || x === "school-1" || x === "school-999999"),
    ).toBe(true);
  });
});

describe("the log provider (development)", () => {
  it("keeps topic changes in the push outbox, readable by topic", async () => {
    const t = makeTestApp({ queues: { push: new PushQueue() } });
    const parent = await member(t, NORTH);
    const token = await device(t, parent);
    expect(
      (
        await t.request("/api/v1/user/push-provider/sync-role", {
          method: "POST",
          ...(await admin(t)),
          body: { roleId: 5 },
        })
      ).status,
    ).toBe(200);
    const res = await t.request(`/api/v1/dev/push-outbox?topic=school-${NORTH}-role-5`);
    const page = (await res.json()) as { data: { payload: { op: string; tokens: string[] } }[] };
    expect(page.data[0]?.payload).toMatchObject({ op: "subscribe" });
    expect(page.data.flatMap((m) => m.payload.tokens)).toContain(token);
    expect((await stateOf(t, parent)).devices[0]).toMatchObject({
      providerTopics: [`school-${NORTH}`, `school-${NORTH}-role-5`],
    });
  });
});
