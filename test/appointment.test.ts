/**
 * Appointments through the API: setting a session up (days, windows, slots generated in the school's
 * time zone, also on the days the clocks change), publishing it (its held task sent), booking (the
 * capacity and "one booking per family" rules under concurrent requests, a visit of consecutive
 * slots with several teachers all or nothing, two D1 round trips), cancelling before the cut-off,
 * the iCalendar invite parsed back, and bad input.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appointments, timeSlots } from "../src/db/schema/appointment";
import { schools } from "../src/db/schema/core";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { taskRecipients } from "../src/db/schema/task";
import { teachers } from "../src/db/schema/teacher";
import { readJson } from "./fixture-kit";
import { makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";
import { PushQueue } from "./push-queue";

const NORTH = 1;
const SOUTH = 2;
const PARENT = ["task.read", "task.respond", "appointment.read", "appointment.book"];
/** A Wednesday after the test clock's Monday (2026-11-23). */
const DAY = "2026-12-02";

type Slot = {
  id: number;
  start: string;
  end: string;
  startsAt: string;
  endsAt: string;
  capacity: number;
  booked: number;
  teacherId: number | null;
};
type Booking = {
  id: number;
  status: string;
  visit: string;
  appointments: { id: number; slotId: number }[];
  ics: string;
};

const admin = (t: TestApp) => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const parentToken = (t: TestApp, f: { userId: number }) => t.token(f.userId, { [NORTH]: PARENT });

async function call(t: TestApp, method: string, path: string, body?: unknown, token?: string) {
  return t.request(path, { method, token: token ?? (await admin(t)), school: NORTH, body });
}

async function ok<T>(res: Response, status = 200): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(status);
  return readJson<T>(res);
}

/** Two teachers of the school (profile ids). */
async function twoTeachers(t: TestApp): Promise<[number, number]> {
  const rows = await t.db.select({ id: teachers.id }).from(teachers).where(eq(teachers.schoolId, NORTH)).limit(2);
  const [a, b] = rows;
  if (!a || !b) throw new Error("the demo school has teachers");
  return [a.id, b.id];
}

/**
 * A task for `studentIds` that requires an appointment, its session (settings), a day with
 * `windows` on `date`, its slots generated, published when `publish`.
 */
async function setUp(
  t: TestApp,
  options: {
    studentIds: number[];
    windows: { start: string; end: string; teacherId?: number }[];
    date?: string;
    session?: Record<string, unknown>;
    publish?: boolean;
  },
) {
  const task = await ok<{ id: number; status: string }>(
    await call(t, "POST", "/api/v1/pending", {
      title: "Parent-teacher meetings",
      requiresAppointment: true,
      studentIds: options.studentIds,
    }),
    201,
  );
  const session = await ok<{ id: number }>(
    await call(t, "POST", "/api/v1/session", {
      taskId: task.id,
      slotMinutes: 15,
      location: "Room 12",
      ...options.session,
    }),
    201,
  );
  await ok(
    await call(t, "POST", "/api/v1/session-day", {
      sessionId: session.id,
      date: options.date ?? DAY,
      windows: options.windows,
    }),
    201,
  );
  await ok(await call(t, "PUT", `/api/v1/session/${session.id}/slots`, {}));
  if (options.publish !== false) await ok(await call(t, "PUT", `/api/v1/session/${session.id}/publish`));
  const slots = await ok<{ data: Slot[] }>(
    await call(t, "GET", `/api/v1/time-slot?sessionId=${session.id}&pageSize=100`),
  );
  return { taskId: task.id, sessionId: session.id, slots: slots.data };
}

const book = (t: TestApp, slotId: number, body: Record<string, unknown>, token?: string) =>
  call(t, "POST", `/api/v1/time-slot/${slotId}/appointment`, body, token);

