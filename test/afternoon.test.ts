/**
 * A scripted afternoon at Northside, end to end through the API, across the modules that make it:
 * a parent asks an absence and the office confirms it; a request after the deadline is refused with
 * `too-late` (the dry-run says so first); twenty families race for the last three seats of a bus;
 * a fixed weekly pickup is made ahead and the daily job, run twice, makes nothing twice; a go-home
 * invitation accepted makes the child's pickup; and the day's summary and pending list show it all.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { grantsOf } from "../src/modules";
import { generateFixedExitPermissions } from "../src/modules/exit-permission/fixed";
import { readJson } from "./fixture-kit";
import { makeFamily, parentToken, schoolDate } from "./fixtures/modules/exit-permission";
import { makeRoute } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp } from "./helpers";

const NORTH = 1;
const P = "/api/v1/exit-permission";
const S = "/api/v1/transportation-summary";
const t = makeTestApp();
const office = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const asParent = (userId: number) => t.token(userId, { [NORTH]: grantsOf("parent").map((p) => p.name) });

type Failure = { code: string; message: string; [fact: string]: unknown };
type Summary = {
  schoolDay: boolean;
  counts: Record<string, number>;
  data: { studentId: number; way: string; permission: { collector: { name: string } | null } | null }[];
};

/** The school year's automatic confirmation, on or off. */
async function autoConfirm(on: boolean) {
  await t.db.delete(schoolConfigurations).where(eq(schoolConfigurations.schoolId, NORTH));
  await t.db.insert(schoolConfigurations).values({
    schoolId: NORTH,
    name: "2026-2027",
    startDate: "2026-08-01",
    endDate: "2027-07-31",
    autoConfirmExitPermissions: on,
  });
}

const ask = async (path: string, body: object, token: string) =>
  t.request(`${P}${path}`, { method: "POST", token, school: NORTH, body });

async function summary(query: string): Promise<Summary> {
  const res = await t.request(`${S}?${query}&pageSize=100`, { token: await office(), school: NORTH });
  expect(res.status, await res.clone().text()).toBe(200);
  return readJson<Summary>(res);
}

