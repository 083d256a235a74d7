/**
 * Tasks through the API: sending to an audience (one recipient per student, per named user), each
 * person's copies and what they do with them (a delegate's completion counts for the parent and says
 * who did it; two guardians completing at once: one wins; the archive is each person's own), who
 * sees what, the detail, reminders now and scheduled (the sweep runs twice and sends once), deletion
 * with a reason, the held task of an appointment, the public page, and the notices people get.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { schoolModules } from "../src/db/schema/application-module";
import { roles } from "../src/db/schema/core";
import { cronHistory } from "../src/db/schema/jobs";
import { notificationRecipients, notifications } from "../src/db/schema/notification";
import { taskInbox, taskRecipients, taskReminders } from "../src/db/schema/task";
import { withSearch } from "../src/db/search";
import { runScheduled } from "../src/jobs/scheduled";
import { sendDueReminders } from "../src/modules/task/reminders";
import { readJson } from "./fixture-kit";
import { type Family, makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
import { countingTestApp, DEMO, makeTestApp, problem, setModule, type TestApp } from "./helpers";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const SOUTH = 2;
const P = "/api/v1/pending";
const PARENT = ["task.read", "task.respond", "appointment.read", "appointment.book"];

type Copy = {
  id: number;
  taskId: number;
  studentId: number | null;
  status: string;
  completedBy: number | null;
  completedFor: number | null;
  archived: boolean;
  title: string;
};
type Task = {
  id: number;
  status: string;
  slug: string;
  counts: { recipients: number; new: number; viewed: number; completed: number } | null;
  audience: unknown;
  copies?: Copy[];
};

function app() {
  const push = new PushQueue();
  const t = makeTestApp({ queues: { push } });
  return { t, push };
}

const admin = (t: TestApp) => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const parentToken = (t: TestApp, f: { userId: number }) => t.token(f.userId, { [NORTH]: PARENT });

async function send(t: TestApp, body: Record<string, unknown>) {
  const res = await t.request(P, { method: "POST", token: await admin(t), school: NORTH, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return readJson<Task>(res);
}

const act = async (t: TestApp, token: string, id: number, action: string, query = "") =>
  t.request(`${P}/${id}/${action}${query}`, { method: "PATCH", token, school: NORTH });

async function mine(t: TestApp, token: string, query = "") {
  const res = await t.request(`${P}/mine${query}`, { token, school: NORTH });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<{ data: Copy[]; total: number }>(res);
}

/** A second guardian of `f`'s child (another user and parent profile). */
const secondGuardian = (t: TestApp, f: Family) => makeFamily(t, NORTH, { studentId: f.studentId });

/** The users a notification about `entity` `id` reached (after the fan-out). */
async function reached(t: TestApp, push: PushQueue, where: { entity: string; id: number }) {
  await push.drain(t.deps);
  const rows = await t.db
    .select({ userId: notificationRecipients.userId, title: notifications.title, body: notifications.body })
    .from(notificationRecipients)
    .innerJoin(notifications, eq(notifications.id, notificationRecipients.notificationId))
    .where(and(eq(notifications.aboutEntity, where.entity), eq(notifications.aboutId, where.id)));
  return rows;
}

