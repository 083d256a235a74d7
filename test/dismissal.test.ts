/**
 * Dismissal: the day's board (plan and status per child, for the school or for one's own children),
 * "I'm here" and the call list, and releases at the gate to a collector the day's effective plan
 * names. Against real D1; dates follow the test clock (Monday 23 November 2026, Mexico City).
 */
import { eq } from "drizzle-orm";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { dismissalReleases } from "../src/db/schema/dismissal";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { notifications } from "../src/db/schema/notification";
import { guardians, students } from "../src/db/schema/student";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { addRiderDays, makePermission } from "./fixtures/afternoon";
import { makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, problem } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const D = "/api/v1/dismissal";
const { t, measure } = countingTestApp();
// Monday 23 November 2026, 09:00 in Mexico City; elementary's dismissal is at 14:30 on Mondays.
const TODAY = "2026-11-23";
t.clock.current = new Date("2026-11-23T15:00:00.000Z");
/** 14:40 in Mexico City: inside elementary's dismissal window. */
const AT_DISMISSAL = new Date("2026-11-23T20:40:00.000Z");

type Line = {
  studentId: number;
  way: string;
  status: string;
  collectors: { kind: string; id: number; name: string }[];
  arrival: { id: number; status: string } | null;
  release: { id: number; collector: { kind: string; id: number; name: string }; method: string } | null;
};
type Board = {
  date: string;
  schoolDay: boolean;
  holiday: boolean;
  seq: number;
  reunification: { id: number; reason: string } | null;
  students: Line[];
};

const staff = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const gate = () => t.token(DEMO.northAdmin.id, { [NORTH]: grantsOf("gate").map((p) => p.name) });
const parent = (f: { userId: number }, school = NORTH) =>
  t.token(f.userId, { [school]: grantsOf("parent").map((p) => p.name) });

async function board(token: string, date = TODAY, school = NORTH) {
  const res = await t.request(`${D}/board?date=${date}`, { token, school });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<Board>(res);
}
const lineOf = (b: Board, studentId: number) => b.students.find((s) => s.studentId === studentId);

describe("the board", () => {
  it("shows staff every student with their plan and status, and a parent only their children", async () => {
    const a = await makeFamily(t, NORTH);
    const b = await makeFamily(t, NORTH);
    const all = await board(await staff());
    expect(all).toMatchObject({ date: TODAY, schoolDay: true, holiday: false, seq: 0 });
    const line = lineOf(all, a.studentId);
    expect(line).toMatchObject({ way: "family", status: "waiting", arrival: null, release: null });
    expect(line?.collectors).toEqual([expect.objectContaining({ kind: "guardian", id: a.parentId })]);
    expect(lineOf(all, b.studentId)).toBeDefined();

    const mine = await board(await parent(a));
    expect(mine.students.map((s) => s.studentId)).toEqual([a.studentId]);
    // The gate role reads the school's board.
    expect(lineOf(await board(await gate()), b.studentId)).toBeDefined();
  });

  it("shows a delegate in their window the parent's children, and nothing outside it", async () => {
    const a = await makeFamily(t, NORTH);
    const helper = await makeFamily(t, NORTH);
    await makeDelegate(t, NORTH, a.parentId, helper.userId);
    const seen = await board(await parent(helper));
    expect(seen.students.map((s) => s.studentId).sort()).toEqual([a.studentId, helper.studentId].sort());
    // The delegation starts today: the day before, the board is the helper's own child only.
    t.clock.advance(-86400);
    try {
      const before = await board(await parent(helper), "2026-11-20");
      expect(before.students.map((s) => s.studentId)).toEqual([helper.studentId]);
    } finally {
      t.clock.advance(86400);
    }
  });

  it("names only the collectors today's plan allows: no restricted guardian, the pickup's collector", async () => {
    const a = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH, { studentId: a.studentId });
    await t.db.update(guardians).set({ restricted: true }).where(eq(guardians.parentId, other.parentId));
    expect(lineOf(await board(await staff()), a.studentId)?.collectors.map((c) => c.id)).toEqual([a.parentId]);

    const kid = await makeFamily(t, NORTH);
    const [aunt] = await t.db
      .insert(trustedPeople)
      .values({
        schoolId: NORTH,
        studentId: kid.studentId,
        name: "Tía Carmen",
        relationship: "aunt",
        phone: "+525512345678",
        status: "approved",
        decidedAt: "2026-11-01T00:00:00.000Z",
      })
      .returning({ id: trustedPeople.id });
    await makePermission(t, {
      schoolId: NORTH,
      studentId: kid.studentId,
      date: TODAY,
      kind: "auto_pickup",
      status: "confirmed",
      trustedPersonId: aunt?.id ?? null,
    });
    const line = lineOf(await board(await staff()), kid.studentId);
    expect(line?.way).toBe("auto_pickup");
    expect(line?.collectors).toEqual([{ kind: "trusted", id: aunt?.id, name: "Tía Carmen", relationship: "aunt" }]);
  });

  it("marks absences, and days without school", async () => {
    const a = await makeFamily(t, NORTH);
    await makePermission(t, {
      schoolId: NORTH,
      studentId: a.studentId,
      date: TODAY,
      kind: "absence",
      status: "confirmed",
    });
    const line = lineOf(await board(await staff()), a.studentId);
    expect(line).toMatchObject({ way: "absence", status: "absent", collectors: [] });
    // Saturday: no school for anyone.
    const saturday = await board(await staff(), "2026-11-28");
    expect(saturday.schoolDay).toBe(false);
    expect(lineOf(saturday, a.studentId)?.status).toBe("no-school");
    // A holiday.
    await t.db.insert(schoolHolidayCycles).values({
      schoolId: NORTH,
      schoolConfigurationId: 1,
      startHolidays: "2026-12-01T06:00:00.000Z",
      endHolidays: "2026-12-02T06:00:00.000Z",
    });
    const holiday = await board(await staff(), "2026-12-01");
    expect(holiday).toMatchObject({ schoolDay: false, holiday: true });
  });

  it("is one D1 round trip, and another school's board has none of ours", async () => {
    const a = await makeFamily(t, NORTH);
    const token = await parent(a);
    await board(token); // the school's zone, kept per isolate
    const { res, calls } = await measure(() => t.request(`${D}/board?date=${TODAY}`, { token, school: NORTH }));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
    const { calls: staffCalls } = await measure(async () =>
      t.request(`${D}/board?date=${TODAY}`, { token: await staff(), school: NORTH }),
    );
    expect(staffCalls).toBe(1);
    const south = await board(await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" }), TODAY, SOUTH);
    expect(lineOf(south, a.studentId)).toBeUndefined();
    // A parent of another school sees nothing of North's.
    const res2 = await t.request(`${D}/board?date=${TODAY}`, { token: await parent(a, SOUTH), school: SOUTH });
    expect(((await res2.json()) as Board).students).toEqual([]);
  });
});

