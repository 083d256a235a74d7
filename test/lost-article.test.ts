/**
 * Lost and found: recording an article (school-local dates: found after today or a donation date
 * before the found day is a 400), browsing it (who claimed it hidden from other members), claiming
 * (a delivered or claimed article is a 409; ten parents at once: exactly one wins, nine 409s),
 * cancelling a claim (the claimant or staff), delivering with who received it (in the audit trail),
 * donating only from the donation date, reminding the claimant, the categories and statuses in the
 * caller's language, "claimed by me", the photo, and reminders before the donation date sent once by
 * the sweep, to the claimant or, unclaimed, to the school's parents.
 */
import { and, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { lostArticleReminders } from "../src/db/schema/lost-article";
import { notifications } from "../src/db/schema/notification";
import { BUILTIN_ROLES } from "../src/lib/access";
import { grantsOf } from "../src/modules";
import { sendDueLostArticleReminders } from "../src/modules/lost-article/reminders";
import { createVia, uniq } from "./fixture-kit";
import { makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
import { countingTestApp, DEMO, makeTestApp, problem, setModule, type TestApp } from "./helpers";

const NORTH = 1;
const LA = "/api/v1/lost-article";

type Article = {
  id: number;
  name: string;
  status: string;
  foundOn: string;
  donateAfter: string;
  mine: boolean;
  claimedBy: number | null;
  claimedForStudentId: number | null;
  receivedBy: string | null;
  deliveredBy: number | null;
  reminders: { id: number; status: string }[];
};

const as = (t: TestApp, userId: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [NORTH]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp) => as(t, DEMO.northAdmin.id, "school-admin");
const parent = (t: TestApp) => as(t, DEMO.northParent.id, "parent");

async function article(t: TestApp, body: Record<string, unknown> = {}): Promise<Article> {
  const res = await t.request(LA, {
    method: "POST",
    token: await admin(t),
    body: { name: uniq("Chamarra azul"), category: "clothing", ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Article;
}

const act = async (t: TestApp, id: number, action: string, token: string, body?: unknown) =>
  t.request(`${LA}/${id}/${action}`, { method: "PATCH", token, body: body ?? (action === "claim" ? {} : undefined) });

describe("recording and browsing", () => {
  it("dates found today at the school and donates 30 days later by default; refuses dates out of order (400)", async () => {
    const t = makeTestApp();
    // 2026-11-23T15:00Z is 09:00 in Mexico City.
    const a = await article(t);
    expect(a).toMatchObject({ status: "found", foundOn: "2026-11-23", donateAfter: "2026-12-23" });
    for (const [body, field] of [
      [{ foundOn: "2026-11-24" }, "foundOn"],
      [{ foundOn: "2026-11-20", donateAfter: "2026-11-19" }, "donateAfter"],
    ] as const) {
      const res = await t.request(LA, {
        method: "POST",
        token: await admin(t),
        body: { name: "x", category: "toys", ...body },
      });
      expect(res.status).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toEqual([field]);
    }
    const bad = await t.request(`${LA}/${a.id}`, {
      method: "PUT",
      token: await admin(t),
      body: { donateAfter: "2026-11-01" },
    });
    expect(bad.status).toBe(400);
  });

  it("every member browses; who claimed is shown to staff and the claimant only", async () => {
    const t = makeTestApp();
    const a = await article(t);
    expect((await act(t, a.id, "claim", await parent(t), { studentId: 1 })).status).toBe(200);
    const seenBy = async (token: string) => (await (await t.request(`${LA}/${a.id}`, { token })).json()) as Article;
    expect(await seenBy(await parent(t))).toMatchObject({ mine: true, claimedBy: 4, claimedForStudentId: 1 });
    expect(await seenBy(await admin(t))).toMatchObject({ mine: false, claimedBy: 4, claimedForStudentId: 1 });
    expect(await seenBy(await as(t, DEMO.northTeacher.id, "teacher"))).toMatchObject({
      status: "claimed",
      mine: false,
      claimedBy: null,
      claimedForStudentId: null,
    });
    // The found list of another member leaves the claimed article out.
    const list = await t.request(`${LA}?status=found&pageSize=100`, { token: await as(t, 1016, "parent") });
    expect(((await list.json()) as { data: Article[] }).data.map((x) => x.id)).not.toContain(a.id);
  });

  it("a claim for another family's child is a 404", async () => {
    const t = makeTestApp();
    const a = await article(t);
    const res = await act(t, a.id, "claim", await parent(t), { studentId: 2002 });
    expect(res.status).toBe(404);
  });

  it("a delegate of the child's parent today claims for the child, as they act for the parent elsewhere", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const a = await article(t);
    const other = await as(t, 1016, "parent");
    expect((await act(t, a.id, "claim", other, { studentId: family.studentId })).status).toBe(404);
    await makeDelegate(t, NORTH, family.parentId, 1016);
    const res = await act(t, a.id, "claim", other, { studentId: family.studentId });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ mine: true, claimedBy: 1016, claimedForStudentId: family.studentId });
  });

  it("the list of lost articles is one D1 round trip", async () => {
    const { t, measure } = countingTestApp();
    await article(t);
    const token = await parent(t);
    const { res, calls } = await measure(() => t.request(`${LA}?status=found`, { token }));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
  });
});

describe("claims", () => {
  it("a claim on a claimed, delivered or donated article is a 409", async () => {
    const t = makeTestApp();
    const a = await article(t);
    expect((await act(t, a.id, "claim", await parent(t))).status).toBe(200);
    const second = await act(t, a.id, "claim", await as(t, 1016, "parent"));
    expect(second.status).toBe(409);
    expect((await problem(second)).detail).toContain("is claimed");
    expect((await act(t, a.id, "deliver", await admin(t), { receivedBy: "Ana (mamá)" })).status).toBe(200);
    const delivered = await act(t, a.id, "claim", await as(t, 1016, "parent"));
    expect(delivered.status).toBe(409);
    expect((await problem(delivered)).detail).toContain("is delivered");
  });

  it("ten parents claiming one article at once: exactly one wins, nine get a 409", async () => {
    const t = makeTestApp();
    const a = await article(t);
    const parents = Array.from({ length: 10 }, (_, i) => 1005 + i);
    const answers = await Promise.all(
      parents.map(async (user) => (await act(t, a.id, "claim", await as(t, user, "parent"))).status),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(1);
    expect(answers.filter((s) => s === 409)).toHaveLength(9);
    const winner = parents[answers.indexOf(200)];
    const row = (await (await t.request(`${LA}/${a.id}`, { token: await admin(t) })).json()) as Article;
    expect(row.claimedBy).toBe(winner);
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "lost-article"), eq(auditLog.recordId, a.id), eq(auditLog.action, "claim")));
    expect(audits).toHaveLength(1);
  });

  it("the claimant or staff cancel a claim (another member: 422); not claimed: 409", async () => {
    const t = makeTestApp();
    const a = await article(t);
    expect((await act(t, a.id, "claim", await parent(t))).status).toBe(200);
    expect((await act(t, a.id, "cancel-claim", await as(t, 1016, "parent"))).status).toBe(422);
    const cancelled = await act(t, a.id, "cancel-claim", await parent(t));
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ status: "found", claimedBy: null, mine: false });
    expect((await act(t, a.id, "cancel-claim", await parent(t))).status).toBe(409);
    expect((await act(t, a.id, "claim", await as(t, 1016, "parent"))).status).toBe(200);
    expect((await act(t, a.id, "cancel-claim", await admin(t))).status).toBe(200);
  });
});

