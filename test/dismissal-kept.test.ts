/**
 * The school's board kept per isolate (src/modules/dismissal/plan.ts `dayRead`): read again once a
 * fact it shows changed, whoever changed it. Triggers move the school's `dismissal_board_version` at
 * every write of a table the plan reads (migrations/0061); the first test holds that list to the
 * board's own SQL, the second changes each fact in turn and sees it on the board the isolate kept,
 * which must equal the board read afresh. Dates follow the test clock (Monday 23 November 2026).
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { d1 } from "../src/db/client";
import { users } from "../src/db/schema/core";
import { dismissalArrivals, dismissalReleases } from "../src/db/schema/dismissal";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { parents } from "../src/db/schema/parent";
import { guardians, students } from "../src/db/schema/student";
import { routeStops, routeStudentDays, routeStudents, routes } from "../src/db/schema/transport";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { schoolPeople } from "../src/db/schema/user";
import { withSearch } from "../src/db/search";
import { forgetKeptPlans } from "../src/modules/dismissal/plan";
import { readJson } from "./fixture-kit";
import { makePermission } from "./fixtures/afternoon";
import { makeFamily } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { countingTestApp, DEMO, makeTestApp, type Recorded, recordingD1 } from "./helpers";

const NORTH = 1;
const D = "/api/v1/dismissal";
const TODAY = "2026-11-23";
const { t, measure } = countingTestApp();
t.clock.current = new Date("2026-11-23T15:00:00.000Z");

type Line = {
  studentId: number;
  firstName: string;
  lastName: string;
  way: string;
  status: string;
  route: { id: number; name: string; stopId: number | null; stopName: string | null; stopTime: string | null } | null;
  collectors: { kind: string; id: number; name: string }[];
};
type Board = { seq: number; students: Line[] };

const staff = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

async function board(): Promise<Board> {
  const res = await t.request(`${D}/board?date=${TODAY}`, { token: await staff(), school: NORTH });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<Board>(res);
}

/** The board this isolate keeps (read after `change`), checked against the board read afresh. */
async function afterChange(change: () => Promise<unknown>): Promise<Board> {
  await board(); // kept now
  await change();
  const kept = await board();
  forgetKeptPlans();
  expect(kept).toEqual(await board());
  return kept;
}

const lineOf = (b: Board, studentId: number) => b.students.find((s) => s.studentId === studentId);
const collectorIds = (b: Board, studentId: number) => lineOf(b, studentId)?.collectors.map((c) => c.id);

/** The tables the board reads whose rows are the day's status, read on each request (not kept). */
const STATUS_TABLES = [
  "dismissal_arrival",
  "dismissal_event",
  "dismissal_release",
  "dismissal_reunification",
  "dismissal_board_version",
  "route_run",
  "route_run_event",
  // The calendar: three small reads of the school's row, holidays and schedules.
  "school",
  "school_holiday_cycle",
  "school_schedule",
];