describe("setting a session up", () => {
  it("cuts windows into slots with breaks, publishes, sends the held task and tells its families", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const family = await makeFamily(t, NORTH);
    const [teacherA] = await twoTeachers(t);
    const { taskId, sessionId, slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "16:00", end: "17:00", teacherId: teacherA }],
      session: { slotMinutes: 15, breakMinutes: 5 },
    });
    // 16:00, 16:20, 16:40 (a 15-minute slot and a 5-minute break each): Mexico City is UTC-6.
    expect(slots.map((s) => [s.start, s.end, s.startsAt])).toEqual([
      ["16:00", "16:15", "2026-12-02T22:00:00.000Z"],
      ["16:20", "16:35", "2026-12-02T22:20:00.000Z"],
      ["16:40", "16:55", "2026-12-02T22:40:00.000Z"],
    ]);
    const task = await ok<{ status: string }>(await call(t, "GET", `/api/v1/pending/${taskId}`));
    expect(task.status).toBe("published");
    await push.drain(t.deps);
    const { notificationRecipients, notifications } = await import("../src/db/schema/notification");
    const told = await t.db
      .select({ userId: notificationRecipients.userId, entity: notifications.aboutEntity })
      .from(notificationRecipients)
      .innerJoin(notifications, eq(notifications.id, notificationRecipients.notificationId))
      .where(eq(notifications.aboutId, sessionId));
    expect(told).toEqual([{ userId: family.userId, entity: "session" }]);
    // Publishing twice: 409.
    expect((await call(t, "PUT", `/api/v1/session/${sessionId}/publish`)).status).toBe(409);
  });

  it("regenerates slots keeping the booked ones, and refuses to remove a booked slot", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const { sessionId, slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "09:00", end: "10:00" }],
    });
    const first = slots[0];
    if (!first) throw new Error("no slot");
    await ok(await book(t, first.id, { studentId: family.studentId }), 201);
    // Longer slots would drop the booked 09:00-09:15 one: refused, nothing changes.
    const refused = await call(t, "PUT", `/api/v1/session/${sessionId}/slots`, { slotMinutes: 20 });
    expect(refused.status).toBe(409);
    expect((await problem(refused)).detail).toMatch(/Booked slots would be removed/);
    // A break after each keeps 09:00 (and drops 09:15 and 09:45, free).
    const changed = await ok<{ kept: number; removed: number; created: number; total: number }>(
      await call(t, "PUT", `/api/v1/session/${sessionId}/slots`, { breakMinutes: 15 }),
    );
    expect(changed).toMatchObject({ kept: 2, removed: 2, created: 0, total: 2 });
    const [kept] = await t.db.select().from(timeSlots).where(eq(timeSlots.id, first.id));
    expect(kept?.booked).toBe(1);
  });
});

