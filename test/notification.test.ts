/**
 * Notifications: the service verb every feature sends through (`notify`), the inbox, sending,
 * the fan-out through the push queue, push delivery and preferences.
 */
import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { Batch } from "../src/db/batch";
import { auditLog } from "../src/db/schema/audit-log";
import { notifications } from "../src/db/schema/notification";
import { parents } from "../src/db/schema/parent";
import { guardians } from "../src/db/schema/student";
import type { QueueProducer } from "../src/deps";
import { jobCtx } from "../src/lib/context";
import { notify } from "../src/modules/notification/api";
import { makeTestApp } from "./helpers";

const NORTH = 1;
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
    const t = makeTestApp({ queues: { push, bulk: env.BULK_QUEUE } });
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
    const t = makeTestApp({ queues: { push, bulk: env.BULK_QUEUE } });
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
    const t = makeTestApp({ queues: { push: down, bulk: env.BULK_QUEUE } });
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, { category: "general", title: "Hi", body: "There", audience: { users: [2] } });
    await new Batch(ctx).add(...sending.statements).commit();
    await expect(sending.dispatch()).resolves.toBeUndefined();
  });
});

describe("the fan-out: copies and pushes", () => {
  it("a notification to guardians reaches each once, in their inbox and on their devices", async () => {
    const { PushQueue } = await import("./push-queue");
    const { notificationRecipients } = await import("../src/db/schema/notification");
    const { devPushOutbox } = await import("../src/db/schema/dev");
    const { deviceTokens } = await import("../src/db/schema/device-token");
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push, bulk: env.BULK_QUEUE } });
    const token = `fcm-${crypto.randomUUID()}`;
    await t.db.insert(deviceTokens).values({ userId: 4, token, platform: "ios" });
    const ctx = jobCtx(t.deps, "test", NORTH);
    const sending = notify(ctx, {
      category: "afternoon",
      title: { en: "Pickup changed", es: "Cambio de salida" },
      body: "Bus",
      audience: { guardiansOf: [PABLO, PALOMA] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await sending.dispatch();
    await push.drain(t.deps);
    const [row] = await t.db.select().from(notifications).where(eq(notifications.key, sending.key));
    const copies = await t.db
      .select()
      .from(notificationRecipients)
      .where(eq(notificationRecipients.notificationId, row?.id ?? 0));
    expect(copies).toHaveLength(row?.recipientCount ?? -1);
    expect(copies.filter((c) => c.userId === 4)).toHaveLength(1);
    const outbox = await t.db.select().from(devPushOutbox).where(eq(devPushOutbox.token, token));
    expect(outbox).toHaveLength(1);
    expect(row?.fannedOutAt).not.toBeNull();
  });
});
