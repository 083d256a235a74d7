/**
 * Events: school-local times (an end before the start is a 400, also when an update sends one side),
 * the audience (another school's group 404, a level the school does not offer 400), who sees what
 * (a parent their children's levels and groups, a teacher their groups, a delegate the parent's;
 * anyone else 404), the audience told through the notification verb in both languages, reminding
 * now, deleting with a reason, the public page without personal data (429 past its limit), the
 * image's presigned URLs, and reminders: moved with the start, sent once by the sweep even when it
 * runs twice or concurrently, each run in the cron history.
 */
import { env } from "cloudflare:test";
import { and, desc, eq, gt } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { d1 } from "../src/db/client";
import { eventReminders } from "../src/db/schema/event";
import { cronHistory } from "../src/db/schema/jobs";
import { notifications } from "../src/db/schema/notification";
import { runScheduled } from "../src/jobs/scheduled";
import { grantsOf } from "../src/modules";
import { sendDueEventReminders } from "../src/modules/event/reminders";
import { createVia, uniq } from "./fixture-kit";
import {
  countingTestApp,
  DEMO,
  makeTestApp,
  problem,
  type Recorded,
  recordingD1,
  setModule,
  type TestApp,
} from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const EV = "/api/v1/event";
/** Groups of the demo school (seed/demo.sql): Pablo's (the demo teacher's homeroom) and Paloma's. */
const PABLO_GROUP = 2008;
const PALOMA_GROUP = 2002;

