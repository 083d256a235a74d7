/** The transport block of seed/demo.sql is what scripts/demo-transport.ts generates (and generating is deterministic). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { demoSchoolSql } from "../../scripts/demo-school";
import { demoTransportPlan, demoTransportSql, transportBlockOf } from "../../scripts/demo-transport";

const seed = () => readFileSync(new URL("../../seed/demo.sql", import.meta.url).pathname, "utf8");

describe("demo transport", () => {
  it("seed/demo.sql holds the generated block, unchanged (run npx tsx scripts/demo-transport.ts)", () => {
    expect(transportBlockOf(seed())).toBe(demoTransportSql());
    expect(demoTransportSql()).toBe(demoTransportSql());
  });

  it("comes after the school block, whose students it puts on routes", () => {
    const text = seed();
    expect(text.indexOf(demoTransportSql())).toBeGreaterThan(text.indexOf(demoSchoolSql()));
  });

  it("has 4 vehicles, 8 routes (one each way per vehicle), about 150 riders, one suspension, seats for every day", () => {
    const plan = demoTransportPlan();
    expect(plan.vehicles).toHaveLength(4);
    expect(plan.routes).toHaveLength(8);
    for (const v of plan.vehicles) {
      expect(
        plan.routes
          .filter((r) => r.transport === v.id)
          .map((r) => r.direction)
          .sort(),
      ).toEqual(["home", "to_school"]);
    }
    expect(new Set(plan.riders.map((r) => r.student)).size).toBe(150);
    expect(plan.riders.filter((r) => r.suspension)).toHaveLength(1);
    // One route per student, direction and weekday; no route carries more riders than its vehicle seats.
    const days = new Set<string>();
    const load = new Map<string, number>();
    for (const r of plan.riders) {
      for (let d = 1; d <= 7; d++) {
        if (!(r.weekdays & (1 << (d - 1)))) continue;
        const key = `${r.student}:${r.direction}:${d}`;
        expect(days.has(key), key).toBe(false);
        days.add(key);
        load.set(`${r.route}:${d}`, (load.get(`${r.route}:${d}`) ?? 0) + 1);
      }
      const stop = plan.stops.find((s) => s.id === r.stop);
      expect(stop?.route).toBe(r.route);
    }
    for (const [key, riders] of load) {
      const route = plan.routes.find((r) => r.id === Number(key.split(":")[0]));
      const seats = plan.vehicles.find((v) => v.id === route?.transport)?.seats ?? 0;
      expect(riders, key).toBeLessThanOrEqual(seats);
    }
  });

  it("is idempotent by construction: only INSERT OR IGNORE, no clock", () => {
    const statements = demoTransportSql()
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim());
    for (const s of statements) expect(s).toMatch(/^INSERT OR IGNORE INTO /);
    expect(demoTransportSql()).not.toMatch(/datetime\('now'\)|CURRENT_TIMESTAMP/);
  });
});