describe("a parent's week", () => {
  it("a task arrives, is viewed and completed, an appointment is booked; the reminder sweep runs twice and reminds the others once", async () => {
    const { t, push } = app();
    const ours = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH);
    let token = await parentToken(t, ours);

    // Monday: the school sends the field trip slip to both families.
    const task = await send(t, {
      title: "Field trip permission slip",
      description: "Museum visit on Friday.\nBring a packed lunch.",
      dueDate: "2026-11-27",
      studentIds: [ours.studentId, other.studentId],
    });
    expect(task).toMatchObject({ status: "published", counts: { recipients: 2, new: 2, viewed: 0, completed: 0 } });
    const told = await reached(t, push, { entity: "task", id: task.id });
    expect(told.map((r) => r.userId).sort()).toEqual([ours.userId, other.userId].sort());
    expect(told[0]?.title).toEqual({ en: "New task", es: "Nueva tarea" });

    const inbox = await mine(t, token, "?status=pending");
    expect(inbox.data.map((c) => [c.taskId, c.studentId, c.status])).toEqual([[task.id, ours.studentId, "new"]]);

    // A reminder for Wednesday morning.
    const scheduled = await t.request("/api/v1/pending-reminder", {
      method: "POST",
      token: await admin(t),
      school: NORTH,
      body: { taskId: task.id, sendAt: "2026-11-25T14:00:00.000Z" },
    });
    expect(scheduled.status, await scheduled.clone().text()).toBe(201);
    const reminder = await readJson<{ id: number; status: string }>(scheduled);
    expect(reminder.status).toBe("scheduled");

    // Tuesday: the parent opens it, then completes it.
    t.clock.advance(24 * 3600);
    token = await parentToken(t, ours);
    const viewed = await act(t, token, task.id, "viewed");
    expect(viewed.status).toBe(200);
    expect(await readJson<Copy>(viewed)).toMatchObject({ status: "viewed", studentId: ours.studentId });
    const done = await act(t, token, task.id, "complete");
    expect(done.status).toBe(200);
    expect(await readJson<Copy>(done)).toMatchObject({
      status: "completed",
      completedBy: ours.userId,
      completedFor: null,
    });
    expect((await mine(t, token, "?status=pending")).total).toBe(0);
    expect((await mine(t, token, "?status=completed")).data.map((c) => c.taskId)).toEqual([task.id]);

    // The school opens parent-teacher meetings on Thursday; the parent books 16:15 (which completes that task).
    const staff = await admin(t);
    const meetings = await send(t, {
      title: "Parent-teacher meetings",
      requiresAppointment: true,
      studentIds: [ours.studentId],
    });
    const session = await readJson<{ id: number }>(
      await t.request("/api/v1/session", {
        method: "POST",
        token: staff,
        school: NORTH,
        body: { taskId: meetings.id, slotMinutes: 15 },
      }),
    );
    const day = await t.request("/api/v1/session-day", {
      method: "POST",
      token: staff,
      school: NORTH,
      body: { sessionId: session.id, date: "2026-11-26", windows: [{ start: "16:00", end: "17:00" }] },
    });
    expect(day.status, await day.clone().text()).toBe(201);
    expect(
      (await t.request(`/api/v1/session/${session.id}/slots`, { method: "PUT", token: staff, school: NORTH, body: {} }))
        .status,
    ).toBe(200);
    expect(
      (await t.request(`/api/v1/session/${session.id}/publish`, { method: "PUT", token: staff, school: NORTH })).status,
    ).toBe(200);
    const slots = await readJson<{ data: { id: number; start: string }[] }>(
      await t.request(`/api/v1/time-slot?sessionId=${session.id}&available=true`, { token, school: NORTH }),
    );
    const slot = slots.data.find((s) => s.start === "16:15");
    const booked = await t.request(`/api/v1/time-slot/${slot?.id}/appointment`, {
      method: "POST",
      token,
      school: NORTH,
      body: { studentId: ours.studentId },
    });
    expect(booked.status, await booked.clone().text()).toBe(201);
    expect((await readJson<{ ics: string }>(booked)).ics).toContain("DTSTART;TZID=America/Mexico_City:20261126T161500");
    const meeting = (await mine(t, token, "?status=completed")).data.find((c) => c.taskId === meetings.id);
    expect(meeting).toMatchObject({ status: "completed", completedBy: ours.userId });

    // Wednesday: the 5-minute sweep, twice (a late second trigger): one reminder, to the other family only.
    t.clock.current = new Date("2026-11-25T14:02:00.000Z");
    await runScheduled(t.deps, "*/5 * * * *");
    t.clock.advance(60);
    await runScheduled(t.deps, "*/5 * * * *");
    const [sent] = await t.db.select().from(taskReminders).where(eq(taskReminders.id, reminder.id));
    expect(sent).toMatchObject({ status: "sent", sentCount: 1 });
    const runs = await t.db.select().from(cronHistory).where(eq(cronHistory.job, "send-task-reminders"));
    expect(runs.map((r) => [r.status, r.detail])).toEqual([
      ["completed", "1 task reminders sent"],
      ["completed", "0 task reminders sent"],
    ]);
    const all = await reached(t, push, { entity: "task", id: task.id });
    const reminders = all.filter((r) => (r.title as { en: string }).en.startsWith("Reminder"));
    expect(reminders.map((r) => r.userId)).toEqual([other.userId]);

    // Thursday: the school reads who did what.
    const detail = await t.request(`${P}/${task.id}/detail`, { token: await admin(t), school: NORTH });
    const body = await readJson<{ recipients: { studentId: number; status: string; completedBy: number | null }[] }>(
      detail,
    );
    expect(body.recipients.map((r) => [r.studentId, r.status, r.completedBy])).toEqual([
      [ours.studentId, "completed", ours.userId],
      [other.studentId, "new", null],
    ]);
  });
});