type EventRecord = {
  id: number;
  title: string;
  start: string;
  end: string;
  startsAt: string;
  endsAt: string;
  timeZone: string;
  forSchool: boolean;
  levels: string[];
  groupIds: number[];
  slug: string;
  status: string;
  sequence: number;
  remindedAt: string | null;
  cancelReason: string | null;
  reminders: { id: number; minutesBefore: number; sendAt: string; status: string }[];
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const parent = (t: TestApp) => as(t, DEMO.northParent.id, NORTH, "parent");
const teacher = (t: TestApp) => as(t, DEMO.northTeacher.id, NORTH, "teacher");

async function create(t: TestApp, body: Record<string, unknown>, school = NORTH) {
  const token = school === NORTH ? await admin(t) : await as(t, DEMO.southAdmin.id, SOUTH, "school-admin");
  return t.request(EV, {
    method: "POST",
    token,
    school,
    body: { title: uniq("Event"), start: "2026-12-05T10:00", end: "2026-12-05T13:00", ...body },
  });
}

async function made(t: TestApp, body: Record<string, unknown>): Promise<EventRecord> {
  const res = await create(t, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as EventRecord;
}

const noticesAbout = (t: TestApp, id: number) =>
  t.db
    .select()
    .from(notifications)
    .where(and(eq(notifications.aboutEntity, "event"), eq(notifications.aboutId, id)))
    .orderBy(notifications.id);

describe("creating an event", () => {
  it("keeps the school-local times and their instants (Mexico City: UTC-6)", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true, place: "Patio, norte; cancha 2" });
    expect(e).toMatchObject({
      start: "2026-12-05T10:00",
      end: "2026-12-05T13:00",
      timeZone: "America/Mexico_City",
      startsAt: "2026-12-05T16:00:00.000Z",
      endsAt: "2026-12-05T19:00:00.000Z",
      forSchool: true,
      levels: [],
      groupIds: [],
      status: "scheduled",
      sequence: 0,
    });
    expect(e.slug).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it("refuses an end before (or at) the start with a 400 naming end", async () => {
    const t = makeTestApp();
    for (const end of ["2026-12-05T09:00", "2026-12-05T10:00", "2026-12-04T23:59", "2027-01-10T10:00"]) {
      const res = await create(t, { forSchool: true, end });
      expect(res.status, end).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toEqual(["end"]);
    }
    for (const start of ["2026-13-01T10:00", "2026-02-30T10:00", "2026-12-05T24:00", "2026-12-05 10:00"]) {
      const res = await create(t, { forSchool: true, start });
      expect(res.status, start).toBe(400);
    }
  });

  it("refuses an update whose end falls before the stored start, or whose start passes the stored end", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true });
    const token = await admin(t);
    for (const body of [{ end: "2026-12-05T09:30" }, { start: "2026-12-05T14:00" }]) {
      const res = await t.request(`${EV}/${e.id}`, { method: "PUT", token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problem(res)).errors?.map((x) => x.path)).toEqual(["end"]);
    }
    const ok = await t.request(`${EV}/${e.id}`, { method: "PUT", token, body: { start: "2026-12-05T12:00" } });
    expect(ok.status).toBe(204);
    const back = (await (await t.request(`${EV}/${e.id}`, { token })).json()) as EventRecord;
    expect(back).toMatchObject({ start: "2026-12-05T12:00", startsAt: "2026-12-05T18:00:00.000Z", sequence: 1 });
  });

  it("needs an audience, one way: the whole school, or levels and groups", async () => {
    const t = makeTestApp();
    for (const body of [{}, { forSchool: true, levels: ["elementary"] }, { forSchool: false }, { levels: [] }]) {
      const res = await create(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("refuses another school's group (404) and a level the school does not offer (400), on create and update", async () => {
    const t = makeTestApp();
    const theirs = await createVia(t, "/api/v1/group", SOUTH, {
      name: uniq("South group"),
      level: "elementary",
      schoolYear: "2026-2027",
    });
    const res = await create(t, { groupIds: [PABLO_GROUP, theirs] });
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toContain(String(theirs));
    // Southside offers elementary to high, not preschool.
    const south = await create(t, { levels: ["preschool"] }, SOUTH);
    expect(south.status).toBe(400);
    expect((await problem(south)).errors?.map((e) => e.path)).toEqual(["levels"]);
    const e = await made(t, { levels: ["elementary"] });
    const update = await t.request(`${EV}/${e.id}`, {
      method: "PUT",
      token: await admin(t),
      body: { groupIds: [theirs] },
    });
    expect(update.status).toBe(404);
    const still = (await (await t.request(`${EV}/${e.id}`, { token: await admin(t) })).json()) as EventRecord;
    expect(still).toMatchObject({ levels: ["elementary"], groupIds: [] });
  });

  it("tells its audience in both languages, unless notify is false", async () => {
    const t = makeTestApp();
    const e = await made(t, { groupIds: [PABLO_GROUP], levels: ["high"], place: "Aula 3" });
    const [notice] = await noticesAbout(t, e.id);
    expect(notice).toMatchObject({
      category: "events",
      title: { en: `New event: ${e.title}`, es: `Nuevo evento: ${e.title}` },
      body: { en: "Sat 5 Dec 2026, 10:00–13:00 · Aula 3", es: "sáb 5 dic 2026, 10:00–13:00 · Aula 3" },
      // The teachers of Pablo's group (the demo teacher) and of the high school's groups are told too.
      audience: { levels: ["high"], groups: [PABLO_GROUP], users: expect.arrayContaining([DEMO.northTeacher.id]) },
    });
    // The demo parent (Pablo's guardian) is one of the recipients the notification counted.
    expect(notice?.recipientCount).toBeGreaterThan(1);
    const quiet = await made(t, { forSchool: true, notify: false });
    expect(await noticesAbout(t, quiet.id)).toEqual([]);
  });
});

describe("who sees an event", () => {
  it("a parent: the whole school's and their children's levels and groups; a teacher: their groups and levels", async () => {
    const t = makeTestApp();
    const title = uniq("Visibility");
    const mk = (body: Record<string, unknown>) => made(t, { title: `${title} ${JSON.stringify(body)}`, ...body });
    const school = await mk({ forSchool: true });
    const elementary = await mk({ levels: ["elementary"] });
    const high = await mk({ levels: ["high"] });
    const pablo = await mk({ groupIds: [PABLO_GROUP] });
    const paloma = await mk({ groupIds: [PALOMA_GROUP] });
    const other = await mk({ groupIds: [2010] });
    const list = async (token: string) => {
      const res = await t.request(`${EV}?title=${encodeURIComponent(title)}&pageSize=100`, { token });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: EventRecord[] }).data.map((e) => e.id).sort((a, b) => a - b);
    };
    const ids = (...es: EventRecord[]) => es.map((e) => e.id).sort((a, b) => a - b);
    expect(await list(await parent(t))).toEqual(ids(school, elementary, pablo, paloma));
    // The demo teacher teaches Primaria 3°A (elementary) only.
    expect(await list(await teacher(t))).toEqual(ids(school, elementary, pablo));
    expect(await list(await admin(t))).toEqual(ids(school, elementary, high, pablo, paloma, other));
    // The parent's delegate (valid 2026-08-24 to 2027-06-30) sees what the parent sees.
    expect(await list(await as(t, 1032, NORTH, "parent"))).toEqual(ids(school, elementary, pablo, paloma));
    // A member with no children and no groups here sees the whole school's only.
    expect(await list(await as(t, 987_654, NORTH, "parent"))).toEqual(ids(school));
    for (const hidden of [high, other]) {
      const res = await t.request(`${EV}/${hidden.id}`, { token: await parent(t) });
      expect(res.status).toBe(404);
    }
    expect((await t.request(`${EV}/${pablo.id}`, { token: await parent(t) })).status).toBe(200);
  });

  it("a delegation that ended yesterday at the school is not counted, even near midnight UTC", async () => {
    const t = makeTestApp();
    const title = uniq("Ended");
    const e = await made(t, { title, groupIds: [PALOMA_GROUP] });
    // 2027-07-01 03:00 UTC is still June 30 in Mexico City: the delegation (until 2027-06-30) is valid.
    t.clock.current = new Date("2027-07-01T03:00:00.000Z");
    const seen = async () => {
      const res = await t.request(`${EV}?title=${title}`, { token: await as(t, 1032, NORTH, "parent") });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: EventRecord[] }).data;
    };
    expect((await seen()).map((x) => x.id)).toEqual([e.id]);
    // 2027-07-01 07:00 UTC is July 1 there: it has ended (the UTC window still counts it: read again, exactly).
    t.clock.current = new Date("2027-07-01T07:00:00.000Z");
    expect(await seen()).toEqual([]);
  });

  it("a parent's page of 20 is one D1 round trip", async () => {
    const { t, measure } = countingTestApp();
    for (let i = 0; i < 3; i++) await made(t, { forSchool: true });
    const token = await parent(t);
    const { res, calls } = await measure(() => t.request(`${EV}?pageSize=20`, { token }));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
  });
});

