/**
 * `npm run bench:peak` (bench/peak.mjs) in a tiny configuration: 2 schools, 2 seconds, run as a
 * developer runs it on a Worker already built (`--dist`: the one the build project's global setup
 * built, which the bundle test measures): it serves it in workerd, seeds, loads it. Its figures are
 * not judged here (docs/scaling.md holds them, with the machine's load); its output's shape is, so that
 * the bench cannot rot: every kind of request answered 2xx, the peak table, the shard counts (2 is
 * run once the build declares DB_SHARD_1, else said skipped with its reason), the cost per request
 * of every kind and the storage figures.
 */
import { execFile } from "node:child_process";
import { describe, expect, inject, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const KINDS = ["parent-plan", "parent-permissions", "parent-ask", "office-summary", "office-confirm", "driver-list"];

interface Kind {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}
interface Result {
  config: { schools: number; seconds: number };
  runs: {
    shards: number;
    placement: Record<string, number>;
    requests: number;
    failed: number;
    rps: number;
    kinds: Record<string, Kind>;
  }[];
  skipped: { shards: number; reason: string }[];
  ratio: number | null;
  cost: Record<string, { d1Calls: number; rowsRead: number; rowsWritten: number; d1Ms: number; cpuMs: number }>;
  storage: { dayBytes: number; bytesPerAuditRow: number; rows: Record<string, number>; asked: number };
  sizes: { migrated: number; demo: number; generated: number };
}

function peak(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      "npm",
      ["run", "-s", "bench:peak", "--", ...args],
      { cwd: ROOT, timeout: 170_000, maxBuffer: 10 * 2 ** 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("npm run bench:peak", () => {
  // Its parts: the build, 60 migrations and the seed, 2 s of load, the cost pass, the simulated
  // afternoon; ~22 s of CPU in all. Measured 33 s at load average ~10 on 2 cores and 70 s at ~17
  // (2026-12-07, other engineers' runs); under 20 s needs a quieter machine than that.
  it("runs 3 pm for 2 schools for 2 seconds and prints every figure", { timeout: 180_000 }, async () => {
    const run = await peak([
      "--schools=2",
      "--seconds=2",
      "--warmup=0",
      "--students=20",
      "--routes=2",
      "--connections=8",
      "--cost-samples=3",
      "--audit-copies=200",
      "--day-share=0.05",
      // The Worker the bundle test measures, built once (test/node/dev-global-setup.ts).
      `--dist=${inject("workerBuild")}`,
    ]);
    // Failures and stack traces go to stderr (a tool's warning there is not the bench's failure).
    expect(run.stderr, run.stdout).not.toMatch(/FAILED|Error|\n\s+at /);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^load average at the start \(1, 5, 15 min\): [\d.]+, [\d.]+, [\d.]+$/m);
    expect(run.stdout).toContain("## The peak (2 schools, 8 clients, 2 s)");
    expect(run.stdout).toMatch(/^\| kind \| 1 shard\(s\) req\/s \| p50 ms \| p99 ms \| failed \|/m);
    for (const kind of KINDS) expect(run.stdout).toMatch(new RegExp(`^\\| ${kind} \\| [\\d.-]+ \\|`, "m"));
    expect(run.stdout).toMatch(
      /^ratio 2 shards \/ 1 shard: (\d+\.\d\d × the throughput \(the median of the \d+ rounds' ratios; .+\)|n\/a \(.+\))$/m,
    );
    expect(run.stdout).toMatch(
      /^\| kind \| D1 calls\/req \| rows read\/req \| rows written\/req \| D1 SQL ms\/req \| workerd CPU ms\/req \|$/m,
    );
    expect(run.stdout).toMatch(/^audit rows: 200 copies of the day's audit rows: \d+ bytes per audit row/m);

    const line = run.stdout.split("\n").find((l) => l.startsWith("peak-result: "));
    expect(line).toBeDefined();
    const result = JSON.parse(line?.slice("peak-result: ".length) ?? "null") as Result;
    expect(result.config).toMatchObject({ schools: 2, seconds: 2 });

    const one = result.runs.find((r) => r.shards === 1);
    expect(one?.placement).toEqual({ DB: 2 });
    expect(one?.failed).toBe(0);
    expect(one?.requests).toBeGreaterThan(0);
    expect(one?.rps).toBeGreaterThan(0);
    expect(Object.keys(one?.kinds ?? {}).sort()).toEqual([...KINDS].sort());
    for (const k of Object.values(one?.kinds ?? {})) {
      expect(k.failed).toBe(0);
      if (k.requests > 0) expect(k.p99).toBeGreaterThanOrEqual(k.p50);
    }
    // Two shards: measured when the build has them (a school on each database), else skipped and said why.
    const two = result.runs.find((r) => r.shards === 2);
    if (two) {
      expect(two.placement).toEqual({ DB: 1, DB_SHARD_1: 1 });
      expect(two.failed).toBe(0);
      expect(result.ratio).toBeGreaterThan(0);
    } else {
      expect(result.skipped).toEqual([{ shards: 2, reason: expect.stringContaining("DB_SHARD_1") }]);
      expect(result.ratio).toBeNull();
    }

    // Every kind's cost: reads read rows, the writes write some; each at least one D1 round trip.
    expect(Object.keys(result.cost).sort()).toEqual([...KINDS].sort());
    for (const [kind, c] of Object.entries(result.cost)) {
      expect(c.d1Calls, kind).toBeGreaterThanOrEqual(1);
      expect(c.rowsRead, kind).toBeGreaterThan(0);
      // Local D1 times a statement in whole milliseconds: a fast kind may average 0 over 2 requests.
      expect(c.d1Ms, kind).toBeGreaterThanOrEqual(0);
      if (kind === "parent-ask" || kind === "office-confirm") expect(c.rowsWritten, kind).toBeGreaterThan(0);
      else expect(c.rowsWritten, kind).toBe(0);
    }

    // The demo school's afternoon grew the database, with audit rows among its rows.
    expect(result.storage.asked).toBeGreaterThan(0);
    expect(result.storage.dayBytes).toBeGreaterThan(0);
    expect(result.storage.rows.audit_log).toBeGreaterThan(0);
    expect(result.storage.bytesPerAuditRow).toBeGreaterThan(100);
    expect(result.sizes.demo).toBeGreaterThan(result.sizes.migrated);
    expect(result.sizes.generated).toBeGreaterThan(result.sizes.demo);
  });
});