describe("the clocks change", () => {
  it("a session day on the day the clocks go forward (Madrid) or back (New York) holds the real time", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    await t.db.update(schools).set({ timeZone: "Europe/Madrid" }).where(eq(schools.id, NORTH));
    try {
      // 2027-03-28: at 02:00 Madrid's clocks jump to 03:00. A 01:00-04:00 window holds two hours.
      t.clock.current = new Date("2027-03-20T10:00:00.000Z");
      const spring = await setUp(t, {
        studentIds: [family.studentId],
        date: "2027-03-28",
        windows: [{ start: "01:00", end: "04:00" }],
        session: { slotMinutes: 30 },
      });
      expect(spring.slots.map((s) => [s.start, s.startsAt])).toEqual([
        ["01:00", "2027-03-28T00:00:00.000Z"],
        ["01:30", "2027-03-28T00:30:00.000Z"],
        ["03:00", "2027-03-28T01:00:00.000Z"],
        ["03:30", "2027-03-28T01:30:00.000Z"],
      ]);
      // The days around it: 09:00 is 08:00Z in winter and 07:00Z in summer.
      const around = await setUp(t, {
        studentIds: [family.studentId],
        date: "2027-03-26",
        windows: [{ start: "09:00", end: "09:30" }],
        session: { slotMinutes: 30 },
      });
      expect(around.slots.map((s) => s.startsAt)).toEqual(["2027-03-26T08:00:00.000Z"]);
      const after = await setUp(t, {
        studentIds: [family.studentId],
        date: "2027-03-29",
        windows: [{ start: "09:00", end: "09:30" }],
        session: { slotMinutes: 30 },
      });
      expect(after.slots.map((s) => s.startsAt)).toEqual(["2027-03-29T07:00:00.000Z"]);

      // New York, 2026-11-01: at 02:00 the clocks go back to 01:00. 00:30-02:30 holds three hours.
      await t.db.update(schools).set({ timeZone: "America/New_York" }).where(eq(schools.id, NORTH));
      t.clock.current = new Date("2026-10-20T10:00:00.000Z");
      const fall = await setUp(t, {
        studentIds: [family.studentId],
        date: "2026-11-01",
        windows: [{ start: "00:30", end: "02:30" }],
        session: { slotMinutes: 30 },
      });
      expect(fall.slots.map((s) => [s.start, s.startsAt])).toEqual([
        ["00:30", "2026-11-01T04:30:00.000Z"],
        ["01:00", "2026-11-01T05:00:00.000Z"],
        ["01:30", "2026-11-01T05:30:00.000Z"],
        ["01:00", "2026-11-01T06:00:00.000Z"],
        ["01:30", "2026-11-01T06:30:00.000Z"],
        ["02:00", "2026-11-01T07:00:00.000Z"],
      ]);
    } finally {
      await t.db.update(schools).set({ timeZone: "America/Mexico_City" }).where(eq(schools.id, NORTH));
    }
  });
});