describe("reminding now and deleting with a reason", () => {
  it("reminds the audience now; a started event is a 422, a cancelled one a 409", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const e = await made(t, { groupIds: [PABLO_GROUP], notify: false });
    const res = await t.request(`${EV}/${e.id}/remind`, { method: "POST", token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as EventRecord).remindedAt).toBe(t.clock.now().toISOString());
    const [notice] = await noticesAbout(t, e.id);
    expect(notice?.title).toEqual({ en: `Reminder: ${e.title}`, es: `Recordatorio: ${e.title}` });
    t.clock.current = new Date("2026-12-05T16:30:00.000Z");
    const late = await t.request(`${EV}/${e.id}/remind`, { method: "POST", token: await admin(t) });
    expect(late.status).toBe(422);
    expect(await noticesAbout(t, e.id)).toHaveLength(1);
  });

  it("cancels with the reason, tells the audience, skips the reminders; twice is a 409", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const e = await made(t, { levels: ["elementary"], notify: false });
    const reminder = await createVia(t, "/api/v1/event-reminder", NORTH, { eventId: e.id, minutesBefore: 1440 });
    const res = await t.request(`${EV}/${e.id}/delete`, {
      method: "POST",
      token,
      body: { reason: "Lluvia; nueva fecha pronto" },
    });
    expect(res.status).toBe(200);
    const cancelled = (await res.json()) as EventRecord;
    expect(cancelled).toMatchObject({ status: "cancelled", cancelReason: "Lluvia; nueva fecha pronto", sequence: 1 });
    expect(cancelled.reminders).toMatchObject([{ id: reminder, status: "skipped" }]);
    const [notice] = await noticesAbout(t, e.id);
    expect(notice?.title).toEqual({ en: `Cancelled: ${e.title}`, es: `Cancelado: ${e.title}` });
    expect(notice?.body.es).toContain("Motivo: Lluvia; nueva fecha pronto");
    const again = await t.request(`${EV}/${e.id}/delete`, { method: "POST", token, body: { reason: "x" } });
    expect(again.status).toBe(409);
    for (const [path, init] of [
      [`${EV}/${e.id}`, { method: "PUT", body: { title: "Back on" } }],
      [`${EV}/${e.id}/remind`, { method: "POST" }],
    ] as const) {
      expect((await t.request(path, { ...init, token })).status, path).toBe(409);
    }
    // The parent still reads it, cancelled, with the reason.
    const seen = await t.request(`${EV}/${e.id}`, { token: await parent(t) });
    expect(((await seen.json()) as EventRecord).status).toBe("cancelled");
  });

  it("only staff manage events", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true });
    for (const [method, path, body] of [
      ["POST", EV, { title: "x", start: "2026-12-05T10:00", end: "2026-12-05T11:00", forSchool: true }],
      ["PUT", `${EV}/${e.id}`, { title: "x" }],
      ["POST", `${EV}/${e.id}/remind`, undefined],
      ["POST", `${EV}/${e.id}/delete`, { reason: "x" }],
      ["DELETE", `${EV}/${e.id}`, undefined],
    ] as const) {
      const res = await t.request(path, { method, token: await parent(t), body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
  });
});