type Arrived = { date: string; arrivals: { id: number; studentId: number; status: string; place: number | null }[] };

/** Runs `fn` with the clock at `at`, then puts it back. */
async function at<T>(when: Date, fn: () => Promise<T>): Promise<T> {
  const before = t.clock.current;
  t.clock.current = when;
  try {
    return await fn();
  } finally {
    t.clock.current = before;
  }
}

/** A refusal's problem with its failures. */
const refused = async (res: Response) =>
  (await problem(res)) as Awaited<ReturnType<typeof problem>> & { failures: Record<string, unknown>[] };

const arrive = async (f: { userId: number }, body: Record<string, unknown> = {}) =>
  t.request(`${D}/arrival`, { method: "POST", token: await parent(f), school: NORTH, body });

describe("I'm here and the call list", () => {
  it("is refused outside the dismissal window, and answers the place in the line within it", async () => {
    const a = await makeFamily(t, NORTH);
    const early = await arrive(a);
    expect(early.status).toBe(422);
    const body = await refused(early);
    expect(body.failures).toEqual([expect.objectContaining({ code: "too-early", studentId: a.studentId })]);
    expect(body.errors).toEqual([expect.objectContaining({ path: "studentIds.0" })]);
    // 19:00 in Mexico City: an hour after elementary's after-school program ended (17:00) and more.
    const late = await at(new Date("2026-11-24T01:00:00.000Z"), () => arrive(a));
    expect((await refused(late)).failures).toEqual([expect.objectContaining({ code: "too-late" })]);

    await at(AT_DISMISSAL, async () => {
      const first = await arrive(a);
      expect(first.status, await first.clone().text()).toBe(201);
      const mine = await readJson<Arrived>(first);
      expect(mine.date).toBe(TODAY);
      const place = mine.arrivals[0]?.place ?? 0;
      expect(mine.arrivals).toEqual([expect.objectContaining({ studentId: a.studentId, status: "waiting" })]);
      const b = await makeFamily(t, NORTH);
      const second = await readJson<Arrived>(await arrive(b));
      expect(second.arrivals[0]?.place).toBe(place + 1);
      // Saying it again changes nothing: the same arrival, the same place.
      const again = await readJson<Arrived>(await arrive(a));
      expect(again.arrivals).toEqual(mine.arrivals);
      const line = lineOf(await board(await staff()), a.studentId);
      expect(line?.status).toBe("arrived");
      expect(line?.arrival?.id).toBe(mine.arrivals[0]?.id);
    });
  });

  it("refuses children who are not at school for a collector: absent, restricted, another family's (404)", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      await makePermission(t, {
        schoolId: NORTH,
        studentId: a.studentId,
        date: TODAY,
        kind: "absence",
        status: "confirmed",
      });
      expect((await refused(await arrive(a))).failures).toEqual([expect.objectContaining({ code: "absent" })]);
      const r = await makeFamily(t, NORTH);
      await t.db.update(guardians).set({ restricted: true }).where(eq(guardians.parentId, r.parentId));
      expect((await refused(await arrive(r))).failures).toEqual([expect.objectContaining({ code: "may-not-collect" })]);
      const other = await makeFamily(t, NORTH);
      const res = await arrive(a, { studentIds: [other.studentId] });
      expect(res.status).toBe(404);
    });
  });

  it("is refused beyond the school's radius, counting the device's accuracy", async () => {
    const admin = await staff();
    const set = await t.request(`${D}/setting`, {
      method: "PUT",
      token: admin,
      school: NORTH,
      body: { latitude: 19.4326, longitude: -99.1332, radiusMeters: 300 },
    });
    expect(set.status, await set.clone().text()).toBe(204);
    expect(await readJson(await t.request(`${D}/setting`, { token: admin, school: NORTH }))).toEqual({
      latitude: 19.4326,
      longitude: -99.1332,
      radiusMeters: 300,
    });
    // The gate role may read it, not change it.
    const byGate = await t.request(`${D}/setting`, {
      method: "PUT",
      token: await gate(),
      school: NORTH,
      body: { latitude: 1, longitude: 1, radiusMeters: 50 },
    });
    expect(byGate.status).toBe(403);
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      // About 1.1 km north.
      const far = await arrive(a, { position: { lat: 19.4426, lon: -99.1332, accuracy: 10 } });
      expect(far.status).toBe(422);
      const why = await refused(far);
      expect(why.failures).toEqual([expect.objectContaining({ code: "too-far", radiusMeters: 300 })]);
      expect(why.errors).toEqual([expect.objectContaining({ path: "position" })]);
      const near = await arrive(a, { position: { lat: 19.4336, lon: -99.1332, accuracy: 10 } });
      expect(near.status, await near.clone().text()).toBe(201);
    });
  });

  it("gives staff the call list in arrival order; calling moves the child to called, once", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const b = await makeFamily(t, NORTH);
      const first = (await readJson<Arrived>(await arrive(a))).arrivals[0];
      const second = (await readJson<Arrived>(await arrive(b))).arrivals[0];
      const token = await gate();
      const list = await t.request(`${D}/arrival?date=${TODAY}&pageSize=100`, { token, school: NORTH });
      expect(list.status).toBe(200);
      const page = await readJson<{ data: { id: number; place: number | null; firstName: string }[] }>(list);
      const ids = page.data.map((r) => r.id);
      expect(ids.indexOf(first?.id ?? 0)).toBeLessThan(ids.indexOf(second?.id ?? 0));
      const seqBefore = (await board(token)).seq;
      const called = await t.request(`${D}/arrival/${first?.id}/call`, { method: "PATCH", token, school: NORTH });
      expect(called.status, await called.clone().text()).toBe(200);
      expect(await readJson(called)).toMatchObject({ id: first?.id, status: "called", studentId: a.studentId });
      const after = await board(token);
      expect(after.seq).toBe(seqBefore + 1);
      expect(lineOf(after, a.studentId)?.status).toBe("called");
      const again = await t.request(`${D}/arrival/${first?.id}/call`, { method: "PATCH", token, school: NORTH });
      expect(again.status).toBe(409);
      // The one behind moved up: the called child leaves the waiting line.
      const moved = await readJson<{ data: { id: number; place: number | null }[] }>(
        await t.request(`${D}/arrival?date=${TODAY}&pageSize=100`, { token, school: NORTH }),
      );
      expect(moved.data.find((r) => r.id === first?.id)?.place).toBeNull();
      // A parent may not call; another school's arrival is a 404.
      const byParent = await t.request(`${D}/arrival/${second?.id}/call`, {
        method: "PATCH",
        token: await parent(b),
        school: NORTH,
      });
      expect(byParent.status).toBe(403);
      const south = await t.request(`${D}/arrival/${second?.id}/call`, {
        method: "PATCH",
        token: await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" }),
        school: SOUTH,
      });
      expect(south.status).toBe(404);
    });
  });
});