describe("an afternoon at Northside", () => {
  it("asks, confirms, refuses what is late, shares the last seats, repeats fixed pickups once, honours an invitation", async () => {
    const date = schoolDate(t);
    await autoConfirm(false);

    // 1. A parent asks an absence: pending until the office confirms it.
    const sick = await makeFamily(t, NORTH);
    const absence = await ask(
      "/absence",
      { studentId: sick.studentId, date, reason: "Fever" },
      await parentToken(t, sick, NORTH),
    );
    expect(absence.status, await absence.clone().text()).toBe(201);
    const asked = await readJson<{ id: number; status: string }>(absence);
    expect(asked.status).toBe("pending");
    const pending = await t.request(`${S}/pending?date=${date}&pageSize=100`, { token: await office(), school: NORTH });
    expect((await readJson<{ data: { id: number }[] }>(pending)).data.map((p) => p.id)).toContain(asked.id);
    const confirmed = await t.request(`${P}/${asked.id}/confirm`, {
      method: "PATCH",
      token: await office(),
      school: NORTH,
      body: { status: "confirmed" },
    });
    expect(confirmed.status).toBe(200);
    expect((await summary(`date=${date}&way=absence`)).data.map((s) => s.studentId)).toContain(sick.studentId);

    // 2. Too late: the dry-run says so before the parent presses send, and the request is refused.
    const late = await makeFamily(t, NORTH);
    const saved = t.clock.current;
    try {
      t.clock.current = new Date(`${date}T23:30:00.000Z`); // 17:30 in Mexico City: after every dismissal
      const lateToken = await parentToken(t, late, NORTH);
      const body = { studentId: late.studentId, date, reason: "Goes to grandma's" };
      const dry = await ask("/dry-run", { ...body, kind: "no_after_school" }, lateToken);
      expect(dry.status).toBe(200);
      const verdict = await readJson<{ ok: boolean; failures: Failure[] }>(dry);
      expect(verdict.ok).toBe(false);
      expect(verdict.failures.map((f) => f.code)).toContain("too-late");
      const refused = await ask("/no-after-school", body, lateToken);
      expect(refused.status).toBe(422);
      const problem = await readJson<{ failures: Failure[] }>(refused);
      const tooLate = problem.failures.find((f) => f.code === "too-late");
      expect(tooLate?.deadline).toMatch(new RegExp(`^${date}T\\d\\d:\\d\\d:00-06:00$`));
      const written = await t.db.select().from(exitPermissions).where(eq(exitPermissions.studentId, late.studentId));
      expect(written).toEqual([]);
    } finally {
      t.clock.current = saved;
    }

    // 3. Twenty families ask for a bus with three seats left, confirmed as asked: exactly three get one.
    await autoConfirm(true);
    const bus = await makeRoute(t, NORTH, { seats: 3 });
    const families = await Promise.all(Array.from({ length: 20 }, () => makeFamily(t, NORTH)));
    const tokens = await Promise.all(families.map((f) => parentToken(t, f, NORTH)));
    const answers = await Promise.all(
      families.map((f, i) =>
        ask(
          "/route-change",
          { studentId: f.studentId, date, routeId: bus.routeId, stopId: bus.stopIds[0], reason: "Play date" },
          tokens[i] ?? "",
        ),
      ),
    );
    const won = answers.filter((r) => r.status === 201);
    expect(won).toHaveLength(3);
    for (const r of won) expect((await readJson<{ status: string }>(r)).status).toBe("confirmed");
    for (const r of answers.filter((a) => a.status !== 201)) {
      expect(r.status).toBe(422);
      expect((await readJson<{ failures: Failure[] }>(r)).failures.map((f) => f.code)).toContain("no-seat");
    }
    const onBus = await summary(`date=${date}&routeId=${bus.routeId}`);
    expect(onBus.data.filter((s) => s.way === "route_change")).toHaveLength(3);

    // 4. A weekly pickup, made ahead; the daily job run twice makes nothing twice.
    const weekly = await makeFamily(t, NORTH);
    const fixedRes = await ask(
      "/fixed/auto-pickup",
      { studentId: weekly.studentId, weekdays: [1, 2, 3, 4, 5], fromDate: date, untilDate: "2027-06-30" },
      await parentToken(t, weekly, NORTH),
    );
    expect(fixedRes.status, await fixedRes.clone().text()).toBe(201);
    const made = await t.db.select().from(exitPermissions).where(eq(exitPermissions.studentId, weekly.studentId));
    expect(made.length).toBeGreaterThan(0);
    await generateFixedExitPermissions(t.deps);
    await generateFixedExitPermissions(t.deps);
    const again = await t.db.select().from(exitPermissions).where(eq(exitPermissions.studentId, weekly.studentId));
    expect(again).toHaveLength(made.length);
    expect(new Set(again.map((p) => p.date)).size).toBe(again.length);

    // 5. The demo parent invites another family's child home; that family accepts: the child's
    //    pickup by the demo parent is made through the rules (and confirmed: the school confirms as asked).
    const friend = await makeFamily(t, NORTH);
    const invited = await t.request("/api/v1/invitation", {
      method: "POST",
      token: await asParent(DEMO.northParent.id),
      body: { title: "Se va con nosotros", date, studentIds: [friend.studentId] },
    });
    expect(invited.status, await invited.clone().text()).toBe(201);
    const { id: invitationId } = await readJson<{ id: number }>(invited);
    const accepted = await t.request(`/api/v1/invitation/${invitationId}/respond`, {
      method: "POST",
      token: await asParent(friend.userId),
      body: { answer: "accepted" },
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    const [child] = (await readJson<{ data: { exitPermissionId: number | null; failures: unknown }[] }>(accepted)).data;
    expect(child?.failures ?? null).toBeNull();
    expect(child?.exitPermissionId).toEqual(expect.any(Number));
    const [pickup] = await t.db
      .select()
      .from(exitPermissions)
      .where(eq(exitPermissions.id, child?.exitPermissionId ?? 0));
    expect(pickup).toMatchObject({
      kind: "auto_pickup",
      status: "confirmed",
      invitationId,
      studentId: friend.studentId,
    });

    // The office's view of the day: every way above, counted.
    const day = await summary(`date=${date}&way=auto_pickup`);
    const friendRow = day.data.find((s) => s.studentId === friend.studentId);
    expect(friendRow?.permission?.collector?.name).toBeTruthy();
    expect(day.data.map((s) => s.studentId)).toContain(weekly.studentId);
    expect(day.counts.route_change).toBeGreaterThanOrEqual(3);
    expect(day.counts.absence).toBeGreaterThanOrEqual(1);
  });
});
