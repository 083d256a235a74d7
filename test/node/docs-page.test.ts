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
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../bench/bundle";
import { createApp } from "../../src/app";
import type { Deps } from "../../src/deps";
import {
  ADMIN_PHONE,
  accessToken,
  chromiumNote,
  type DevServer,
  hasChromium,
  launchChromium,
  startDevServer,
} from "./dev-server";

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

describe.skipIf(!hasChromium)(`the docs page in Chromium${chromiumNote}`, () => {
  let server: DevServer | undefined;
  let base = "";
  let browser: Browser | undefined;

  beforeAll(async () => {
    server = await startDevServer();
    base = server.base;
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  it("renders the operations, authorizes, and tries GET /api/v1/user/me", async () => {
    const token = await accessToken(base);
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
});