type Released = {
  id: number;
  studentId: number;
  method: string;
  collector: { kind: string; id: number; name: string };
};

const release = async (body: Record<string, unknown>, token?: string) =>
  t.request(`${D}/release`, { method: "POST", token: token ?? (await gate()), school: NORTH, body });

/** An approved trusted person of a child. */
async function trusted(studentId: number, status: "approved" | "pending" = "approved") {
  const [row] = await t.db
    .insert(trustedPeople)
    .values({
      schoolId: NORTH,
      studentId,
      name: "Tía Carmen",
      relationship: "aunt",
      phone: "+525512345678",
      status,
      decidedAt: status === "approved" ? "2026-11-01T00:00:00.000Z" : null,
    })
    .returning({ id: trustedPeople.id });
  return row?.id ?? 0;
}

describe("release at the gate", () => {
  it("releases to a guardian today's plan names, once: a second release is a 409 naming the first", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const before = (await board(await gate())).seq;
      const res = await release({
        studentId: a.studentId,
        collector: { kind: "guardian", id: a.parentId },
        gate: "North gate",
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const made = await readJson<Released>(res);
      expect(made).toMatchObject({
        studentId: a.studentId,
        method: "list",
        collector: { kind: "guardian", id: a.parentId },
      });
      const after = await board(await gate());
      expect(after.seq).toBe(before + 1);
      expect(lineOf(after, a.studentId)).toMatchObject({
        status: "released",
        release: { id: made.id, method: "list" },
      });
      // The parent's own board shows it too.
      expect(lineOf(await board(await parent(a)), a.studentId)?.status).toBe("released");
      const again = await release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } });
      expect(again.status).toBe(409);
      expect((await problem(again)).detail).toContain(`(release ${made.id})`);
      // Listed for the office, by day and child, and in its Excel download.
      const listed = await t.request(`${D}/release?date=${TODAY}&studentId=${a.studentId}`, {
        token: await gate(),
        school: NORTH,
      });
      expect(listed.status).toBe(200);
      expect((await readJson<{ data: { id: number }[] }>(listed)).data.map((r) => r.id)).toEqual([made.id]);
      const file = await t.request(`${D}/release/export?date=${TODAY}`, { token: await gate(), school: NORTH });
      expect(file.status).toBe(200);
      expect(file.headers.get("content-type")).toContain("spreadsheetml");
      await file.arrayBuffer();
      // The guardians are told.
      const [told] = await t.db.select().from(notifications).where(eq(notifications.aboutId, made.id));
      expect(told).toMatchObject({ category: "afternoon", aboutEntity: "dismissal-release" });
    });
  });

  it("of concurrent releases of one child, exactly one succeeds", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const token = await gate();
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } }, token),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    });
  });

  it("refuses a restricted or unknown collector with a 422 naming why", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const other = await makeFamily(t, NORTH, { studentId: a.studentId });
      await t.db
        .update(guardians)
        .set({ restricted: true, restrictionUntil: "2026-12-31" })
        .where(eq(guardians.parentId, other.parentId));
      const restricted = await release({ studentId: a.studentId, collector: { kind: "guardian", id: other.parentId } });
      expect(restricted.status).toBe(422);
      const why = await refused(restricted);
      expect(why.failures).toEqual([expect.objectContaining({ code: "restricted" })]);
      expect(why.detail).toContain("restricted until 2026-12-31");
      const stranger = await makeFamily(t, NORTH);
      const unknown = await release({ studentId: a.studentId, collector: { kind: "guardian", id: stranger.parentId } });
      expect((await refused(unknown)).failures).toEqual([expect.objectContaining({ code: "unknown-collector" })]);
      const pending = await trusted(a.studentId, "pending");
      const notApproved = await release({ studentId: a.studentId, collector: { kind: "trusted", id: pending } });
      expect((await refused(notApproved)).failures).toEqual([expect.objectContaining({ code: "unknown-collector" })]);
      // An approved trusted person the plan does not name: not today.
      const aunt = await trusted(a.studentId);
      const notNamed = await release({ studentId: a.studentId, collector: { kind: "trusted", id: aunt } });
      expect((await refused(notNamed)).failures).toEqual([expect.objectContaining({ code: "not-in-plan" })]);
      // Nothing was written.
      expect(lineOf(await board(await gate()), a.studentId)?.status).toBe("waiting");
    });
  });

  it("follows the plan as it is now: a pickup withdrawn after the arrival is refused", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const aunt = await trusted(a.studentId);
      const pickup = await makePermission(t, {
        schoolId: NORTH,
        studentId: a.studentId,
        date: TODAY,
        kind: "auto_pickup",
        status: "confirmed",
        trustedPersonId: aunt,
      });
      expect((await arrive(a)).status).toBe(201);
      await t.db.update(exitPermissions).set({ status: "withdrawn" }).where(eq(exitPermissions.id, pickup.id));
      const res = await release({ studentId: a.studentId, collector: { kind: "trusted", id: aunt } });
      expect(res.status).toBe(422);
      expect((await refused(res)).failures).toEqual([expect.objectContaining({ code: "not-in-plan" })]);
    });
  });

  it("lets a school admin override the plan with a reason, never the gate role", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const aunt = await trusted(a.studentId);
      const body = {
        studentId: a.studentId,
        collector: { kind: "trusted", id: aunt },
        override: { reason: "Mother called" },
      };
      expect((await release(body)).status).toBe(403);
      const res = await release(body, await staff());
      expect(res.status, await res.clone().text()).toBe(201);
      expect(await readJson(res)).toMatchObject({ method: "override", reason: "Mother called" });
    });
  });

  it("refuses riders and absent children", async () => {
    await at(AT_DISMISSAL, async () => {
      const route = await makeRoute(t, NORTH, { riders: [["Rita", "Rider"]] });
      await addRiderDays(t, route.routeId);
      const [rider] = route.studentIds;
      await t.db
        .update(students)
        .set({ level: "elementary" })
        .where(eq(students.id, rider ?? 0));
      const g = await makeFamily(t, NORTH, { studentId: rider });
      const res = await release({ studentId: rider, collector: { kind: "guardian", id: g.parentId } });
      expect((await refused(res)).failures).toEqual([expect.objectContaining({ code: "rides-home" })]);
      const a = await makeFamily(t, NORTH);
      await makePermission(t, {
        schoolId: NORTH,
        studentId: a.studentId,
        date: TODAY,
        kind: "absence",
        status: "confirmed",
      });
      const absent = await release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } });
      expect((await refused(absent)).failures).toEqual([expect.objectContaining({ code: "absent" })]);
      // Neither a collector nor a pass, or both: 422.
      expect((await refused(await release({ studentId: a.studentId }))).failures).toEqual([
        expect.objectContaining({ code: "collector-required" }),
      ]);
      // Another school's child: 404.
      const south = await makeFamily(t, SOUTH);
      expect(
        (await release({ studentId: south.studentId, collector: { kind: "guardian", id: south.parentId } })).status,
      ).toBe(404);
    });
  });

  it("releases on a pickup pass that verifies, and refuses another child's pass", async () => {
    const a = await makeFamily(t, NORTH);
    const aunt = await trusted(a.studentId);
    const pickup = await makePermission(t, {
      schoolId: NORTH,
      studentId: a.studentId,
      date: TODAY,
      kind: "auto_pickup",
      status: "confirmed",
      trustedPersonId: aunt,
    });
    await at(AT_DISMISSAL, async () => {
      const shown = await t.request(`/api/v1/exit-permission/public?slug=${pickup.slug}`);
      expect(shown.status, await shown.clone().text()).toBe(200);
      const { token } = await readJson<{ token: string }>(shown);
      const b = await makeFamily(t, NORTH);
      const wrong = await release({ studentId: b.studentId, passToken: token });
      expect((await refused(wrong)).failures).toEqual([expect.objectContaining({ code: "pass-invalid" })]);
      const forged = await release({ studentId: a.studentId, passToken: `${token.slice(0, -4)}AAAA` });
      expect((await refused(forged)).failures).toEqual([expect.objectContaining({ code: "pass-invalid" })]);
      const res = await release({ studentId: a.studentId, passToken: token });
      expect(res.status, await res.clone().text()).toBe(201);
      expect(await readJson(res)).toMatchObject({ method: "pass", collector: { kind: "trusted", id: aunt } });
    });
  });
});