describe("delivering, donating, reminding", () => {
  it("records who received it, on the article and in the audit trail", async () => {
    const t = makeTestApp();
    const a = await article(t);
    await act(t, a.id, "claim", await parent(t));
    const res = await act(t, a.id, "deliver", await admin(t), { receivedBy: "Ana García (mamá)" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "delivered", receivedBy: "Ana García (mamá)", deliveredBy: 2 });
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "lost-article"), eq(auditLog.recordId, a.id), eq(auditLog.action, "deliver")));
    expect(audit).toMatchObject({ actorId: 2 });
    const changes: unknown = typeof audit?.changes === "string" ? JSON.parse(audit.changes) : audit?.changes;
    expect(changes).toMatchObject({
      receivedBy: { old: null, new: "Ana García (mamá)" },
      status: { old: "claimed", new: "delivered" },
    });
    const missing = await act(t, (await article(t)).id, "deliver", await admin(t), {});
    expect(missing.status).toBe(400);
    expect((await act(t, a.id, "claim", await parent(t))).status).toBe(409);
  });

  it("donates a found article only from its donation date (422 before), never a claimed one (409)", async () => {
    const t = makeTestApp();
    const a = await article(t, { foundOn: "2026-11-01", donateAfter: "2026-11-24" });
    const early = await act(t, a.id, "donate", await admin(t));
    expect(early.status).toBe(422);
    expect((await problem(early)).detail).toContain("today is 2026-11-23");
    t.clock.current = new Date("2026-11-24T07:00:00.000Z"); // 01:00 on the 24th in Mexico City
    const token = await admin(t);
    expect((await act(t, a.id, "donate", token)).status).toBe(200);
    expect((await act(t, a.id, "claim", await parent(t))).status).toBe(409);
    const b = await article(t, { foundOn: "2026-11-01", donateAfter: "2026-11-02" });
    await act(t, b.id, "claim", await parent(t));
    expect((await act(t, b.id, "donate", token)).status).toBe(409);
  });

  it("reminds the claimant, and only the claimant, in their language", async () => {
    const t = makeTestApp();
    const a = await article(t);
    expect((await act(t, a.id, "remind", await admin(t))).status).toBe(409);
    await act(t, a.id, "claim", await parent(t));
    const res = await act(t, a.id, "remind", await admin(t));
    expect(res.status).toBe(200);
    const [notice] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.aboutEntity, "lost-article"), eq(notifications.aboutId, a.id)));
    expect(notice).toMatchObject({
      category: "lost-and-found",
      audience: { users: [4] },
      recipientCount: 1,
      title: { en: `Lost and found: ${a.name}`, es: `Objetos perdidos: ${a.name}` },
    });
  });
});

