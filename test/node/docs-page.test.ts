/**
 * The API docs page (/api/docs) works with no internet: Swagger UI's files come from our own
 * deployment (Workers Static Assets, public/), never from a CDN.
 *
 * - Always: the page references only local assets, and scripts/docs-assets.mjs provides each one.
 * - Where Chromium is installed (/usr/bin/chromium, or CHROMIUM_PATH): `wrangler dev` serves the
 *   project on a free port with its real wrangler.toml (local D1 migrated and seeded in a temp
 *   directory), and headless Chromium, with every request that leaves that server refused, loads
 *   the page, sees the operations, authorizes with a bearer token from the dev outbox sign-in,
 *   and runs "Try it out" on GET /api/v1/user/me, which answers 200; an operation's link opens it, the
 *   filter box narrows the tags, and executing a GET or a POST twice runs it twice (no example
 *   `If-None-Match` or `Idempotency-Key` pre-filled and sent every time).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
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

/**
 * The block of an operation, rendered: Swagger UI renders only the operations near the viewport, so
 * the page is scrolled down from the top until it appears.
 */
async function reveal(page: Page, method: string, path: string) {
  const block = page.locator(`.opblock-${method}:has(.opblock-summary-path[data-path="${path}"])`).first();
  for (let y = 0, height = 1; y <= height && (await block.count()) === 0; y += 600) {
    await page.evaluate((top) => window.scrollTo(0, top), y);
    await page.waitForTimeout(50);
    height = await page.evaluate(() => window.document.body.scrollHeight);
  }
  await block.scrollIntoViewIfNeeded();
  return block;
}

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
    await page.locator(".opblock").first().waitFor({ timeout: 60_000 });
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

    const me = await reveal(page, "get", "/api/v1/user/me");
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

  it("filters by tag, opens an operation from its link, and sends no fixed Idempotency-Key or If-None-Match", async () => {
    const token = await accessToken(base);
    const context = await browser?.newContext();
    if (!context) throw new Error("no browser");
    await context.route("**/*", (route) =>
      new URL(route.request().url()).origin === base ? route.continue() : route.abort(),
    );
    const page = await context.newPage();
    const sent: { method: string; path: string; headers: Record<string, string> }[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith("/api/v1/")) {
        sent.push({ method: request.method(), path: url.pathname, headers: request.headers() });
      }
    });

    // A deep link opens its operation.
    await page.goto(`${base}/api/docs#/Access_control/listPermissions`);
    await page.locator("#operations-Access_control-listPermissions.is-open").waitFor({ timeout: 60_000 });

    // The filter box narrows the page to the tags that match.
    const filter = page.locator("input.operation-filter-input");
    await filter.fill("Access control");
    const shown = () => page.locator(".opblock").evaluateAll((els) => els.map((e) => e.id.split("-")[1]));
    await expect.poll(shown).toEqual(Array(5).fill("Access_control"));
    await filter.fill("");

    await page.locator(".auth-wrapper button.authorize").click();
    const dialog = page.locator(".modal-ux");
    await dialog.locator("input").first().fill(token);
    await dialog.locator(".auth-btn-wrapper button.authorize").click();
    await dialog.locator("button.btn-done").click();

    /** Opens an operation, turns on Try it out, and executes it twice: each answer's status. */
    async function executeTwice(method: string, path: string) {
      const block = await reveal(page, method, path);
      await block.locator(".opblock-summary").click();
      await block.locator("button.try-out__btn").click();
      const statuses: string[] = [];
      for (let i = 0; i < 2; i++) {
        const answered = page.waitForResponse(
          (r) => new URL(r.url()).pathname === path && r.request().method() === method.toUpperCase(),
        );
        await block.locator("button.execute").click();
        statuses.push(String((await answered).status()));
        await block.locator("button.btn-clear").click();
      }
      return statuses;
    }

    // A GET twice: both 200 (no If-None-Match pre-filled with a tag of the docs' own).
    expect(await executeTwice("get", "/api/v1/user/me")).toEqual(["200", "200"]);
    // A POST twice: both run (no Idempotency-Key pre-filled: one fixed key would replay the first
    // answer here, and make the user's next other write a 422 for a day).
    expect(await executeTwice("post", "/api/v1/device-token")).toEqual(["201", "201"]);

    const gets = sent.filter((r) => r.method === "GET" && r.path === "/api/v1/user/me");
    const posts = sent.filter((r) => r.method === "POST" && r.path === "/api/v1/device-token");
    expect(gets).toHaveLength(2);
    expect(posts).toHaveLength(2);
    for (const r of gets) expect(r.headers["if-none-match"]).toBeUndefined();
    const keys = posts.map((r) => r.headers["idempotency-key"]);
    expect(keys[0] === undefined || keys[0] !== keys[1], `Idempotency-Key ${keys.join(", ")}`).toBe(true);
    await context.close();
  }, 120_000);
});
