/**
 * The API docs page (/api/docs) works with no internet: Swagger UI's files come from our own
 * deployment (Workers Static Assets, public/), never from a CDN.
 *
 * - Always: the page references only local assets, and scripts/docs-assets.mjs provides each one.
 * - Where Chromium is installed (/usr/bin/chromium, or CHROMIUM_PATH): `wrangler dev` serves the
 *   project on a free port with its real wrangler.toml (local D1 migrated and seeded in a temp
 *   directory), and headless Chromium, with every request that leaves that server refused, loads
 *   the page, sees the operations, authorizes with a bearer token from the dev outbox sign-in,
 *   and runs "Try it out" on GET /api/v1/user/me, which answers 200.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getPlatformProxy } from "wrangler";
import { ROOT } from "../../bench/bundle";
import { createApp } from "../../src/app";
import { migrationStatements, scriptStatements } from "../../src/db/sql-script";
import type { Deps } from "../../src/deps";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const ADMIN_PHONE = "+15550000002";

/** The `src`/`href` of the page's scripts and stylesheets. */
function assetUrls(html: string) {
  return [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"/g)].map((m) => m[1] as string);
}

describe("the docs page's assets", () => {
  it("are served from this deployment, and the assets script provides each one", async () => {
    const app = createApp({ deps: () => ({}) as Deps, development: false });
    const html = await (await app.request("http://localhost/api/docs", {}, {} as Env)).text();
    const urls = assetUrls(html);
    expect(urls.map((u) => u.replace(/.*\//, "")).sort()).toEqual(["swagger-ui-bundle.js", "swagger-ui.css"]);
    execFileSync(process.execPath, [join(ROOT, "scripts/docs-assets.mjs")], { stdio: "pipe" });
    const version = JSON.parse(readFileSync(join(ROOT, "node_modules/swagger-ui-dist/package.json"), "utf8")).version;
    for (const url of urls) {
      expect(url).toMatch(new RegExp(`^/api/docs/assets/${version.replaceAll(".", "\\.")}/`));
      expect(existsSync(join(ROOT, "public", url)), url).toBe(true);
    }
    // Nothing on the page points elsewhere.
    expect(html).not.toMatch(/https?:\/\//);
  });
});

describe.skipIf(!hasChromium)(
  `the docs page in Chromium${hasChromium ? "" : ` (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium, or set CHROMIUM_PATH)`}`,
  () => {
    const state = mkdtempSync(join(tmpdir(), "docs-page-"));
    let server: ChildProcess | undefined;
    let output = "";
    let base = "";
    let browser: Browser | undefined;

    beforeAll(async () => {
      // Local D1 for `wrangler dev --persist-to`: the real migrations and the demo seed.
      const proxy = await getPlatformProxy<{ DB: D1Database }>({
        configPath: join(ROOT, "wrangler.toml"),
        environment: "dev",
        persist: { path: join(state, "v3") },
      });
      try {
        const db = proxy.env.DB;
        const dir = join(ROOT, "migrations");
        for (const file of readdirSync(dir)
          .filter((f) => f.endsWith(".sql"))
          .sort()) {
          await db.batch(migrationStatements(readFileSync(join(dir, file), "utf8")).map((s) => db.prepare(s)));
        }
        await db.batch(scriptStatements(readFileSync(join(ROOT, "seed/demo.sql"), "utf8")).map((s) => db.prepare(s)));
      } finally {
        await proxy.dispose();
      }

      // `wrangler dev` as `npm run dev` runs it (its [build] command fills public/), on a free port.
      server = spawn(
        process.execPath,
        [
          join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
          "dev",
          ...["--env", "dev"],
          ...["--ip", "127.0.0.1", "--port", "0", "--inspector-port", "0", "--persist-to", state],
          "--show-interactive-dev-session=false",
          ...["--var", "ENVIRONMENT:development", "--var", "SMS_PROVIDER:log"],
          ...["--var", "AUTH_SECRET:docs-page-secret-0123456789abcdef0123456789"],
          ...["--var", "S3_ACCESS_KEY_ID:docs", "--var", "S3_SECRET_ACCESS_KEY:docs"],
        ],
        {
          cwd: ROOT,
          detached: true,
          // WRANGLER_LOG: "Ready on" is wrangler's info output (vitest.config.ts quiets it to warn).
          env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1", WRANGLER_LOG: "log" },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      base = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk;
          const ready = /Ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (ready?.[1]) resolve(ready[1]);
        };
        server?.stdout?.on("data", onData);
        server?.stderr?.on("data", onData);
        server?.once("exit", (code) => reject(new Error(`wrangler dev exited ${code}:\n${output}`)));
      });

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
      });
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      if (server?.pid && server.exitCode === null) {
        const exited = new Promise((resolve) => server?.once("exit", resolve));
        process.kill(-server.pid, "SIGTERM"); // wrangler and the workerd it started
        await exited;
      }
      rmSync(state, { recursive: true, force: true });
    }, 60_000);

    /** An access token through the development sign-in: send a code, read the outbox, verify. */
    async function accessToken() {
      const post = (path: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      expect((await post("/api/v1/auth/send-verification-code", { phone: ADMIN_PHONE })).status).toBe(202);
      const outbox = (await (
        await fetch(`${base}/api/v1/dev/outbox?to=${encodeURIComponent(ADMIN_PHONE)}`)
      ).json()) as {
        data: { body: string }[];
      };
      const code = /\b(\d{6})\b/.exec(outbox.data[0]?.body ?? "")?.[1] ?? "";
      const verified = await post("/api/v1/auth/verify-code", { phone: ADMIN_PHONE, code });
      expect(verified.status).toBe(200);
      return ((await verified.json()) as { accessToken: string }).accessToken;
    }

    it("renders the operations, authorizes, and tries GET /api/v1/user/me", async () => {
      const token = await accessToken();
      const document = (await (await fetch(`${base}/api/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);

      const context = await browser?.newContext();
      if (!context) throw new Error("no browser");
      // No internet: whatever leaves the local server is refused, and recorded.
      const elsewhere: string[] = [];
      await context.route("**/*", (route) => {
        if (new URL(route.request().url()).origin === base) return route.continue();
        elsewhere.push(route.request().url());
        return route.abort();
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (err) => errors.push(err.message));

      await page.goto(`${base}/api/docs`);
      await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
      // With this many operations Swagger UI renders only those near the viewport: scroll the page
      // through and collect every operation block that appears.
      const seen = new Set<string>();
      for (let y = 0, height = 1; y <= height; y += 600) {
        await page.evaluate((top) => window.scrollTo(0, top), y);
        await page.waitForTimeout(50);
        for (const id of await page.locator(".opblock").evaluateAll((els) => els.map((e) => e.id))) seen.add(id);
        height = await page.evaluate(() => window.document.body.scrollHeight);
      }
      expect(seen.size).toBe(operations);
      await page.evaluate(() => window.scrollTo(0, 0));

      await page.locator(".auth-wrapper button.authorize").click();
      const dialog = page.locator(".modal-ux");
      await dialog.locator("input").first().fill(token);
      await dialog.locator(".auth-btn-wrapper button.authorize").click();
      await dialog.locator("button.btn-done").click();

      const me = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/api/v1/user/me"])');
      await me.locator(".opblock-summary").click();
      await me.locator("button.try-out__btn").click();
      await me.locator("button.execute").click();
      const status = me.locator(".live-responses-table tr.response .response-col_status").first();
      await expect.poll(() => status.textContent(), { timeout: 30_000 }).toBe("200");
      expect(
        await me.locator(".live-responses-table tr.response .response-col_description").first().textContent(),
      ).toContain(ADMIN_PHONE);

      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    }, 120_000);
  },
);
