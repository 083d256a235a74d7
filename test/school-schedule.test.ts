/**
 * School schedules: per level and ISO weekday, entry / dismissal / after-school end as
 * school-local HH:mm; one per (school, level, weekday); times that run forward; filters; and the
 * service verb `scheduleOn` that turns a date's schedule into UTC instants in the school's time
 * zone, across daylight-saving changes.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { schoolSchedules } from "../src/db/schema/school-schedule";
import { jobCtx } from "../src/lib/context";
import { addDays, dateIn, isoWeekday, isTimeZone, offsetAt, timeIn, zonedInstant } from "../src/lib/zoned-time";
import { scheduleOn } from "../src/modules/school-schedule/service";
import { readJson } from "./fixture-kit";
import { DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1; // America/Mexico_City: all four levels
const SOUTH = 2; // America/New_York: elementary, middle, high
const PATH = "/api/v1/school-schedule";

type Schedule = {
  id: number;
  level: string;
  weekday: number;
  entryTime: string;
  dismissalTime: string;
  afterSchoolEndTime: string | null;
};
type Page<T> = { data: T[]; total: number };

const t = makeTestApp();
const admin = (school = NORTH) => t.token(school === NORTH ? 2 : 5, { [school]: "all" });

async function expectStatus(res: Response, status: number) {
  expect(res.status, await res.clone().text()).toBe(status);
}

async function create(body: Record<string, unknown>, school = NORTH) {
  return t.request(PATH, { method: "POST", token: await admin(school), school, body });
}

async function list(query: string, school = NORTH) {
  const res = await t.request(`${PATH}?pageSize=100${query}`, { token: await admin(school), school });
  await expectStatus(res, 200);
  return readJson<Page<Schedule>>(res);
}

const fieldsOf = async (res: Response) => (await problem(res)).errors?.map((e) => e.path) ?? [];

describe("the demo schedules", () => {
  it("cover every level each school offers, Monday to Friday, with an early release on Friday", async () => {
    const north = await list("");
    expect(north.total).toBe(20);
    // By level, then weekday.
    expect(north.data.slice(0, 5).map((s) => [s.level, s.weekday])).toEqual(
      [1, 2, 3, 4, 5].map((d) => ["elementary", d]),
    );
    const south = await list("", SOUTH);
    expect(new Set(south.data.map((s) => s.level))).toEqual(new Set(["elementary", "middle", "high"]));
    const fridays = await list("&weekday=5&level=elementary", SOUTH);
    expect(fridays.data).toEqual([
      expect.objectContaining({ level: "elementary", weekday: 5, dismissalTime: "13:00", afterSchoolEndTime: "16:00" }),
    ]);
  });
});

describe("creating and updating", () => {
  it("creates one schedule per level and weekday; a second is a 409, another school is apart", async () => {
    const body = { level: "high", weekday: 6, entryTime: "08:00", dismissalTime: "12:00" };
    const res = await create(body);
    await expectStatus(res, 201);
    expect(await readJson(res)).toMatchObject({ ...body, afterSchoolEndTime: null });
    const again = await create({ ...body, entryTime: "09:00" });
    await expectStatus(again, 409);
    expect((await problem(again)).detail).toBe(
      "The current school already has a schedule for this level and weekday: update it with PUT",
    );
    await expectStatus(await create(body, SOUTH), 201);
  });

  it("takes times as HH:mm from 00:00 to 23:59, weekdays 1 to 7 and the four levels", async () => {
    const valid = { level: "middle", weekday: 7, entryTime: "00:00", dismissalTime: "23:59" };
    for (const [field, value] of [
      ["entryTime", "24:00"],
      ["entryTime", "7:00"],
      ["entryTime", "08:60"],
      ["entryTime", "08:00:00"],
      ["dismissalTime", "2 pm"],
      ["afterSchoolEndTime", "25:00"],
      ["weekday", 0],
      ["weekday", 8],
      ["weekday", 1.5],
      ["weekday", "1"],
      ["level", "college"],
    ] as const) {
      const res = await create({ ...valid, [field]: value });
      expect(res.status, `${field} ${value}`).toBe(400);
      expect(await fieldsOf(res), `${field} ${value}`).toEqual([field]);
    }
    expect(await fieldsOf(await create({ ...valid, schoolId: 2 }))).toEqual(["schoolId"]);
    await expectStatus(await create(valid), 201); // the bounds themselves are fine
  });

  it("refuses times that do not run forward, naming each field", async () => {
    const base = { level: "preschool", weekday: 6 };
    const cases: [Record<string, unknown>, string[]][] = [
      [{ entryTime: "08:00", dismissalTime: "08:00" }, ["dismissalTime"]],
      [{ entryTime: "08:00", dismissalTime: "07:59" }, ["dismissalTime"]],
      [{ entryTime: "08:00", dismissalTime: "13:00", afterSchoolEndTime: "13:00" }, ["afterSchoolEndTime"]],
      [
        { entryTime: "14:00", dismissalTime: "13:00", afterSchoolEndTime: "12:00" },
        ["dismissalTime", "afterSchoolEndTime"],
      ],
    ];
    for (const [times, fields] of cases) {
      const res = await create({ ...base, ...times });
      expect(res.status, JSON.stringify(times)).toBe(400);
      expect(await fieldsOf(res)).toEqual(fields);
    }
    const ok = await create({ ...base, entryTime: "08:00", dismissalTime: "08:01", afterSchoolEndTime: "08:02" });
    await expectStatus(ok, 201);
  });

  it("checks an update's times against the stored ones and writes the three together", async () => {
    const res = await create({
      level: "elementary",
      weekday: 6,
      entryTime: "08:00",
      dismissalTime: "12:00",
      afterSchoolEndTime: "15:00",
    });
    const { id } = await readJson<Schedule>(res);
    const put = async (body: unknown) =>
      t.request(`${PATH}/${id}`, { method: "PUT", token: await admin(), school: NORTH, body });

    const early = await put({ dismissalTime: "07:30" });
    await expectStatus(early, 400);
    expect(await fieldsOf(early)).toEqual(["dismissalTime"]);
    const late = await put({ dismissalTime: "15:30" });
    expect(await fieldsOf(late)).toEqual(["afterSchoolEndTime"]);

    await expectStatus(await put({ afterSchoolEndTime: null }), 204);
    await expectStatus(await put({ dismissalTime: "15:30" }), 204); // no after-school any more
    const [row] = await t.db.select().from(schoolSchedules).where(eq(schoolSchedules.id, id));
    expect(row).toMatchObject({ entryTime: "08:00", dismissalTime: "15:30", afterSchoolEndTime: null });

    await expectStatus(await put({}), 400);
    // Moving it onto a level and weekday that has a schedule is a 409.
    await expectStatus(await put({ weekday: 1 }), 409);
    await expectStatus(await put({ weekday: 7, level: "high" }), 204);
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school-schedule"), eq(auditLog.recordId, id), eq(auditLog.action, "update")));
    expect(audit).toBeDefined();
  });

  it("is read by parents and teachers, written by staff", async () => {
    const parent = await t.signIn(DEMO.northParent.phone);
    await expectStatus(await t.request(`${PATH}?level=elementary`, { token: parent.accessToken }), 200);
    const refused = await t.request(PATH, {
      method: "POST",
      token: parent.accessToken,
      body: { level: "high", weekday: 6, entryTime: "08:00", dismissalTime: "09:00" },
    });
    await expectStatus(refused, 403);
    expect((await problem(refused)).detail).toMatch(/school-schedule\.write/);
  });

  it("filters by level and weekday; a weekday out of 1-7 is a 400", async () => {
    const tuesdays = await list("&weekday=2");
    expect(tuesdays.data.map((s) => s.level)).toEqual(["elementary", "high", "middle", "preschool"]);
    const preschool = await list("&level=preschool&weekday=3");
    expect(preschool.data).toHaveLength(1);
    for (const bad of ["weekday=0", "weekday=8", "weekday=mon", "level=college", "sort=weekday"]) {
      const res = await t.request(`${PATH}?${bad}`, { token: await admin(), school: NORTH });
      expect(res.status, bad).toBe(400);
    }
  });

  it("20 concurrent creates of one level and weekday: one 201, nineteen 409s, one row", async () => {
    const body = { level: "middle", weekday: 6, entryTime: "09:00", dismissalTime: "11:00" };
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(body)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    const rows = await t.db
      .select()
      .from(schoolSchedules)
      .where(
        and(eq(schoolSchedules.schoolId, NORTH), eq(schoolSchedules.level, "middle"), eq(schoolSchedules.weekday, 6)),
      );
    expect(rows).toHaveLength(1);
  });

  it("20 concurrent updates moving different schedules onto one free slot: one wins", async () => {
    const ids: number[] = [];
    for (const level of ["preschool", "elementary", "middle", "high"]) {
      const res = await create({ level, weekday: 7, entryTime: "10:00", dismissalTime: "11:00" }, SOUTH);
      if (res.status === 201) ids.push((await readJson<Schedule>(res)).id);
    }
    expect(ids.length).toBeGreaterThan(1);
    const token = await admin(SOUTH);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request(`${PATH}/${ids[i % ids.length]}`, {
          method: "PUT",
          token,
          school: SOUTH,
          body: { level: "preschool", weekday: 6 },
        }),
      ),
    );
    expect(answers.filter((r) => r.status === 204).length).toBeGreaterThanOrEqual(1);
    expect(answers.every((r) => r.status === 204 || r.status === 409)).toBe(true);
    const rows = await (await t.schoolDb(SOUTH))
      .select()
      .from(schoolSchedules)
      .where(
        and(
          eq(schoolSchedules.schoolId, SOUTH),
          eq(schoolSchedules.level, "preschool"),
          eq(schoolSchedules.weekday, 6),
        ),
      );
    expect(rows).toHaveLength(1);
  });
});

describe("scheduleOn: the schedule of a level on a date, in the school's time zone", () => {
  const south = () => jobCtx(t.deps, "test", SOUTH);
  const north = () => jobCtx(t.deps, "test", NORTH);

  it("gives New York's 15:00 dismissal as 19:00Z before the November change and 20:00Z after", async () => {
    const before = await scheduleOn(south(), "elementary", "2026-10-29"); // Thursday, EDT (-4)
    expect(before).toMatchObject({
      level: "elementary",
      date: "2026-10-29",
      weekday: 4,
      timeZone: "America/New_York",
      entry: { local: "08:15", at: "2026-10-29T12:15:00.000Z" },
      dismissal: { local: "15:00", at: "2026-10-29T19:00:00.000Z" },
      afterSchoolEnd: { local: "18:00", at: "2026-10-29T22:00:00.000Z" },
    });
    const after = await scheduleOn(south(), "elementary", "2026-11-02"); // Monday, EST (-5)
    expect(after?.dismissal).toEqual({ local: "15:00", at: "2026-11-02T20:00:00.000Z" });
    const friday = await scheduleOn(south(), "elementary", "2026-11-06"); // early release
    expect(friday?.dismissal).toEqual({ local: "13:00", at: "2026-11-06T18:00:00.000Z" });
  });

  it("and back to 19:00Z after the March change", async () => {
    expect((await scheduleOn(south(), "elementary", "2027-03-11"))?.dismissal.at).toBe("2027-03-11T20:00:00.000Z");
    expect((await scheduleOn(south(), "elementary", "2027-03-15"))?.dismissal.at).toBe("2027-03-15T19:00:00.000Z");
  });

  it("keeps Mexico City at -06:00 on both sides (no daylight saving since 2022)", async () => {
    for (const date of ["2026-10-29", "2026-11-02", "2027-03-11", "2027-04-05"]) {
      const s = await scheduleOn(north(), "elementary", date);
      expect(s?.dismissal, date).toEqual({ local: "14:30", at: `${date}T20:30:00.000Z` });
      expect(s?.timeZone).toBe("America/Mexico_City");
    }
  });

  it("answers null where the level has no schedule that weekday, or the school lacks the level", async () => {
    expect(await scheduleOn(north(), "elementary", "2026-11-01")).toBeNull(); // a Sunday
    expect(await scheduleOn(south(), "preschool", "2026-11-02")).toBeNull(); // not offered
    expect((await scheduleOn(north(), "preschool", "2026-11-02"))?.afterSchoolEnd).toEqual({
      local: "15:00",
      at: "2026-11-02T21:00:00.000Z",
    });
  });
});

describe("zoned time", () => {
  it("knows the weekday of a calendar date (the same in every zone) and refuses a date that is not one", () => {
    expect(isoWeekday("2026-11-01")).toBe(7);
    expect(isoWeekday("2026-11-02")).toBe(1);
    expect(isoWeekday("2028-02-29")).toBe(2);
    expect(() => isoWeekday("2027-02-29")).toThrow(RangeError);
    expect(() => isoWeekday("2027-2-1")).toThrow(RangeError);
  });

  it("resolves skipped and repeated local times as Temporal's compatible disambiguation does", () => {
    const ny = "America/New_York";
    // 02:30 does not exist on 2027-03-14: it moves forward by the hour skipped (03:30 EDT).
    expect(zonedInstant("2027-03-14", "02:30", ny).toISOString()).toBe("2027-03-14T07:30:00.000Z");
    // 01:30 happens twice on 2026-11-01: the earlier (EDT) one.
    expect(zonedInstant("2026-11-01", "01:30", ny).toISOString()).toBe("2026-11-01T05:30:00.000Z");
    expect(zonedInstant("2026-11-01", "08:00", ny).toISOString()).toBe("2026-11-01T13:00:00.000Z");
    expect(zonedInstant("2026-11-01", "00:00", ny).toISOString()).toBe("2026-11-01T04:00:00.000Z");
  });

  it("handles southern-hemisphere, half-hour and UTC zones", () => {
    // Sydney moves to AEDT (+11) on 2026-10-04.
    expect(zonedInstant("2026-10-02", "15:00", "Australia/Sydney").toISOString()).toBe("2026-10-02T05:00:00.000Z");
    expect(zonedInstant("2026-10-05", "15:00", "Australia/Sydney").toISOString()).toBe("2026-10-05T04:00:00.000Z");
    expect(zonedInstant("2026-10-05", "15:00", "Asia/Kolkata").toISOString()).toBe("2026-10-05T09:30:00.000Z");
    expect(zonedInstant("2026-10-05", "15:00", "UTC").toISOString()).toBe("2026-10-05T15:00:00.000Z");
    expect(offsetAt("America/New_York", Date.parse("2026-07-01T12:00:00Z"))).toBe(-4 * 3600 * 1000);
    expect(isTimeZone("America/Mexico_City")).toBe(true);
    expect(isTimeZone("Mars/Olympus_Mons")).toBe(false);
  });

  it("gives the offset of the zone's change to the millisecond, asked again and again", () => {
    // New York springs forward at 2027-03-14T07:00:00Z (02:00 EST becomes 03:00 EDT).
    const ny = "America/New_York";
    const change = Date.parse("2027-03-14T07:00:00.000Z");
    const hour = 3600 * 1000;
    for (let round = 0; round < 2; round++) {
      expect(offsetAt(ny, change - 1000)).toBe(-5 * hour);
      expect(offsetAt(ny, change - 1)).toBe(-5 * hour);
      expect(offsetAt(ny, change)).toBe(-4 * hour);
      expect(offsetAt(ny, change + 999)).toBe(-4 * hour);
      // Before 1970 too (a negative instant), and Kathmandu's 45 minutes.
      expect(offsetAt(ny, Date.parse("1969-07-20T20:17:40.500Z"))).toBe(-4 * hour);
      expect(offsetAt("Asia/Kathmandu", change - 1)).toBe(5.75 * hour);
    }
  });

  it("turns the day at the zone's own midnight, to the millisecond, asked again and again", () => {
    // Kathmandu is UTC+05:45: its midnight of 2026-12-01 is 2026-11-30T18:15:00Z.
    const kathmandu = "Asia/Kathmandu";
    const midnight = Date.parse("2026-11-30T18:15:00.000Z");
    for (let round = 0; round < 2; round++) {
      expect(dateIn(kathmandu, new Date(midnight - 1))).toBe("2026-11-30");
      expect(timeIn(kathmandu, new Date(midnight - 1))).toBe("23:59");
      expect(dateIn(kathmandu, new Date(midnight))).toBe("2026-12-01");
      expect(timeIn(kathmandu, new Date(midnight))).toBe("00:00");
      expect(dateIn(kathmandu, new Date(midnight + 59_999))).toBe("2026-12-01");
      // The same instant in another zone is another day.
      expect(dateIn("America/New_York", new Date(midnight))).toBe("2026-11-30");
      expect(timeIn("America/New_York", new Date(midnight))).toBe("13:15");
    }
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2027-02-28", 1)).toBe("2027-03-01");
    expect(addDays("2027-03-01", -1)).toBe("2027-02-28");
  });
});