type Live = { board: Board | null; events: { seq: number; type: string; studentId: number | null }[] };

/** Reads an event stream until `done` says it has what it needs (or 5 s pass), then cancels it. */
async function readEvents(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  const until = Date.now() + 5000;
  try {
    while (!done(text) && Date.now() < until) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value);
    }
  } finally {
    await reader.cancel();
  }
  return text;
}

describe("the live board", () => {
  it("answers the snapshot and the events after `after` as JSON; a parent's carry only their children", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const b = await makeFamily(t, NORTH);
      const token = await gate();
      const first = await readJson<Live>(await t.request(`${D}/live?date=${TODAY}`, { token, school: NORTH }));
      const seq = first.board?.seq ?? -1;
      expect(first.events).toEqual([]);
      expect((await arrive(a)).status).toBe(201);
      expect((await release({ studentId: b.studentId, collector: { kind: "guardian", id: b.parentId } })).status).toBe(
        201,
      );
      const after = await readJson<Live>(
        await t.request(`${D}/live?date=${TODAY}&after=${seq}`, { token, school: NORTH }),
      );
      expect(after.board).toBeNull();
      expect(after.events.map((e) => [e.seq, e.type, e.studentId])).toEqual([
        [seq + 1, "arrival", a.studentId],
        [seq + 2, "released", b.studentId],
      ]);
      const theirs = await readJson<Live>(
        await t.request(`${D}/live?date=${TODAY}&after=${seq}`, { token: await parent(a), school: NORTH }),
      );
      expect(theirs.events.map((e) => e.studentId)).toEqual([a.studentId]);
    });
  });

  it("announces changes made elsewhere: a permission confirmed, withdrawn by a guardian's restriction, deleted by the school", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const b = await makeFamily(t, NORTH);
      const token = await gate();
      const first = await readJson<Live>(await t.request(`${D}/live?date=${TODAY}`, { token, school: NORTH }));
      const seq = first.board?.seq ?? -1;
      // The office asks an absence for a (and confirms it if the school's setting left it pending).
      const asked = await t.request("/api/v1/exit-permission/absence", {
        method: "POST",
        token: await staff(),
        school: NORTH,
        body: { studentId: a.studentId, date: TODAY, reason: "Doctor" },
      });
      expect(asked.status, await asked.clone().text()).toBe(201);
      const absence = await readJson<{ id: number; status: string }>(asked);
      if (absence.status !== "confirmed") {
        const confirmed = await t.request(`/api/v1/exit-permission/${absence.id}/confirm`, {
          method: "PATCH",
          token: await staff(),
          school: NORTH,
          body: { status: "confirmed" },
        });
        expect(confirmed.status, await confirmed.clone().text()).toBe(200);
      }
      // b's guardian collects b today (a confirmed pickup), then the school restricts the guardian.
      const pickup = await makePermission(t, {
        schoolId: NORTH,
        studentId: b.studentId,
        date: TODAY,
        kind: "auto_pickup",
        status: "confirmed",
        parentId: b.parentId,
        pickupParentId: b.parentId,
      });
      const [link] = await t.db.select({ id: guardians.id }).from(guardians).where(eq(guardians.parentId, b.parentId));
      const restricted = await t.request(`/api/v1/student-guardian/${link?.id}/restriction`, {
        method: "PATCH",
        token: await staff(),
        school: NORTH,
        body: { restricted: true, reason: "Court order" },
      });
      expect(restricted.status, await restricted.clone().text()).toBe(200);
      const [row] = await t.db.select().from(exitPermissions).where(eq(exitPermissions.id, pickup.id));
      expect(row?.status).toBe("withdrawn");
      // The school withdraws a's absence (a confirmed one: DELETE).
      const deleted = await t.request(`/api/v1/exit-permission/${absence.id}`, {
        method: "DELETE",
        token: await staff(),
        school: NORTH,
      });
      expect(deleted.status, await deleted.clone().text()).toBe(204);

      const after = await readJson<Live>(
        await t.request(`${D}/live?date=${TODAY}&after=${seq}`, { token, school: NORTH }),
      );
      expect(after.events.map((e) => [e.seq, e.type, e.studentId])).toEqual([
        [seq + 1, "permission-confirmed", a.studentId],
        [seq + 2, "permission-withdrawn", b.studentId],
        [seq + 3, "permission-withdrawn", a.studentId],
      ]);
      expect(after.events[0]).toMatchObject({ permissionId: absence.id, kind: "absence" });
      expect(after.events[1]).toMatchObject({ permissionId: pickup.id, kind: "auto_pickup" });
      // A parent's stream carries only their child's; a parent restricted today, not that child's
      // (the restriction's notification tells them of the withdrawn pickup).
      const theirs = await readJson<Live>(
        await t.request(`${D}/live?date=${TODAY}&after=${seq}`, { token: await parent(a), school: NORTH }),
      );
      expect(theirs.events.map((e) => [e.type, e.studentId])).toEqual([
        ["permission-confirmed", a.studentId],
        ["permission-withdrawn", a.studentId],
      ]);
      const restrictedOnes = await readJson<Live>(
        await t.request(`${D}/live?date=${TODAY}&after=${seq}`, { token: await parent(b), school: NORTH }),
      );
      expect(restrictedOnes.events).toEqual([]);
    });
  });

  it("streams Server-Sent Events: a snapshot, then each change within a second; resumes with Last-Event-ID", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const token = await gate();
      const res = await t.request(`${D}/live?date=${TODAY}`, {
        token,
        school: NORTH,
        headers: { accept: "text/event-stream" },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const started = Date.now();
      const released = release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } });
      const text = await readEvents(res, (s) => s.includes('"type":"released"'));
      expect((await released).status).toBe(201);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(text).toMatch(/event: snapshot\ndata: \{/);
      const change = /id: (\d+)\nevent: change\ndata: (.*)\n/.exec(text);
      expect(JSON.parse(change?.[2] ?? "{}")).toMatchObject({ type: "released", studentId: a.studentId });
      // Reconnecting after the change it saw: nothing again, and no snapshot.
      const seen = Number(change?.[1]);
      const again = await t.request(`${D}/live?date=${TODAY}`, {
        token,
        school: NORTH,
        headers: { accept: "text/event-stream", "last-event-id": String(seen - 1) },
      });
      const replay = await readEvents(again, (s) => s.includes("event: change"));
      expect(replay).not.toContain("event: snapshot");
      expect(replay).toContain(`id: ${seen}\nevent: change`);
    });
  });

  it("takes a one-use ticket valid 30 s instead of a bearer token", async () => {
    const a = await makeFamily(t, NORTH);
    const made = await t.request(`${D}/live/ticket`, { method: "POST", token: await parent(a), school: NORTH });
    expect(made.status, await made.clone().text()).toBe(201);
    const { ticket } = await readJson<{ ticket: string }>(made);
    const first = await t.request(`${D}/live?date=${TODAY}&ticket=${encodeURIComponent(ticket)}`);
    expect(first.status, await first.clone().text()).toBe(200);
    expect((await readJson<Live>(first)).board?.students.map((s) => s.studentId)).toEqual([a.studentId]);
    expect((await t.request(`${D}/live?ticket=${encodeURIComponent(ticket)}`)).status).toBe(401);
    const late = await readJson<{ ticket: string }>(
      await t.request(`${D}/live/ticket`, { method: "POST", token: await parent(a), school: NORTH }),
    );
    t.clock.advance(31);
    try {
      expect((await t.request(`${D}/live?ticket=${encodeURIComponent(late.ticket)}`)).status).toBe(401);
    } finally {
      t.clock.advance(-31);
    }
    // Another school's prefix on our ticket finds nothing there.
    const ours = await readJson<{ ticket: string }>(
      await t.request(`${D}/live/ticket`, { method: "POST", token: await parent(a), school: NORTH }),
    );
    const moved = ours.ticket.replace(/^1\./, "2.");
    expect((await t.request(`${D}/live?ticket=${encodeURIComponent(moved)}`)).status).toBe(401);
    expect((await t.request(`${D}/live`)).status).toBe(401);
  });

  it("serves a WebSocket: the snapshot, then the changes", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const res = await t.request(`${D}/live?date=${TODAY}`, {
        token: await gate(),
        school: NORTH,
        headers: { upgrade: "websocket" },
      });
      expect(res.status).toBe(101);
      const ws = res.webSocket;
      if (!ws) throw new Error("no WebSocket");
      const messages: { type: string; studentId?: number }[] = [];
      const got = new Promise<void>((resolve) => {
        ws.addEventListener("message", (e) => {
          messages.push(JSON.parse(String(e.data)));
          if (messages.some((x) => x.type === "released")) resolve();
        });
      });
      ws.accept();
      expect((await release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } })).status).toBe(
        201,
      );
      await Promise.race([got, new Promise((r) => setTimeout(r, 3000))]);
      ws.close();
      expect(messages[0]?.type).toBe("snapshot");
      expect(messages).toContainEqual(expect.objectContaining({ type: "released", studentId: a.studentId }));
    });
  });
});

