/** The afternoon block of seed/demo.sql is what scripts/demo-afternoon.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { afternoonBlockOf, demoAfternoonPlan, demoAfternoonSql, TODAY, WEEK } from "../../scripts/demo-afternoon";
import { demoTransportSql } from "../../scripts/demo-transport";

const seed = () => readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");

describe("demo afternoons", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-afternoon.ts)", () => {
    expect(afternoonBlockOf(seed())).toBe(demoAfternoonSql());
    expect(demoAfternoonSql()).toBe(demoAfternoonSql());
  });

  it("comes after the transport block, whose riders it moves", () => {
    const text = seed();
    expect(text.indexOf(demoAfternoonSql())).toBeGreaterThan(text.indexOf(demoTransportSql()));
  });

  it("has a week of every kind, at most one confirmed per student and day, pending ones for today", () => {
    const plan = demoAfternoonPlan();
    expect(new Set(plan.map((p) => p.kind))).toEqual(
      new Set(["route_change", "auto_pickup", "no_after_school", "absence"]),
    );
    for (const p of plan) expect(WEEK).toContain(p.date);
    const confirmed = plan.filter((p) => p.status === "confirmed").map((p) => `${p.student}:${p.date}`);
    expect(new Set(confirmed).size).toBe(confirmed.length);
    expect(plan.filter((p) => p.status === "pending").every((p) => p.date === TODAY)).toBe(true);
    expect(plan.some((p) => p.status === "pending")).toBe(true);
    expect(plan.some((p) => p.fixedId !== undefined)).toBe(true);
    // The accepted go-home invitation made one pickup by the inviting parent (user 4); the SQL
    // inserts its invitation before it and links the child's answer to it.
    const invited = plan.filter((p) => p.invitationId !== undefined);
    expect(invited).toMatchObject([{ kind: "auto_pickup", status: "confirmed", pickupParentUser: 4 }]);
    const sql = demoAfternoonSql();
    expect(sql.indexOf("INTO invitation (")).toBeLessThan(sql.indexOf("INTO exit_permission ("));
    expect(sql).toContain(`'accepted', 1022, '2026-11-24T16:30:00.000Z', ${invited[0]?.id},`);
    // A pickup names one collector; a route change a route (and stop) or a trusted address.
    for (const p of plan.filter((x) => x.kind === "auto_pickup")) {
      expect([p.pickupParentUser, p.trustedPerson].filter((v) => v !== undefined)).toHaveLength(1);
    }
    for (const p of plan.filter((x) => x.kind === "route_change")) {
      expect((p.route !== undefined) !== (p.trustedAddress !== undefined)).toBe(true);
    }
  });

  it("has a request that came too late: asked on its day after the 13:00 deadline, refused saying so", () => {
    const late = demoAfternoonPlan().filter((p) => p.decisionReason?.startsWith("Too late"));
    expect(late).toHaveLength(1);
    const [p] = late;
    expect(p).toMatchObject({ status: "rejected", askedByUser: 2 });
    // 13:00 in Mexico City is 19:00Z; asked after it, decided after it was asked.
    expect(p?.at?.asked.localeCompare("19:00:00.000Z")).toBe(1);
    expect(p?.at?.decided.localeCompare(p?.at?.asked ?? "")).toBe(1);
    expect(demoAfternoonSql()).toContain(`'${p?.date}T${p?.at?.asked}', '${p?.date}T${p?.at?.decided}')`);
  });

  it("is idempotent by construction: only INSERT OR IGNORE, no clock", () => {
    const statements = demoAfternoonSql()
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim());
    for (const s of statements) expect(s).toMatch(/^INSERT OR IGNORE INTO /);
    expect(demoAfternoonSql()).not.toMatch(/datetime\('now'\)|CURRENT_TIMESTAMP/);
  });
});