describe("the public page", () => {
  it("shows what, when and where without signing in; nothing of who", async () => {
    const t = makeTestApp();
    const e = await made(t, { groupIds: [PABLO_GROUP], description: "Traigan abrigo", place: "Patio" });
    const res = await t.request(`${EV}/public?slug=${e.slug}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Record<string, unknown>;
    expect(page).toEqual({
      title: e.title,
      description: "Traigan abrigo",
      place: "Patio",
      start: "2026-12-05T10:00",
      end: "2026-12-05T13:00",
      timeZone: "America/Mexico_City",
      startsAt: "2026-12-05T16:00:00.000Z",
      endsAt: "2026-12-05T19:00:00.000Z",
      status: "scheduled",
      imageUrl: null,
      school: { name: "Northside Demo School" },
    });
    expect((await t.request(`${EV}/public?slug=unknownslug1234`)).status).toBe(404);
  });

  it("is a 404 where the school switched the events module off", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true });
    const superAdmin = await t.token(1, {}, true);
    const set = async (enabled: boolean) =>
      expect(
        (
          await t.request("/api/v1/application-module/school/events/enabled", {
            method: "PUT",
            token: superAdmin,
            school: NORTH,
            body: { enabled },
          })
        ).status,
      ).toBe(204);
    await set(false);
    try {
      expect((await t.request(`${EV}/public?slug=${e.slug}`)).status).toBe(404);
    } finally {
      await set(true);
    }
    expect((await t.request(`${EV}/public?slug=${e.slug}`)).status).toBe(200);
  });

  it("answers 429 with retry-after past 60 lookups a minute from one address", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true });
    const headers = { "cf-connecting-ip": "203.0.113.77" };
    for (let i = 0; i < 60; i++) expect((await t.request(`${EV}/public?slug=${e.slug}`, { headers })).status).toBe(200);
    const limited = await t.request(`${EV}/public?slug=${e.slug}`, { headers });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is not limited.
    const other = await t.request(`${EV}/public?slug=${e.slug}`, { headers: { "cf-connecting-ip": "203.0.113.78" } });
    expect(other.status).toBe(200);
  });
});

describe("the image", () => {
  it("uploads through a presigned PUT under the school's prefix and downloads for the audience", async () => {
    const t = makeTestApp();
    const e = await made(t, { groupIds: [PABLO_GROUP] });
    const put = await t.request(`${EV}/${e.id}/signed-url`, {
      method: "PUT",
      token: await admin(t),
      body: { contentType: "image/jpeg" },
    });
    expect(put.status).toBe(200);
    const signed = (await put.json()) as { image: string; url: string; method: string; headers: object };
    expect(signed.image).toMatch(new RegExp(`^1/events/${e.id}/image-[0-9a-f-]+\\.jpg$`));
    expect(signed).toMatchObject({ method: "PUT", headers: { "content-type": "image/jpeg" } });
    expect(new URL(signed.url).searchParams.get("X-Amz-Expires")).toBe("300");
    const get = await t.request(`${EV}/${e.id}/signed-url`, {
      method: "PUT",
      token: await parent(t),
      body: { method: "GET" },
    });
    expect(get.status).toBe(200);
    expect(((await get.json()) as { image: string }).image).toBe(signed.image);
    // A parent may not upload; the public page signs a download.
    const refused = await t.request(`${EV}/${e.id}/signed-url`, {
      method: "PUT",
      token: await parent(t),
      body: { contentType: "image/png" },
    });
    expect(refused.status).toBe(403);
    const page = (await (await t.request(`${EV}/public?slug=${e.slug}`)).json()) as { imageUrl: string };
    expect(page.imageUrl).toContain(encodeURI(signed.image));
  });
});

describe("event reminders", () => {
  const REM = "/api/v1/event-reminder";

  it("are a time before the start, move with it, and refuse a past time (422), a twin (409), a cancelled event (409)", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const e = await made(t, { forSchool: true, notify: false });
    const res = await t.request(REM, { method: "POST", token, body: { eventId: e.id, minutesBefore: 120 } });
    expect(res.status).toBe(201);
    const reminder = (await res.json()) as { id: number; sendAt: string; status: string };
    expect(reminder).toMatchObject({ sendAt: "2026-12-05T14:00:00.000Z", status: "scheduled" });
    const twin = await t.request(REM, { method: "POST", token, body: { eventId: e.id, minutesBefore: 120 } });
    expect(twin.status).toBe(409);
    // 20 days before 2026-12-05 is 2026-11-15: past (the clock says 2026-11-23).
    const past = await t.request(REM, { method: "POST", token, body: { eventId: e.id, minutesBefore: 20 * 1440 } });
    expect(past.status).toBe(422);
    const moved = await t.request(`${EV}/${e.id}`, {
      method: "PUT",
      token,
      body: { start: "2026-12-06T09:00", end: "2026-12-06T10:00" },
    });
    expect(moved.status).toBe(204);
    const [row] = await t.db.select().from(eventReminders).where(eq(eventReminders.id, reminder.id));
    expect(row?.sendAt).toBe("2026-12-06T13:00:00.000Z");
    const unknown = await t.request(REM, { method: "POST", token, body: { eventId: 987654, minutesBefore: 60 } });
    expect(unknown.status).toBe(404);
  });

  it("the sweep sends each due reminder once, even run twice or five times at once", async () => {
    const t = makeTestApp();
    const e = await made(t, { groupIds: [PABLO_GROUP], notify: false });
    const other = await made(t, { forSchool: true, notify: false });
    for (const eventId of [e.id, other.id]) {
      await createVia(t, "/api/v1/event-reminder", NORTH, { eventId, minutesBefore: 60 });
    }
    // Not yet due.
    await sendDueEventReminders(t.deps);
    expect(await noticesAbout(t, e.id)).toEqual([]);
    t.clock.current = new Date("2026-12-05T15:02:00.000Z");
    const runs = await Promise.all(Array.from({ length: 5 }, () => sendDueEventReminders(t.deps)));
    // Between them the runs sent both, each once (a run that found one taken says so).
    const sentBy = runs.map((r) => Number(/^(\d+) event reminders sent/.exec(r)?.[1]));
    expect(sentBy.reduce((a, b) => a + b, 0)).toBe(2);
    await sendDueEventReminders(t.deps);
    for (const id of [e.id, other.id]) {
      const notices = await noticesAbout(t, id);
      expect(notices, `event ${id}`).toHaveLength(1);
      expect(notices[0]?.title).toMatchObject({ es: expect.stringMatching(/^Recordatorio: /) });
    }
    const [sent] = await t.db.select().from(eventReminders).where(eq(eventReminders.eventId, e.id));
    expect(sent).toMatchObject({ status: "sent", sentAt: "2026-12-05T15:02:00.000Z" });
    expect(sent?.recipientCount).toBeGreaterThan(0);
  });

  it("a school with events switched off hears no reminder; it goes out once events are on again", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true, notify: false });
    await createVia(t, "/api/v1/event-reminder", NORTH, { eventId: e.id, minutesBefore: 60 });
    await setModule(t, NORTH, "events", false);
    t.clock.current = new Date("2026-12-05T15:02:00.000Z");
    await sendDueEventReminders(t.deps);
    expect(await noticesAbout(t, e.id)).toEqual([]);
    const [waiting] = await t.db.select().from(eventReminders).where(eq(eventReminders.eventId, e.id));
    expect(waiting?.status).toBe("scheduled");
    await setModule(t, NORTH, "events", true);
    await sendDueEventReminders(t.deps);
    expect(await noticesAbout(t, e.id)).toHaveLength(1);
  });

  it("skips a reminder of an event that has started, and each cron run writes its history row", async () => {
    const t = makeTestApp();
    const e = await made(t, { forSchool: true, notify: false });
    await createVia(t, "/api/v1/event-reminder", NORTH, { eventId: e.id, minutesBefore: 30 });
    // The sweep did not run before the start (a late cron): past the start, nobody is reminded.
    t.clock.current = new Date("2026-12-05T16:10:00.000Z");
    const [last] = await t.db.select({ id: cronHistory.id }).from(cronHistory).orderBy(desc(cronHistory.id)).limit(1);
    await runScheduled(t.deps, "*/5 * * * *");
    await runScheduled(t.deps, "*/5 * * * *");
    expect(await noticesAbout(t, e.id)).toEqual([]);
    const [row] = await t.db.select().from(eventReminders).where(eq(eventReminders.eventId, e.id));
    expect(row?.status).toBe("skipped");
    const history = await t.db
      .select({ job: cronHistory.job, status: cronHistory.status, detail: cronHistory.detail })
      .from(cronHistory)
      .where(and(gt(cronHistory.id, last?.id ?? 0), eq(cronHistory.job, "send-event-reminders")));
    expect(history).toHaveLength(2);
    expect(history.map((h) => h.status)).toEqual(["completed", "completed"]);
    expect(history[0]?.detail).toContain("1 skipped");
  });
});

describe("the parent's list reads through indexes", () => {
  it("no table scan, no temporary B-tree, for a parent and for a teacher", async () => {
    const statements: Recorded[] = [];
    const recording = recordingD1(env.DB, statements);
    const t = makeTestApp({ db: d1(recording) });
    for (const token of [await parent(t), await teacher(t)]) {
      statements.length = 0;
      const res = await t.request(`${EV}?pageSize=20`, { token });
      expect(res.status).toBe(200);
      const selects = statements.filter((x) => /^\s*select/i.test(x.sql));
      expect(selects.length).toBeGreaterThan(0);
      for (const s of selects) {
        const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
          .bind(...s.args)
          .all<{ detail: string }>();
        const bad = plan.results
          .map((r) => r.detail)
          .filter(
            (d) =>
              /USE TEMP B-TREE/.test(d) || (/^SCAN (?!CONSTANT ROW)\w+/.test(d) && !/USING (COVERING )?INDEX/.test(d)),
          );
        expect(bad, `${plan.results.map((r) => r.detail).join("\n")}\n${s.sql}`).toEqual([]);
      }
    }
  });
});