describe("reunification", () => {
  it("tells every guardian, asks each release for an identity check, accounts for every child, and ends", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const b = await makeFamily(t, NORTH);
      const c = await makeFamily(t, NORTH);
      await makePermission(t, {
        schoolId: NORTH,
        studentId: c.studentId,
        date: TODAY,
        kind: "absence",
        status: "confirmed",
      });
      const R = `${D}/reunification`;
      expect(
        (await t.request(R, { method: "POST", token: await gate(), school: NORTH, body: { reason: "Drill" } })).status,
      ).toBe(403);
      const started = await t.request(R, {
        method: "POST",
        token: await staff(),
        school: NORTH,
        body: { reason: "Gas leak" },
      });
      expect(started.status, await started.clone().text()).toBe(201);
      const made = await readJson<{ id: number; reason: string; endedAt: string | null }>(started);
      expect(made).toMatchObject({ reason: "Gas leak", endedAt: null });
      const twice = await t.request(R, {
        method: "POST",
        token: await staff(),
        school: NORTH,
        body: { reason: "Again" },
      });
      expect(twice.status).toBe(409);
      const [told] = await t.db.select().from(notifications).where(eq(notifications.category, "emergency"));
      expect(told).toBeDefined();
      expect((await board(await gate())).reunification).toMatchObject({ id: made.id, reason: "Gas leak" });

      const bare = await release({ studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } });
      expect((await refused(bare)).failures).toEqual([expect.objectContaining({ code: "identity-check-required" })]);
      const checked = await release({
        studentId: a.studentId,
        collector: { kind: "guardian", id: a.parentId },
        identityCheck: "INE checked",
      });
      expect(checked.status, await checked.clone().text()).toBe(201);

      const report = await readJson<{
        counts: { released: number; atSchool: number; absent: number };
        children: { studentId: number; accounted: string; release: { identityCheck: string | null } | null }[];
      }>(await t.request(`${R}/report`, { token: await gate(), school: NORTH }));
      const of = (id: number) => report.children.find((x) => x.studentId === id);
      expect(of(a.studentId)).toMatchObject({ accounted: "released", release: { identityCheck: "INE checked" } });
      expect(of(b.studentId)?.accounted).toBe("at-school");
      expect(of(c.studentId)?.accounted).toBe("absent");
      expect(report.counts.released + report.counts.atSchool + report.counts.absent).toBeLessThanOrEqual(
        report.children.length,
      );

      expect((await t.request(R, { method: "DELETE", token: await staff(), school: NORTH })).status).toBe(204);
      expect((await t.request(R, { method: "DELETE", token: await staff(), school: NORTH })).status).toBe(404);
      const after = await release({ studentId: b.studentId, collector: { kind: "guardian", id: b.parentId } });
      expect(after.status).toBe(201);
    });
  });
});

