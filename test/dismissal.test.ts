/**
 * Dismissal: the day's board (plan and status per child, for the school or for one's own children),
 * "I'm here" and the call list, and releases at the gate to a collector the day's effective plan
 * names. Against real D1; dates follow the test clock (Monday 23 November 2026, Mexico City).
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { schoolHolidayCycles } from "../src/db/schema/holiday-cycle";
import { guardians, students } from "../src/db/schema/student";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { grantsOf } from "../src/modules";
import { readJson } from "./fixture-kit";
import { makePermission } from "./fixtures/afternoon";
import { makeDelegate, makeFamily } from "./fixtures/modules/exit-permission";
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
type Board = { date: string; schoolDay: boolean; holiday: boolean; seq: number; students: Line[] };

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
    void problem;
    void students;
    void AT_DISMISSAL;
  });
});