describe("booking", () => {
  it("ten families racing for the last place of a slot: exactly one booking", async () => {
    const t = makeTestApp();
    const families = await Promise.all(Array.from({ length: 10 }, () => makeFamily(t, NORTH)));
    const { slots } = await setUp(t, {
      studentIds: families.map((f) => f.studentId),
      windows: [{ start: "10:00", end: "10:15" }],
    });
    const [only] = slots;
    if (!only) throw new Error("no slot");
    const answers = await Promise.all(
      families.map(async (f) => book(t, only.id, { studentId: f.studentId }, await parentToken(t, f))),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(422)]);
    for (const r of answers.filter((a) => a.status === 422)) expect((await problem(r)).detail).toMatch(/full/);
    const rows = await t.db.select().from(appointments).where(eq(appointments.slotId, only.id));
    expect(rows).toHaveLength(1);
    const [slot] = await t.db.select().from(timeSlots).where(eq(timeSlots.id, only.id));
    expect(slot).toMatchObject({ booked: 1, capacity: 1 });
  });

  it("one booking per family per session, also when both guardians book at once", async () => {
    const t = makeTestApp();
    const a = await makeFamily(t, NORTH);
    const b = await makeFamily(t, NORTH, { studentId: a.studentId });
    const { slots } = await setUp(t, { studentIds: [a.studentId], windows: [{ start: "10:00", end: "11:00" }] });
    const tokens = [await parentToken(t, a), await parentToken(t, b)];
    const answers = await Promise.all(
      slots.slice(0, 4).map((s, i) => book(t, s.id, { studentId: a.studentId }, tokens[i % 2])),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 422, 422, 422]);
    for (const r of answers.filter((x) => x.status === 422))
      expect((await problem(r)).detail).toMatch(/holds 1 booking/);
    const live = await t.db.select().from(appointments).where(eq(appointments.studentId, a.studentId));
    expect(live).toHaveLength(1);
    // Every place but the booked one is free again.
    const booked = await t.db
      .select({ booked: timeSlots.booked })
      .from(timeSlots)
      .where(
        eq(
          timeSlots.dayId,
          (
            await t.db
              .select()
              .from(timeSlots)
              .where(eq(timeSlots.id, slots[0]?.id ?? 0))
          )[0]?.dayId ?? 0,
        ),
      );
    expect(booked.reduce((n, s) => n + s.booked, 0)).toBe(1);
  });

  it("a visit of consecutive slots with two teachers: all booked, or none; the task copy completed by it", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const rival = await makeFamily(t, NORTH);
    const [teacherA, teacherB] = await twoTeachers(t);
    const { taskId, slots } = await setUp(t, {
      studentIds: [family.studentId, rival.studentId],
      windows: [
        { start: "16:00", end: "16:30", teacherId: teacherA },
        { start: "16:00", end: "16:45", teacherId: teacherB },
      ],
    });
    const at = (teacher: number, start: string) =>
      slots.find((s) => s.teacherId === teacher && s.start === start)?.id ?? 0;
    // The rival takes teacher B's 16:15: a visit A 16:00 + B 16:15 is refused whole.
    await ok(await book(t, at(teacherB, "16:15"), { studentId: rival.studentId }, await parentToken(t, rival)), 201);
    const token = await parentToken(t, family);
    const refused = await book(
      t,
      at(teacherA, "16:00"),
      { studentId: family.studentId, alsoSlotIds: [at(teacherB, "16:15")] },
      token,
    );
    expect(refused.status).toBe(422);
    expect((await t.db.select().from(appointments).where(eq(appointments.studentId, family.studentId))).length).toBe(0);
    expect(
      (
        await t.db
          .select()
          .from(timeSlots)
          .where(eq(timeSlots.id, at(teacherA, "16:00")))
      )[0]?.booked,
    ).toBe(0);
    // Not consecutive (an hour apart would be), the same teacher twice: refused.
    const same = await book(
      t,
      at(teacherA, "16:00"),
      { studentId: family.studentId, alsoSlotIds: [at(teacherA, "16:15")] },
      token,
    );
    expect(same.status).toBe(422);
    // A 16:00 then B 16:30: both.
    const visit = await ok<Booking>(
      await book(
        t,
        at(teacherA, "16:00"),
        { studentId: family.studentId, alsoSlotIds: [at(teacherB, "16:30")] },
        token,
      ),
      201,
    );
    expect(visit.appointments.map((a) => a.slotId)).toEqual([at(teacherA, "16:00"), at(teacherB, "16:30")]);
    const [copy] = await t.db.select().from(taskRecipients).where(eq(taskRecipients.studentId, family.studentId));
    expect(copy).toMatchObject({ taskId, status: "completed", completedBy: family.userId, appointmentId: visit.id });
  });

  it("books in two D1 round trips, the capacity check inside the write", async () => {
    const { t, measure } = countingTestApp();
    const family = await makeFamily(t, NORTH);
    const { slots } = await setUp(t, { studentIds: [family.studentId], windows: [{ start: "10:00", end: "10:15" }] });
    const token = await parentToken(t, family);
    const { res, calls } = await measure(() => book(t, slots[0]?.id ?? 0, { studentId: family.studentId }, token));
    expect(res.status, await res.clone().text()).toBe(201);
    expect(calls).toBe(2);
  });

  it("cancels before the cut-off (places given back, the task copy reverted); after it a family gets 422, staff not", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const { slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "10:00", end: "10:30" }],
      session: { cancelHours: 48 },
    });
    const token = await parentToken(t, family);
    const booked = await ok<Booking>(await book(t, slots[0]?.id ?? 0, { studentId: family.studentId }, token), 201);
    const cancelled = await ok<Booking>(
      await call(t, "PUT", `/api/v1/time-slot/appointment/${booked.id}/cancel`, undefined, token),
    );
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.ics).toMatch(/STATUS:CANCELLED/);
    expect(
      (
        await t.db
          .select()
          .from(timeSlots)
          .where(eq(timeSlots.id, slots[0]?.id ?? 0))
      )[0]?.booked,
    ).toBe(0);
    const [copy] = await t.db.select().from(taskRecipients).where(eq(taskRecipients.studentId, family.studentId));
    expect(copy).toMatchObject({ status: "viewed", appointmentId: null });
    expect((await call(t, "PUT", `/api/v1/time-slot/appointment/${booked.id}/cancel`, undefined, token)).status).toBe(
      409,
    );
    // Booked again, then within 48 hours of the slot: too late for the family, not for the school.
    const again = await ok<Booking>(await book(t, slots[1]?.id ?? 0, { studentId: family.studentId }, token), 201);
    t.clock.current = new Date("2026-12-01T12:00:00.000Z");
    const late = await call(
      t,
      "PUT",
      `/api/v1/time-slot/appointment/${again.id}/cancel`,
      undefined,
      await parentToken(t, family),
    );
    expect(late.status).toBe(422);
    expect((await problem(late)).detail).toMatch(/Too late to cancel/);
    expect((await call(t, "PUT", `/api/v1/time-slot/appointment/${again.id}/cancel`)).status).toBe(200);
  });
});