describe("offline releases", () => {
  it("answers each item on its own, flags what the plan no longer allowed, and writes nothing twice however often retried", async () => {
    await at(AT_DISMISSAL, async () => {
      const a = await makeFamily(t, NORTH);
      const b = await makeFamily(t, NORTH);
      const c = await makeFamily(t, NORTH);
      const aunt = await trusted(c.studentId);
      const pickup = await makePermission(t, {
        schoolId: NORTH,
        studentId: c.studentId,
        date: TODAY,
        kind: "auto_pickup",
        status: "confirmed",
        trustedPersonId: aunt,
      });
      const { token: pass } = await readJson<{ token: string }>(
        await t.request(`/api/v1/exit-permission/public?slug=${pickup.slug}`),
      );
      // Released at the gate online before the device synced.
      expect((await release({ studentId: b.studentId, collector: { kind: "guardian", id: b.parentId } })).status).toBe(
        201,
      );
      // The pickup was withdrawn after the gate (offline) let the aunt take the child on her pass.
      await t.db.update(exitPermissions).set({ status: "withdrawn" }).where(eq(exitPermissions.id, pickup.id));
      const body = {
        releases: [
          {
            clientId: "gate-2:1",
            release: { studentId: a.studentId, collector: { kind: "guardian", id: a.parentId } },
          },
          {
            clientId: "gate-2:2",
            release: { studentId: b.studentId, collector: { kind: "guardian", id: b.parentId } },
          },
          { clientId: "gate-2:3", release: { studentId: c.studentId, passToken: pass } },
          { clientId: "gate-2:4", release: { studentId: 99999999, collector: { kind: "guardian", id: 1 } } },
        ],
      };
      const post = async () =>
        t.request(`${D}/release/batch`, { method: "POST", token: await gate(), school: NORTH, body });
      // The guardians' pushes of the batch's releases go to the queue in one call, not one each.
      const queue = t.deps.queues.push;
      const sends = vi.spyOn(queue, "send");
      const batches = vi.spyOn(queue, "sendBatch");
      onTestFinished(() => {
        sends.mockRestore();
        batches.mockRestore();
      });
      const res = await post();
      expect(res.status, await res.clone().text()).toBe(200);
      expect(sends).not.toHaveBeenCalled();
      expect(batches.mock.calls.map(([messages]) => [...messages].length)).toEqual([2]);
      type Out = { results: { clientId: string; result: string; releaseId: number | null; reasons: string[] }[] };
      const first = await readJson<Out>(res);
      expect(first.results.map((r) => r.result)).toEqual(["released", "duplicate", "flagged", "unknown"]);
      expect(first.results[2]?.reasons.length).toBeGreaterThan(0);
      const after = await board(await gate());
      expect(lineOf(after, c.studentId)?.release).toMatchObject({ flagged: true, method: "pass" });
      for (let i = 0; i < 3; i++) {
        const again = await readJson<Out>(await post());
        expect(again.results.map((r) => r.result)).toEqual(["duplicate", "duplicate", "duplicate", "unknown"]);
        expect(again.results.slice(0, 3).map((r) => r.releaseId)).toEqual([
          first.results[0]?.releaseId,
          first.results[1]?.releaseId,
          first.results[2]?.releaseId,
        ]);
      }
      const rows = await t.db.select().from(dismissalReleases).where(eq(dismissalReleases.date, TODAY));
      for (const id of [a.studentId, b.studentId, c.studentId]) {
        expect(rows.filter((r) => r.studentId === id)).toHaveLength(1);
      }
    });
  });
});