describe("the school's board kept per isolate", () => {
  it("every table its plan reads moves the school's version on insert, update and delete (by trigger)", async () => {
    const statements: Recorded[] = [];
    const r = makeTestApp({ db: d1(recordingD1(env.DB, statements)) });
    r.clock.current = t.clock.current;
    const token = await r.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    forgetKeptPlans();
    const res = await r.request(`${D}/board?date=${TODAY}`, { token, school: NORTH });
    expect(res.status).toBe(200);
    const read = new Set(
      statements.flatMap((s) => [...s.sql.matchAll(/\b(?:from|join)\s+"(\w+)"/gi)].map((m) => m[1] ?? "")),
    );
    const plan = [...read].filter((name) => !STATUS_TABLES.includes(name)).sort();
    expect(plan).toContain("student");
    expect(plan).toContain("guardian");
    const triggers = await env.DB.prepare(
      "SELECT tbl_name AS tableName, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'dismissal_board_%'",
    ).all<{ tableName: string; sql: string }>();
    const moves = (table: string, event: string) =>
      triggers.results.some(
        (x) =>
          x.tableName === table &&
          new RegExp(`\\b${event}\\b`).test(x.sql) &&
          // An UPDATE of the row, or (a student's insert, which makes the row) its upsert.
          /(UPDATE `dismissal_board_version`|DO UPDATE) SET `version` = `version` \+ 1/.test(x.sql),
      );
    const missing = plan.flatMap((table) =>
      (table === "user" ? ["UPDATE", "DELETE"] : ["INSERT", "UPDATE", "DELETE"])
        .filter((event) => !moves(table, event))
        .map((event) => `${table} ${event}`),
    );
    expect(missing).toEqual([]);
  });

  it("its triggers find what they move by index: no write to a table scans another", async () => {
    const triggers = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'dismissal_board_%'",
    ).all<{ name: string; sql: string }>();
    expect(triggers.results.length).toBeGreaterThan(30);
    const scans: string[] = [];
    for (const { name, sql } of triggers.results) {
      const body = sql.slice(sql.indexOf("BEGIN") + 5, sql.lastIndexOf("END"));
      for (const statement of body.split(";").filter((x) => x.trim())) {
        // The row's values (NEW.x, OLD.x) as parameters: the plan is the one each write runs.
        const bound = statement.replace(/\b(NEW|OLD)\.`?\w+`?/g, "?");
        const args = Array.from({ length: bound.split("?").length - 1 }, () => 0);
        const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${bound}`)
          .bind(...args)
          .all<{ detail: string }>();
        for (const { detail } of plan.results) if (/^SCAN /.test(detail)) scans.push(`${name}: ${detail}`);
      }
    }
    expect(scans).toEqual([]);
  });

  it("is one D1 round trip kept or read afresh, and a kept board reads no student's plan", async () => {
    await board(); // the school's zone, kept per isolate
    forgetKeptPlans();
    const request = async () => t.request(`${D}/board?date=${TODAY}`, { token: await staff(), school: NORTH });
    const first = await measure(request);
    expect(first.calls).toBe(1);
    const again = await measure(request);
    expect(again.calls).toBe(1);
    expect(await again.res.json()).toEqual(await first.res.json());
    // The plan's reads answered nothing: the version still the kept one.
    const statements: Recorded[] = [];
    const r = makeTestApp({ db: d1(recordingD1(env.DB, statements)) });
    r.clock.current = t.clock.current;
    const token = await r.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    expect((await r.request(`${D}/board?date=${TODAY}`, { token, school: NORTH })).status).toBe(200);
    const plan = statements.find((s) => /from "student" left join "exit_permission"/.test(s.sql));
    expect(plan).toBeDefined();
    const rows = await env.DB.prepare(plan?.sql ?? "")
      .bind(...(plan?.args ?? []))
      .all();
    expect(rows.results).toEqual([]);
  });

  it("shows each change of a fact it reads: restriction, removed guardian, day's change confirmed and withdrawn, a move", async () => {
    const a = await makeFamily(t, NORTH);
    const other = await makeFamily(t, NORTH, { studentId: a.studentId });
    const both = [a.parentId, other.parentId].sort((x, y) => x - y);
    expect(collectorIds(await board(), a.studentId)?.sort((x, y) => x - y)).toEqual(both);

    // A restriction by the school (its verb): the guardian no longer collects.
    const [link] = await t.db
      .select({ id: guardians.id })
      .from(guardians)
      .where(eq(guardians.parentId, other.parentId));
    let b = await afterChange(async () => {
      const res = await t.request(`/api/v1/student-guardian/${link?.id}/restriction`, {
        method: "PATCH",
        token: await staff(),
        school: NORTH,
        body: { restricted: true, reason: "Court order" },
      });
      expect(res.status, await res.clone().text()).toBe(200);
    });
    expect(collectorIds(b, a.studentId)).toEqual([a.parentId]);
    // Lifted.
    b = await afterChange(async () => {
      const res = await t.request(`/api/v1/student-guardian/${link?.id}/restriction`, {
        method: "PATCH",
        token: await staff(),
        school: NORTH,
        body: { restricted: false },
      });
      expect(res.status, await res.clone().text()).toBe(200);
    });
    expect(collectorIds(b, a.studentId)?.sort((x, y) => x - y)).toEqual(both);
    // A guardian removed.
    b = await afterChange(() => t.db.delete(guardians).where(eq(guardians.parentId, other.parentId)));
    expect(collectorIds(b, a.studentId)).toEqual([a.parentId]);
    // A guardian's name (the user's), and the school's own copy of it.
    b = await afterChange(() =>
      t.db
        .update(users)
        .set(withSearch(users, { firstName: "Renamed" }))
        .where(eq(users.id, a.userId)),
    );
    expect(lineOf(b, a.studentId)?.collectors[0]?.name).toMatch(/^Renamed /);
    b = await afterChange(() =>
      t.db
        .insert(schoolPeople)
        .values(
          withSearch(schoolPeople, { schoolId: NORTH, userId: a.userId, firstName: "Copia", lastName: "Escolar" }),
        )
        .onConflictDoUpdate({
          target: [schoolPeople.schoolId, schoolPeople.userId],
          set: withSearch(schoolPeople, { firstName: "Copia", lastName: "Escolar" }),
        }),
    );
    expect(lineOf(b, a.studentId)?.collectors[0]?.name).toBe("Copia Escolar");

    // A day's change confirmed by the office (its verb), then withdrawn.
    let absenceId = 0;
    b = await afterChange(async () => {
      const asked = await t.request("/api/v1/exit-permission/absence", {
        method: "POST",
        token: await staff(),
        school: NORTH,
        body: { studentId: a.studentId, date: TODAY, reason: "Doctor" },
      });
      expect(asked.status, await asked.clone().text()).toBe(201);
      const absence = await readJson<{ id: number; status: string }>(asked);
      absenceId = absence.id;
      if (absence.status !== "confirmed") {
        const confirmed = await t.request(`/api/v1/exit-permission/${absence.id}/confirm`, {
          method: "PATCH",
          token: await staff(),
          school: NORTH,
          body: { status: "confirmed" },
        });
        expect(confirmed.status, await confirmed.clone().text()).toBe(200);
      }
    });
    expect(lineOf(b, a.studentId)).toMatchObject({ way: "absence", status: "absent", collectors: [] });
    b = await afterChange(async () => {
      const res = await t.request(`/api/v1/exit-permission/${absenceId}`, {
        method: "DELETE",
        token: await staff(),
        school: NORTH,
      });
      expect(res.status, await res.clone().text()).toBe(204);
    });
    expect(lineOf(b, a.studentId)).toMatchObject({ way: "family", status: "waiting" });

    // A pickup by a trusted person, then the person's name corrected.
    const [aunt] = await t.db
      .insert(trustedPeople)
      .values({
        schoolId: NORTH,
        studentId: a.studentId,
        name: "Tía Carmen",
        relationship: "aunt",
        phone: "+525512345678",
        status: "approved",
        decidedAt: "2026-11-01T00:00:00.000Z",
      })
      .returning({ id: trustedPeople.id });
    b = await afterChange(() =>
      makePermission(t, {
        schoolId: NORTH,
        studentId: a.studentId,
        date: TODAY,
        kind: "auto_pickup",
        status: "confirmed",
        trustedPersonId: aunt?.id ?? null,
      }),
    );
    expect(lineOf(b, a.studentId)?.collectors).toEqual([
      { kind: "trusted", id: aunt?.id, name: "Tía Carmen", relationship: "aunt" },
    ]);
    b = await afterChange(() =>
      t.db
        .update(trustedPeople)
        .set(withSearch(trustedPeople, { name: "Tía Carmela" }))
        .where(eq(trustedPeople.id, aunt?.id ?? 0)),
    );
    expect(lineOf(b, a.studentId)?.collectors[0]?.name).toBe("Tía Carmela");

    // A student moved onto a bus home (a route, its day), the route renamed, the stop retimed.
    const route = await makeRoute(t, NORTH, { name: "Ruta Norte" });
    const kid = await makeFamily(t, NORTH);
    b = await afterChange(async () => {
      const [ride] = await t.db
        .insert(routeStudents)
        .values({
          schoolId: NORTH,
          routeId: route.routeId,
          studentId: kid.studentId,
          stopId: route.stopIds[0] ?? 0,
          weekdays: 31,
          direction: "home",
        })
        .returning({ id: routeStudents.id });
      await t.db.insert(routeStudentDays).values(
        [1, 2, 3, 4, 5].map((weekday) => ({
          schoolId: NORTH,
          routeStudentId: ride?.id ?? 0,
          studentId: kid.studentId,
          direction: "home" as const,
          weekday,
        })),
      );
    });
    expect(lineOf(b, kid.studentId)).toMatchObject({
      way: "route",
      route: { id: route.routeId, name: "Ruta Norte", stopName: "Plaza Mayor", stopTime: "15:10" },
    });
    b = await afterChange(() =>
      t.db
        .update(routes)
        .set(withSearch(routes, { name: "Ruta Sur" }))
        .where(eq(routes.id, route.routeId)),
    );
    expect(lineOf(b, kid.studentId)?.route?.name).toBe("Ruta Sur");
    b = await afterChange(() =>
      t.db
        .update(routeStops)
        .set({ time: "15:40" })
        .where(eq(routeStops.id, route.stopIds[0] ?? 0)),
    );
    expect(lineOf(b, kid.studentId)?.route?.stopTime).toBe("15:40");
    // Moved to the other stop, then off the bus.
    b = await afterChange(() =>
      t.db
        .update(routeStudents)
        .set({ stopId: route.stopIds[1] ?? 0 })
        .where(eq(routeStudents.studentId, kid.studentId)),
    );
    expect(lineOf(b, kid.studentId)?.route?.stopName).toBe("Calle Olmo");
    b = await afterChange(() => t.db.delete(routeStudentDays).where(eq(routeStudentDays.studentId, kid.studentId)));
    expect(lineOf(b, kid.studentId)).toMatchObject({ way: "family", route: null });

    // The student's own record: renamed, moved to another level, then gone.
    b = await afterChange(() =>
      t.db
        .update(students)
        .set(withSearch(students, { firstName: "Pablo", level: "middle" }))
        .where(eq(students.id, kid.studentId)),
    );
    expect(lineOf(b, kid.studentId)).toMatchObject({ firstName: "Pablo", level: "middle" });
    b = await afterChange(() =>
      t.db.update(students).set({ deletedAt: "2026-11-23T10:00:00.000Z" }).where(eq(students.id, kid.studentId)),
    );
    expect(lineOf(b, kid.studentId)).toBeUndefined();
    // The pickup gone (its row deleted), then the parent profile (its links with it).
    b = await afterChange(() => t.db.delete(exitPermissions).where(eq(exitPermissions.studentId, a.studentId)));
    expect(collectorIds(b, a.studentId)).toEqual([a.parentId]);
    b = await afterChange(() => t.db.delete(parents).where(eq(parents.id, a.parentId)));
    expect(collectorIds(b, a.studentId)).toEqual([]);
  });

  it("shows each change of the day's status, even one written without an event (the board's text is kept by all it is made of)", async () => {
    const c = await makeFamily(t, NORTH);
    const { seq } = await board();
    let b = await afterChange(() =>
      t.db.insert(dismissalArrivals).values({ schoolId: NORTH, date: TODAY, studentId: c.studentId, userId: c.userId }),
    );
    expect(lineOf(b, c.studentId)?.status).toBe("arrived");
    b = await afterChange(() =>
      t.db.update(dismissalArrivals).set({ status: "called" }).where(eq(dismissalArrivals.studentId, c.studentId)),
    );
    expect(lineOf(b, c.studentId)?.status).toBe("called");
    b = await afterChange(() =>
      t.db.insert(dismissalReleases).values({
        schoolId: NORTH,
        date: TODAY,
        studentId: c.studentId,
        collectorKind: "guardian",
        collectorId: c.parentId,
        collectorName: "Pat Family",
        method: "list",
        releasedAt: "2026-11-23T20:45:00.000Z",
      }),
    );
    expect(lineOf(b, c.studentId)?.status).toBe("released");
    // No event was written: the board's text followed the rows themselves.
    expect(b.seq).toBe(seq);
  });
});