describe("recipients and their copies", () => {
  it("a family gets one copy per child; both guardians see it; a completion is the family's", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const b = await secondGuardian(t, a);
    // A sibling under the same first guardian.
    const sibling = await makeFamily(t, NORTH);
    const { guardians } = await import("../src/db/schema/student");
    await t.db.insert(guardians).values({ schoolId: NORTH, studentId: sibling.studentId, parentId: a.parentId });
    const task = await send(t, { title: "Photo day form", studentIds: [a.studentId, sibling.studentId] });
    const tokenA = await parentToken(t, a);
    const tokenB = await parentToken(t, b);
    expect((await mine(t, tokenA)).data.map((c) => c.studentId).sort()).toEqual(
      [a.studentId, sibling.studentId].sort(),
    );
    expect((await mine(t, tokenB)).data.map((c) => c.studentId)).toEqual([a.studentId]);
    // Two copies: the first guardian names the child; the other has one.
    const ambiguous = await act(t, tokenA, task.id, "complete");
    expect(ambiguous.status).toBe(422);
    expect((await problem(ambiguous)).detail).toMatch(/name studentId/);
    expect((await act(t, tokenB, task.id, "complete")).status).toBe(200);
    // Done once for that child: the other guardian sees it completed, by the second guardian.
    const seen = (await mine(t, tokenA)).data.find((c) => c.studentId === a.studentId);
    expect(seen).toMatchObject({ status: "completed", completedBy: b.userId });
    const again = await act(t, tokenA, task.id, "complete", `?studentId=${a.studentId}`);
    expect(again.status).toBe(409);
    expect((await act(t, tokenA, task.id, "complete", `?studentId=${sibling.studentId}`)).status).toBe(200);
  });

  it("two guardians completing at once: exactly one wins, the other gets a 409", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const b = await secondGuardian(t, a);
    const task = await send(t, { title: "Sign the report card", studentIds: [a.studentId] });
    const tokens = [await parentToken(t, a), await parentToken(t, b)];
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => act(t, tokens[i % 2] ?? "", task.id, "complete")),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    const [row] = await t.db.select().from(taskRecipients).where(eq(taskRecipients.taskId, task.id));
    expect(row?.status).toBe("completed");
  });

  it("a delegate's completion counts for the parent and says who did it", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const grandma = await makeFamily(t, NORTH);
    await makeDelegate(t, NORTH, a.parentId, grandma.userId);
    const task = await send(t, { title: "Lunch order", studentIds: [a.studentId] });
    const token = await parentToken(t, grandma);
    // The delegate sees the parent's copies (her own child's copy is not among them: not sent to her family).
    expect((await mine(t, token)).data.map((c) => c.studentId)).toEqual([a.studentId]);
    const res = await act(t, token, task.id, "complete");
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await readJson<Copy>(res)).toMatchObject({
      status: "completed",
      completedBy: grandma.userId,
      completedFor: a.userId,
    });
    // Reverting goes back to viewed; archiving is the caller's folder.
    const reverted = await act(t, token, task.id, "revert-completion");
    expect(await readJson<Copy>(reverted)).toMatchObject({ status: "viewed", completedBy: null, completedFor: null });
    expect((await act(t, token, task.id, "revert-completion")).status).toBe(409);
  });

  it("a delegate of both guardians sees each copy once, in the list and in the task", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const b = await secondGuardian(t, a);
    const grandma = await makeFamily(t, NORTH);
    for (const parentId of [a.parentId, b.parentId]) await makeDelegate(t, NORTH, parentId, grandma.userId);
    const task = await send(t, { title: "Swimming gala consent", studentIds: [a.studentId] });
    const token = await parentToken(t, grandma);
    const list = await mine(t, token);
    expect(list.data.map((c) => [c.taskId, c.studentId])).toEqual([[task.id, a.studentId]]);
    expect(list.total).toBe(1);
    const one = await readJson<Task>(await t.request(`${P}/${task.id}`, { token, school: NORTH }));
    expect(one.copies?.map((c) => c.studentId)).toEqual([a.studentId]);
  });

  it("the archive is each person's own folder, and staff never read it as done", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const b = await secondGuardian(t, a);
    const task = await send(t, { title: "Read the newsletter", studentIds: [a.studentId] });
    const tokenA = await parentToken(t, a);
    const archived = await act(t, tokenA, task.id, "archive");
    expect(await readJson<Copy>(archived)).toMatchObject({ archived: true, status: "new" });
    expect((await mine(t, tokenA)).total).toBe(0);
    expect((await mine(t, tokenA, "?archived=true")).data.map((c) => c.taskId)).toEqual([task.id]);
    expect((await mine(t, await parentToken(t, b))).data.map((c) => [c.taskId, c.archived])).toEqual([
      [task.id, false],
    ]);
    const detail = await t.request(`${P}/${task.id}/detail`, { token: await admin(t), school: NORTH });
    const text = await detail.text();
    expect(text).not.toMatch(/archiv/i);
    expect(JSON.parse(text)).toMatchObject({ counts: { new: 1, completed: 0 } });
    expect(await readJson<Copy>(await act(t, tokenA, task.id, "unarchive"))).toMatchObject({ archived: false });
    expect((await mine(t, tokenA)).total).toBe(1);
  });

  it("a task to a level, a group, a role: one recipient per student, one per holder", async () => {
    const { t } = app();
    const level = await send(t, { title: "Preschool picnic", levels: ["preschool"] });
    const recipients = await t.db.select().from(taskRecipients).where(eq(taskRecipients.taskId, level.id));
    expect(recipients.every((r) => r.studentId !== null && r.userId === null)).toBe(true);
    expect(new Set(recipients.map((r) => r.studentId)).size).toBe(recipients.length);
    const teachers = await send(t, { title: "Grades due", roleIds: [4] });
    const holders = await t.db.select().from(taskRecipients).where(eq(taskRecipients.taskId, teachers.id));
    expect(holders.length).toBeGreaterThan(1);
    expect(holders.every((h) => h.userId !== null)).toBe(true);
    // The demo teacher (user 3) finds it in their own list.
    const teacher = await t.token(DEMO.northTeacher.id, { [NORTH]: ["task.read", "task.respond"] });
    expect((await mine(t, teacher)).data.map((c) => c.taskId)).toContain(teachers.id);
  });
});

