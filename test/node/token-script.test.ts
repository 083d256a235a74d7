/**
 * `npm run token -- <phone>` (scripts/token.mjs), run as a developer runs it: a real process
 * calling a real HTTP server (the app on libSQL, on a free port) through send-code, the outbox and
 * verify-code. It must print a token the API accepts, or say clearly why it cannot.
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApp } from "./libsql-app";

const script = new URL("../../scripts/token.mjs", import.meta.url).pathname;

function token(args: string[], apiUrl?: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = { ...process.env, API_URL: apiUrl ?? "" };
    execFile(process.execPath, [script, ...args], { env, timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let dev: Awaited<ReturnType<typeof serveApp>>;
let prod: Awaited<ReturnType<typeof serveApp>>;

beforeAll(async () => {
  [dev, prod] = await Promise.all([serveApp("development"), serveApp("production")]);
});

afterAll(async () => {
  await Promise.all([dev?.close(), prod?.close()]);
});

const me = (url: string, accessToken: string) =>
  fetch(`${url}/api/v1/user/me`, { headers: { authorization: `Bearer ${accessToken}` } });

describe("npm run token", () => {
  it("prints an access token the API accepts, as often as it is run", async () => {
    for (let i = 0; i < 2; i++) {
      const run = await token(["+15550000002"], dev.url);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const accessToken = run.stdout.trim();
      expect(accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const res = await me(dev.url, accessToken);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: 2, phone: "+15550000002" });
    }
  });

  it("prints the whole session with --json", async () => {
    const run = await token(["--json", "+15550000004"], dev.url);
    expect(run.code).toBe(0);
    const session = JSON.parse(run.stdout) as { accessToken: string; refreshToken: string; user: { id: number } };
    expect(session).toMatchObject({ tokenType: "Bearer", expiresIn: 600, user: { id: 4, phone: "+15550000004" } });
    expect(session.refreshToken.length).toBeGreaterThan(20);
    expect((await me(dev.url, session.accessToken)).status).toBe(200);
  });

  it("says so when no server answers at API_URL", async () => {
    // A port that was free a moment ago and has nothing listening now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const run = await token(["+15550000002"], `http://127.0.0.1:${port}`);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/no API at http:\/\/127\.0\.0\.1:\d+ .*npm run dev/);
  });

  it("says so when the server is not in development", async () => {
    const run = await token(["+15550000002"], prod.url);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/not running with ENVIRONMENT=development/);
  });

  it("says so when the number cannot sign in", async () => {
    const run = await token(["+15559999999"], dev.url);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no code reached the outbox for \+15559999999/);
  });

  it("explains its arguments", async () => {
    for (const args of [[], ["15550000002"], ["+15550000002", "+15550000003"], ["+15550000002", "--jsn"]]) {
      const run = await token(args, dev.url);
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.stderr, args.join(" ")).toMatch(/usage: npm run token -- <phone/);
    }
  });
});