describe("who sees a session", () => {
  it("the families its task reached, their delegate and the teachers with slots in it; another family or teacher gets 404", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH);
    const grandma = await makeFamily(t, NORTH);
    await makeDelegate(t, NORTH, family.parentId, grandma.userId);
    const staff = await t.db
      .select({ id: teachers.id, userId: teachers.userId })
      .from(teachers)
      .where(eq(teachers.schoolId, NORTH))
      .limit(2);
    const [meets, elsewhere] = staff;
    if (!meets?.userId || !elsewhere?.userId) throw new Error("the demo school has two teachers with accounts");
    const { sessionId, slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "10:00", end: "10:30", teacherId: meets.id }],
    });
    const teacherToken = (userId: number) => t.token(userId, { [NORTH]: ["appointment.read"] });
    const sees = async (token: string) => {
      const one = await call(t, "GET", `/api/v1/session/${sessionId}`, undefined, token);
      const list = await readJson<{ data: { id: number }[] }>(
        await call(t, "GET", "/api/v1/session?pageSize=100", undefined, token),
      );
      const days = await readJson<{ data: unknown[] }>(
        await call(t, "GET", `/api/v1/session-day?sessionId=${sessionId}`, undefined, token),
      );
      const slotList = await readJson<{ data: unknown[] }>(
        await call(t, "GET", `/api/v1/time-slot?sessionId=${sessionId}&pageSize=100`, undefined, token),
      );
      const slot = await call(t, "GET", `/api/v1/time-slot/${slots[0]?.id}`, undefined, token);
      return {
        session: one.status,
        listed: list.data.some((x) => x.id === sessionId),
        days: days.data.length,
        slots: slotList.data.length,
        slot: slot.status,
      };
    };
    const visible = { session: 200, listed: true, days: 1, slots: slots.length, slot: 200 };
    const hidden = { session: 404, listed: false, days: 0, slots: 0, slot: 404 };
    expect(await sees(await parentToken(t, family)), "the family").toEqual(visible);
    expect(await sees(await parentToken(t, grandma)), "the parent's delegate").toEqual(visible);
    expect(await sees(await teacherToken(meets.userId)), "the teacher who meets them").toEqual(visible);
    expect(await sees(await parentToken(t, other)), "another family").toEqual(hidden);
    expect(await sees(await teacherToken(elsewhere.userId)), "another teacher").toEqual(hidden);
  });
});

describe("the other guardian", () => {
  it("is told when one guardian books and when one cancels; the one who acted is not", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const a = await makeFamily(t, NORTH);
    const b = await makeFamily(t, NORTH, { studentId: a.studentId });
    const { slots } = await setUp(t, { studentIds: [a.studentId], windows: [{ start: "10:00", end: "10:30" }] });
    const { notificationRecipients, notifications } = await import("../src/db/schema/notification");
    const told = async (title: string) =>
      (
        await t.db
          .select({ userId: notificationRecipients.userId, title: notifications.title })
          .from(notificationRecipients)
          .innerJoin(notifications, eq(notifications.id, notificationRecipients.notificationId))
          .where(eq(notifications.aboutEntity, "appointment"))
      )
        .filter((r) => (r.title as { en: string }).en === title)
        .map((r) => r.userId);
    const booked = await ok<Booking>(
      await book(t, slots[0]?.id ?? 0, { studentId: a.studentId }, await parentToken(t, a)),
      201,
    );
    await push.drain(t.deps);
    expect(await told("Appointment booked")).toEqual([b.userId]);
    await ok(
      await call(t, "PUT", `/api/v1/time-slot/appointment/${booked.id}/cancel`, undefined, await parentToken(t, b)),
    );
    await push.drain(t.deps);
    expect(await told("Appointment cancelled")).toEqual([a.userId]);
  });
});