describe("who sees what", () => {
  it("another family reads neither the task nor its copies (404); staff read audience and counts", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const stranger = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Allergy form", studentIds: [a.studentId] });
    const theirs = await parentToken(t, stranger);
    expect((await t.request(`${P}/${task.id}`, { token: theirs, school: NORTH })).status).toBe(404);
    expect((await act(t, theirs, task.id, "viewed")).status).toBe(404);
    expect((await mine(t, theirs)).total).toBe(0);
    const own = await readJson<Task>(
      await t.request(`${P}/${task.id}`, { token: await parentToken(t, a), school: NORTH }),
    );
    expect(own).toMatchObject({ audience: null, counts: null, copies: [{ studentId: a.studentId, status: "new" }] });
    const staff = await readJson<Task>(await t.request(`${P}/${task.id}`, { token: await admin(t), school: NORTH }));
    expect(staff).toMatchObject({ audience: { studentIds: [a.studentId] }, counts: { recipients: 1 } });
    // The list with filters is staff's.
    expect((await t.request(P, { token: theirs, school: NORTH })).status).toBe(403);
  });

  it("the public page answers 429 with retry-after past 60 lookups a minute from one address, as every public page", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Book fair", studentIds: [a.studentId] });
    const headers = { "cf-connecting-ip": "203.0.113.91" };
    for (let i = 0; i < 60; i++)
      expect((await t.request(`${P}/public?slug=${task.slug}`, { headers })).status).toBe(200);
    // Unknown slugs count too: guessing costs the same as reading.
    const limited = await t.request(`${P}/public?slug=unknown-slug-000`, { headers });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-policy")).toContain('"task-public-ip";q=60;w=60');
    const other = await t.request(`${P}/public?slug=${task.slug}`, { headers: { "cf-connecting-ip": "203.0.113.92" } });
    expect(other.status).toBe(200);
  });

  it("the public page shows the text only, of a published task, where the module is on", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const task = await send(t, {
      title: "Uniform fitting",
      description: "Bring the old one",
      studentIds: [a.studentId],
    });
    const res = await t.request(`${P}/public?slug=${task.slug}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      title: "Uniform fitting",
      description: "Bring the old one",
      dueDate: null,
      requiresAppointment: false,
      school: { name: "Northside Demo School" },
    });
    expect((await t.request(`${P}/public?slug=unknown-slug-000`)).status).toBe(404);
    await t.db
      .insert(schoolModules)
      .values({ schoolId: NORTH, moduleId: 5, enabled: false })
      .onConflictDoUpdate({ target: [schoolModules.schoolId, schoolModules.moduleId], set: { enabled: false } });
    try {
      expect((await t.request(`${P}/public?slug=${task.slug}`)).status).toBe(404);
    } finally {
      await t.db
        .update(schoolModules)
        .set({ enabled: true })
        .where(and(eq(schoolModules.schoolId, NORTH), eq(schoolModules.moduleId, 5)));
    }
    // A school that never stored the module's state has it on.
    await t.db.delete(schoolModules).where(and(eq(schoolModules.schoolId, NORTH), eq(schoolModules.moduleId, 5)));
    try {
      expect((await t.request(`${P}/public?slug=${task.slug}`)).status).toBe(200);
    } finally {
      await t.db.insert(schoolModules).values({ schoolId: NORTH, moduleId: 5, enabled: true }).onConflictDoNothing();
    }
  });
});

describe("staff's operations", () => {
  it("reminds now only those who have not completed (and reaches a guardian added since)", async () => {
    const { t, push } = app();
    const done = await makeFamily(t, NORTH);
    const late = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Return the library book", studentIds: [done.studentId, late.studentId] });
    expect((await act(t, await parentToken(t, done), task.id, "complete")).status).toBe(200);
    const added = await secondGuardian(t, late);
    await push.drain(t.deps);
    const res = await t.request(`${P}/${task.id}/remind`, { method: "POST", token: await admin(t), school: NORTH });
    expect(await readJson(res)).toEqual({ taskId: task.id, reminded: 1 });
    const told = await reached(t, push, { entity: "task", id: task.id });
    const reminded = told.filter((r) => (r.title as { en: string }).en.startsWith("Reminder")).map((r) => r.userId);
    expect(reminded.sort()).toEqual([late.userId, added.userId].sort());
    expect((await mine(t, await parentToken(t, added))).data.map((c) => c.taskId)).toEqual([task.id]);
  });

  it("a scheduled reminder waits while the school has tasks switched off, and goes out once they are on again", async () => {
    const { t, push } = app();
    const late = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Sign the photo consent", studentIds: [late.studentId] });
    const scheduled = await t.request("/api/v1/pending-reminder", {
      method: "POST",
      token: await admin(t),
      school: NORTH,
      body: { taskId: task.id, sendAt: new Date(t.clock.now().getTime() + 3600_000).toISOString() },
    });
    const { id } = await readJson<{ id: number }>(scheduled);
    const reminders = async () =>
      (await reached(t, push, { entity: "task", id: task.id })).filter((r) =>
        (r.title as { en: string }).en.startsWith("Reminder"),
      );
    t.clock.advance(2 * 3600);
    await setModule(t, NORTH, "tasks", false);
    try {
      await sendDueReminders(t.deps);
      expect(await reminders()).toEqual([]);
      const [row] = await t.db.select().from(taskReminders).where(eq(taskReminders.id, id));
      expect(row?.status).toBe("scheduled");
    } finally {
      await setModule(t, NORTH, "tasks", true);
    }
    await sendDueReminders(t.deps);
    expect((await reminders()).map((r) => r.userId)).toEqual([late.userId]);
  });

  it("deletes with a reason: the recipients are told, the task is gone", async () => {
    const { t, push } = app();
    const a = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Swimming class", studentIds: [a.studentId] });
    await push.drain(t.deps);
    const res = await t.request(`${P}/${task.id}/delete`, {
      method: "POST",
      token: await admin(t),
      school: NORTH,
      body: { reason: "The pool is closed for repairs" },
    });
    expect(res.status).toBe(204);
    await push.drain(t.deps);
    const told = await t.db
      .select({ userId: notificationRecipients.userId, body: notifications.body, title: notifications.title })
      .from(notificationRecipients)
      .innerJoin(notifications, eq(notifications.id, notificationRecipients.notificationId))
      .where(eq(notificationRecipients.userId, a.userId));
    expect(told.at(-1)).toMatchObject({
      body: { en: "The pool is closed for repairs", es: "The pool is closed for repairs" },
      title: { en: "Task withdrawn: Swimming class" },
    });
    expect((await t.request(`${P}/${task.id}`, { token: await admin(t), school: NORTH })).status).toBe(404);
    expect(await t.db.select().from(taskInbox).where(eq(taskInbox.taskId, task.id))).toEqual([]);
  });

  it("a task that requires an appointment is held until its session is published", async () => {
    const { t } = app();
    const a = await makeFamily(t, NORTH);
    const task = await send(t, { title: "Book a meeting", requiresAppointment: true, studentIds: [a.studentId] });
    expect(task.status).toBe("draft");
    expect((await mine(t, await parentToken(t, a))).total).toBe(0);
    const remind = await t.request(`${P}/${task.id}/remind`, { method: "POST", token: await admin(t), school: NORTH });
    expect(remind.status).toBe(409);
  });

  it("refuses bad input: another school's group (404), an audience of nobody (422), a past due date (422), no audience (400)", async () => {
    const { t } = app();
    const token = await admin(t);
    const post = (body: unknown) => t.request(P, { method: "POST", token, school: NORTH, body });
    const south = await t.request("/api/v1/group?pageSize=1", { token: await t.token(1, {}, true), school: SOUTH });
    const southGroup = (await readJson<{ data: { id: number }[] }>(south)).data[0]?.id ?? 0;
    expect((await post({ title: "X", groupIds: [southGroup] })).status).toBe(404);
    expect((await post({ title: "X", roleIds: [6], levels: [] })).status).toBe(400);
    const [empty] = await t.db
      .insert(roles)
      .values(withSearch(roles, { name: "Nobody holds this", schoolId: NORTH }))
      .returning({ id: roles.id });
    const nobody = await post({ title: "X", roleIds: [empty?.id ?? 0] });
    expect(nobody.status).toBe(422);
    expect((await problem(nobody)).detail).toMatch(/reaches nobody/);
    const past = await post({ title: "X", dueDate: "2026-11-01", userIds: [2] });
    expect(past.status).toBe(422);
    expect((await problem(past)).detail).toMatch(/past/);
    const none = await post({ title: "X" });
    expect(none.status).toBe(400);
    expect((await problem(none)).errors?.[0]?.message).toMatch(/Name an audience/);
  });
});

describe("cost", () => {
  it("the staff detail is one D1 round trip; a person's list two (whom they act for, then the page)", async () => {
    const { t: plain } = app();
    const a = await makeFamily(plain, NORTH);
    const task = await send(plain, { title: "Costed", studentIds: [a.studentId] });
    const { t, measure } = countingTestApp();
    const detail = await measure(async () =>
      t.request(`${P}/${task.id}/detail`, { token: await admin(t), school: NORTH }),
    );
    expect(detail.res.status).toBe(200);
    expect(detail.calls).toBe(1);
    const list = await measure(async () => t.request(`${P}/mine`, { token: await parentToken(t, a), school: NORTH }));
    expect(list.res.status).toBe(200);
    expect(list.calls).toBe(2);
  });
});