describe("lists", () => {
  it("categories and statuses, named in the request's language", async () => {
    const t = makeTestApp();
    const token = await parent(t);
    const cats = await t.request(`${LA}/categories`, { token, headers: { "accept-language": "es-MX,en;q=0.5" } });
    const { data } = (await cats.json()) as { data: { key: string; name: string }[] };
    expect(data.find((c) => c.key === "water-bottle")?.name).toBe("Botella de agua");
    const sts = await t.request(`${LA}/statuses`, { token });
    expect(((await sts.json()) as { data: unknown[] }).data).toContainEqual({
      key: "claimed",
      name: "Claimed",
      names: { en: "Claimed", es: "Reclamado" },
      next: ["found", "delivered"],
    });
  });

  it("claimed by me: the caller's claims, the latest first", async () => {
    const t = makeTestApp();
    const [a, b, c] = [await article(t), await article(t), await article(t)];
    const token = await as(t, 1020, "parent");
    await act(t, a.id, "claim", token);
    t.clock.advance(60);
    await act(t, b.id, "claim", await as(t, 1020, "parent"));
    await act(t, c.id, "claim", await parent(t));
    const res = await t.request(`${LA}/mine`, { token: await as(t, 1020, "parent") });
    expect(((await res.json()) as { data: Article[] }).data.map((x) => x.id)).toEqual([b.id, a.id]);
  });
});

describe("the photo", () => {
  it("uploads through a presigned PUT (staff) and downloads for any member", async () => {
    const t = makeTestApp();
    const a = await article(t);
    const put = await t.request(`${LA}/${a.id}/signed-url`, {
      method: "PUT",
      token: await admin(t),
      body: { contentType: "image/webp" },
    });
    expect(put.status).toBe(200);
    const { photo } = (await put.json()) as { photo: string };
    expect(photo).toMatch(new RegExp(`^1/lost-articles/${a.id}/photo-[0-9a-f-]+\\.webp$`));
    const get = await t.request(`${LA}/${a.id}/signed-url`, {
      method: "PUT",
      token: await parent(t),
      body: { method: "GET" },
    });
    expect(get.status).toBe(200);
    expect(await get.json()).toMatchObject({ photo, method: "GET" });
  });
});