describe("the iCalendar invite", () => {
  /** Unfolds and splits an iCalendar text into its content lines (RFC 5545 3.1). */
  const lines = (ics: string) => ics.replace(/\r\n /g, "").split("\r\n").filter(Boolean);
  /** A TEXT value unescaped in one pass (RFC 5545 3.3.11). */
  const textOf = (v: string) => v.replace(/\\([\\;,nN])/g, (_, ch: string) => (ch === "n" || ch === "N" ? "\n" : ch));

  it("parses back: CRLF, folded at 75 octets, escaped text, a VTIMEZONE with its changes, local times with TZID, DTSTAMP in UTC", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    await t.db.update(schools).set({ timeZone: "Europe/Madrid" }).where(eq(schools.id, NORTH));
    try {
      t.clock.current = new Date("2027-03-20T10:00:00.000Z");
      const title = 'Reunión de padres, 3º; tutoría, evaluación y "proyecto lector" del segundo trimestre (aula 12)';
      const { slots, sessionId } = await setUp(t, {
        studentIds: [family.studentId],
        date: "2027-03-29",
        windows: [{ start: "09:00", end: "09:30" }],
        session: { slotMinutes: 30, title, location: "Aula 12, edificio B" },
      });
      expect(sessionId).toBeGreaterThan(0);
      const booked = await ok<Booking>(await book(t, slots[0]?.id ?? 0, { studentId: family.studentId }), 201);
      const ics = booked.ics;
      expect(ics.endsWith("\r\n")).toBe(true);
      expect(ics.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
      for (const raw of ics.split("\r\n")) expect(new TextEncoder().encode(raw).length).toBeLessThanOrEqual(75);
      expect(ics).toMatch(/\r\n /); // the long summary was folded
      const parsed = lines(ics);
      expect(parsed[0]).toBe("BEGIN:VCALENDAR");
      expect(parsed).toContain("VERSION:2.0");
      expect(parsed).toContain("TZID:Europe/Madrid");
      // The zone's changes: into summer time on 2027-03-28 at 02:00 (+0100 -> +0200), back on 2027-10-31 at 03:00.
      const daylight = parsed.indexOf("DTSTART:20270328T020000");
      expect(daylight).toBeGreaterThan(0);
      expect(parsed.slice(daylight - 1, daylight + 3)).toEqual([
        "BEGIN:DAYLIGHT",
        "DTSTART:20270328T020000",
        "TZOFFSETFROM:+0100",
        "TZOFFSETTO:+0200",
      ]);
      expect(parsed).toContain("DTSTART:20271031T030000");
      expect(parsed).toContain("DTSTART;TZID=Europe/Madrid:20270329T090000");
      expect(parsed).toContain("DTEND;TZID=Europe/Madrid:20270329T093000");
      expect(parsed).toContain("DTSTAMP:20270320T100000Z");
      const summary = parsed.find((l) => l.startsWith("SUMMARY:"));
      expect(summary).toContain("\\;");
      expect(summary).toContain("\\,");
      expect(textOf(summary?.slice("SUMMARY:".length) ?? "")).toBe(title);
      expect(textOf(parsed.find((l) => l.startsWith("LOCATION:"))?.slice(9) ?? "")).toBe("Aula 12, edificio B");
      expect(parsed.filter((l) => l === "BEGIN:VEVENT")).toHaveLength(1);
      expect(parsed.at(-1)).toBe("END:VCALENDAR");
    } finally {
      await t.db.update(schools).set({ timeZone: "America/Mexico_City" }).where(eq(schools.id, NORTH));
    }
  });
});

