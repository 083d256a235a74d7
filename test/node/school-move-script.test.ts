/**
 * `npm run school:move -- <schoolId> <binding>` (scripts/school-move.mjs), run as an operator runs
 * it: a real process calling a real HTTP server (the app on libSQL, one database, on a free port),
 * signed in as the demo super-admin through the development outbox when no token is given. It
 * prints the move's answer, or says why the API refused it and exits non-zero.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApp } from "./libsql-app";

const script = new URL("../../scripts/school-move.mjs", import.meta.url).pathname;

function schoolMove(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { env: { ...process.env, API_URL: "" }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

let dev: Awaited<ReturnType<typeof serveApp>>;

beforeAll(async () => {
  dev = await serveApp("development");
});

afterAll(async () => {
  await dev?.close();
});

describe("npm run school:move", () => {
  it("signs in as the super-admin and prints the answer: a school already there moves nothing", async () => {
    const run = await schoolMove(["2", "DB", "--url", dev.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      schoolId: 2,
      source: "DB",
      target: "DB",
      moved: false,
      rows: {},
      anchors: {},
    });
    expect(run.stderr).toContain("was on DB already");
  });

  it("says why the API refused the move, and exits non-zero", async () => {
    // This server has one database (libSQL): no DB_SHARD_1 to move to.
    const run = await schoolMove(["2", "DB_SHARD_1", "--url", dev.url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("422 There is no database bound as DB_SHARD_1 (DB)");
    expect(run.stdout).toBe("");
  });

  it("refuses bad arguments before calling anything", async () => {
    for (const args of [[], ["x", "DB"], ["2", "SHARD_1"], ["2", "DB", "extra"]]) {
      const run = await schoolMove([...args, "--url", "http://127.0.0.1:9"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("usage: npm run school:move");
    }
  });
});