describe("reminders before the donation date", () => {
  const REM = "/api/v1/lost-article-reminder";

  it("tell the claimant, or the school's parents when no one claimed it, once; skip a delivered article", async () => {
    const t = makeTestApp();
    const claimed = await article(t, { donateAfter: "2026-12-01" });
    const unclaimed = await article(t, { donateAfter: "2026-12-01" });
    const delivered = await article(t, { donateAfter: "2026-12-01" });
    await act(t, claimed.id, "claim", await parent(t));
    const ids: number[] = [];
    for (const a of [claimed, unclaimed, delivered]) {
      ids.push(await createVia(t, REM, NORTH, { lostArticleId: a.id, daysBefore: 2, time: "09:30" }));
    }
    await act(t, delivered.id, "deliver", await admin(t), { receivedBy: "Paco" });
    const [row] = await t.db
      .select()
      .from(lostArticleReminders)
      .where(eq(lostArticleReminders.id, ids[0] ?? 0));
    // 2026-11-29 09:30 in Mexico City.
    expect(row?.sendAt).toBe("2026-11-29T15:30:00.000Z");
    expect(row?.status).toBe("scheduled");
    const dup = await t.request(REM, {
      method: "POST",
      token: await admin(t),
      body: { lostArticleId: claimed.id, daysBefore: 2 },
    });
    expect(dup.status).toBe(409);
    t.clock.current = new Date("2026-11-29T15:31:00.000Z");
    await Promise.all([sendDueLostArticleReminders(t.deps), sendDueLostArticleReminders(t.deps)]);
    await sendDueLostArticleReminders(t.deps);
    const about = (id: number) =>
      t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.aboutEntity, "lost-article"), eq(notifications.aboutId, id)))
        .orderBy(desc(notifications.id));
    expect((await about(claimed.id)).map((n) => n.audience)).toEqual([{ users: [4] }]);
    expect((await about(unclaimed.id)).map((n) => n.audience)).toEqual([{ roles: [BUILTIN_ROLES.parent.id] }]);
    expect(await about(delivered.id)).toEqual([]);
    const states = await t.db
      .select()
      .from(lostArticleReminders)
      .where(eq(lostArticleReminders.lostArticleId, delivered.id));
    expect(states.map((s) => s.status)).toEqual(["skipped"]);
  });

  it("wait while the school has lost articles switched off, then go out once it is on again", async () => {
    const t = makeTestApp();
    const a = await article(t, { donateAfter: "2026-12-01" });
    const id = await createVia(t, REM, NORTH, { lostArticleId: a.id, daysBefore: 2, time: "09:30" });
    await setModule(t, NORTH, "lost-articles", false);
    t.clock.current = new Date("2026-11-29T15:31:00.000Z");
    await sendDueLostArticleReminders(t.deps);
    const about = () =>
      t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.aboutEntity, "lost-article"), eq(notifications.aboutId, a.id)));
    expect(await about()).toEqual([]);
    const [row] = await t.db.select().from(lostArticleReminders).where(eq(lostArticleReminders.id, id));
    expect(row?.status).toBe("scheduled");
    await setModule(t, NORTH, "lost-articles", true);
    await sendDueLostArticleReminders(t.deps);
    expect(await about()).toHaveLength(1);
  });

  it("move with the donation date, and refuse a time already past (422) or a closed article (409)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const a = await article(t, { donateAfter: "2026-12-10" });
    const id = await createVia(t, REM, NORTH, { lostArticleId: a.id, daysBefore: 1 });
    const moved = await t.request(`${LA}/${a.id}`, { method: "PUT", token, body: { donateAfter: "2026-12-20" } });
    expect(moved.status).toBe(204);
    const [row] = await t.db.select().from(lostArticleReminders).where(eq(lostArticleReminders.id, id));
    expect(row?.sendAt).toBe("2026-12-19T14:00:00.000Z");
    const past = await t.request(REM, { method: "POST", token, body: { lostArticleId: a.id, daysBefore: 30 } });
    expect(past.status).toBe(422);
    await act(t, a.id, "deliver", token, { receivedBy: "Luis" });
    const closed = await t.request(REM, { method: "POST", token, body: { lostArticleId: a.id, daysBefore: 2 } });
    expect(closed.status).toBe(409);
  });
});