describe("bad input", () => {
  it("refuses another school's session, day or slot (404), bad windows (400), an unpublished session (409), the past and holidays (422)", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const superAdmin = await t.token(1, {}, true);
    // Southside's session, day and slot.
    const southTask = await ok<{ id: number }>(
      await t.request("/api/v1/pending", {
        method: "POST",
        token: superAdmin,
        school: SOUTH,
        body: { title: "S", userIds: [5] },
      }),
      201,
    );
    const southSession = await ok<{ id: number }>(
      await t.request("/api/v1/session", {
        method: "POST",
        token: superAdmin,
        school: SOUTH,
        body: { taskId: southTask.id, slotMinutes: 15 },
      }),
      201,
    );
    const southDay = await ok<{ id: number }>(
      await t.request("/api/v1/session-day", {
        method: "POST",
        token: superAdmin,
        school: SOUTH,
        body: { sessionId: southSession.id, date: DAY, windows: [{ start: "09:00", end: "09:15" }] },
      }),
      201,
    );
    expect(
      (
        await call(t, "POST", "/api/v1/session-day", {
          sessionId: southSession.id,
          date: DAY,
          windows: [{ start: "09:00", end: "10:00" }],
        })
      ).status,
    ).toBe(404);
    expect(
      (await call(t, "POST", "/api/v1/time-slot", { sessionDayId: southDay.id, start: "11:00", end: "11:15" })).status,
    ).toBe(404);
    const southSlot = await ok<{ id: number }>(
      await t.request("/api/v1/time-slot", {
        method: "POST",
        token: superAdmin,
        school: SOUTH,
        body: { sessionDayId: southDay.id, start: "11:00", end: "11:15" },
      }),
      201,
    );
    expect((await book(t, southSlot.id, { studentId: family.studentId })).status).toBe(404);
    expect((await call(t, "PUT", `/api/v1/session/${southSession.id}/slots`, {})).status).toBe(404);

    // Windows: one that ends before it starts, overlapping ones of a teacher; slots of zero minutes.
    const { sessionId, slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "09:00", end: "09:30" }],
      publish: false,
    });
    const backwards = await call(t, "POST", "/api/v1/session-day", {
      sessionId,
      date: "2026-12-03",
      windows: [{ start: "10:00", end: "09:00" }],
    });
    expect(backwards.status).toBe(400);
    expect((await problem(backwards)).errors?.map((e) => e.path)).toEqual(["windows.0.end"]);
    const [teacher] = await twoTeachers(t);
    const overlap = await call(t, "POST", "/api/v1/session-day", {
      sessionId,
      date: "2026-12-03",
      windows: [
        { start: "09:00", end: "10:00", teacherId: teacher },
        { start: "09:30", end: "11:00", teacherId: teacher },
      ],
    });
    expect(overlap.status).toBe(400);
    expect((await problem(overlap)).detail).toMatch(/overlap/);
    expect((await call(t, "PUT", `/api/v1/session/${sessionId}/slots`, { slotMinutes: 0 })).status).toBe(400);
    expect((await call(t, "POST", "/api/v1/session", { taskId: 1, slotMinutes: 0 })).status).toBe(400);

    // An unpublished session's slot: 409.
    const unpublished = await book(t, slots[0]?.id ?? 0, { studentId: family.studentId });
    expect(unpublished.status).toBe(409);

    // A past day (422), a holiday (422), a day in the past for a slot (422).
    expect(
      (
        await call(t, "POST", "/api/v1/session-day", {
          sessionId,
          date: "2026-11-20",
          windows: [{ start: "09:00", end: "10:00" }],
        })
      ).status,
    ).toBe(422);
    const [config] = await t.db
      .select()
      .from(schoolConfigurations)
      .where(eq(schoolConfigurations.schoolId, NORTH))
      .limit(1);
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: config?.id ?? 0,
      startHolidays: "2026-12-07T06:00:00.000Z",
      endHolidays: "2026-12-08T06:00:00.000Z",
    });
    const holiday = await call(t, "POST", "/api/v1/session-day", {
      sessionId,
      date: "2026-12-07",
      windows: [{ start: "09:00", end: "10:00" }],
    });
    expect(holiday.status).toBe(422);
    expect((await problem(holiday)).detail).toMatch(/holiday/);
  });

  it("a slot in the past (422), a child of another family (404), another family's appointment (404), a child the task was not sent to (422)", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH);
    const uninvited = await makeFamily(t, NORTH);
    const { slots } = await setUp(t, {
      studentIds: [family.studentId, other.studentId],
      windows: [{ start: "09:00", end: "10:00" }],
    });
    const token = await parentToken(t, family);
    expect((await book(t, slots[0]?.id ?? 0, { studentId: other.studentId }, token)).status).toBe(404);
    const theirs = await ok<Booking>(
      await book(t, slots[0]?.id ?? 0, { studentId: other.studentId }, await parentToken(t, other)),
      201,
    );
    expect((await call(t, "PUT", `/api/v1/time-slot/appointment/${theirs.id}/cancel`, undefined, token)).status).toBe(
      404,
    );
    const notSent = await book(
      t,
      slots[1]?.id ?? 0,
      { studentId: uninvited.studentId },
      await parentToken(t, uninvited),
    );
    expect(notSent.status).toBe(422);
    t.clock.current = new Date("2026-12-02T15:30:00.000Z"); // 09:30 at the school
    const past = await book(t, slots[0]?.id ?? 0, { studentId: family.studentId }, await parentToken(t, family));
    expect(past.status).toBe(422);
    expect((await problem(past)).detail).toMatch(/past/);
  });

  it("lists as available=true only the slots bookable now: places left, and not started", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const { sessionId, slots } = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "09:00", end: "10:00" }],
    });
    const listed = async (available: "true" | "false") => {
      const res = await t.request(`/api/v1/time-slot?sessionId=${sessionId}&available=${available}&pageSize=100`, {
        token: await parentToken(t, family),
        school: NORTH,
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await readJson<{ data: { id: number }[] }>(res)).data.map((s) => s.id);
    };
    const [first, second] = slots;
    if (!first || !second) throw new Error("no slots");
    expect(await listed("true")).toEqual(expect.arrayContaining([first.id, second.id]));
    // The first slot has started (09:00 at the school): it is not bookable, so not available.
    t.clock.current = new Date(`${DAY}T15:05:00.000Z`);
    expect(await listed("true")).not.toContain(first.id);
    expect(await listed("true")).toContain(second.id);
    expect(await listed("false")).toContain(first.id);
    const refused = await book(t, first.id, { studentId: family.studentId }, await parentToken(t, family));
    expect(refused.status).toBe(422);
  });

  it("deletes a held set-up by its task, and refuses a task already sent", async () => {
    const t = makeTestApp();
    const family = await makeFamily(t, NORTH);
    const held = await setUp(t, {
      studentIds: [family.studentId],
      windows: [{ start: "09:00", end: "09:30" }],
      publish: false,
    });
    expect((await call(t, "POST", "/api/v1/session/delete-pending", { taskId: held.taskId })).status).toBe(204);
    expect((await call(t, "GET", `/api/v1/session/${held.sessionId}`)).status).toBe(404);
    expect((await call(t, "GET", `/api/v1/pending/${held.taskId}`)).status).toBe(404);
    const sent = await setUp(t, { studentIds: [family.studentId], windows: [{ start: "09:00", end: "09:30" }] });
    expect((await call(t, "POST", "/api/v1/session/delete-pending", { taskId: sent.taskId })).status).toBe(409);
  });
});
