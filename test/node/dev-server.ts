/**
 * The project served as `npm run dev` serves it, for the tests that drive it from a browser
 * (test/node/docs-page.test.ts, test/node/cors-browser.test.ts): `wrangler dev --env dev` with the
 * real wrangler.toml on a free port, local D1 migrated and seeded in a temporary directory, and
 * headless Chromium where it is installed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { expect, inject } from "vitest";
import { ROOT } from "../../bench/bundle";
import { CHROMIUM, freshState, hasChromium } from "./dev-state";

export { CHROMIUM, hasChromium } from "./dev-state";
/** Why a Chromium test is skipped, for its describe's title. */
export const chromiumNote = hasChromium
  ? ""
  : ` (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium, or set CHROMIUM_PATH)`;

/** The demo school's administrator (seed/demo.sql). */
export const ADMIN_PHONE = "+15550000002";

export interface DevServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  stop: () => Promise<void>;
}

/** `wrangler dev` on a free port over a fresh local D1 of its own (the migrations and the demo seed); `vars` added. */
export async function startDevServer(vars: Record<string, string> = {}): Promise<DevServer> {
  // A copy of the build project's migrated and seeded state (test/node/dev-global-setup.ts), or,
  // outside it, migrated and seeded here.
  const state = await freshState(inject("devServerState"));

  const all = {
    ENVIRONMENT: "development",
    SMS_PROVIDER: "log",
    AUTH_SECRET: "dev-server-secret-0123456789abcdef0123456789",
    S3_ACCESS_KEY_ID: "dev",
    S3_SECRET_ACCESS_KEY: "dev",
    ...vars,
  };
  // `wrangler dev` as `npm run dev` runs it (its [build] command fills public/), on a free port.
  const server: ChildProcess = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      ...["--env", "dev"],
      ...["--ip", "127.0.0.1", "--port", "0", "--inspector-port", "0", "--persist-to", state],
      "--show-interactive-dev-session=false",
      ...Object.entries(all).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ],
    {
      cwd: ROOT,
      detached: true,
      // WRANGLER_LOG: "Ready on" is wrangler's info output (vitest.config.ts quiets it to warn).
      // No `request.cf` sample fetched from the internet (scripts/dev.ts says why).
      env: {
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        CI: "1",
        NO_COLOR: "1",
        WRANGLER_LOG: "log",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const stop = async () => {
    if (server.pid && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      process.kill(-server.pid, "SIGTERM"); // wrangler and the workerd it started
      await exited;
    }
    rmSync(state, { recursive: true, force: true });
  };
  let output = "";
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk;
        const ready = /Ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (ready?.[1]) resolve(ready[1]);
      };
      server.stdout?.on("data", onData);
      server.stderr?.on("data", onData);
      server.once("exit", (code) => reject(new Error(`wrangler dev exited ${code}:\n${output}`)));
    });
    return { base, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Headless Chromium, with nothing in the background that reaches the internet. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });

/** An access token through the development sign-in: send a code, read the outbox, verify. */
export async function accessToken(base: string, phone = ADMIN_PHONE) {
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  expect((await post("/api/v1/auth/send-verification-code", { phone })).status).toBe(202);
  const outbox = (await (await fetch(`${base}/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`)).json()) as {
    data: { body: string }[];
  };
  const code = /\b(\d{6})\b/.exec(outbox.data[0]?.body ?? "")?.[1] ?? "";
  const verified = await post("/api/v1/auth/verify-code", { phone, code });
  expect(verified.status).toBe(200);
  return ((await verified.json()) as { accessToken: string }).accessToken;
}
