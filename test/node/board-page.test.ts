/**
 * The office's live dismissal board, /board (web/board.html, served by Workers Static Assets), in
 * headless Chromium against `wrangler dev` with the real wrangler.toml (its Durable Object
 * included), the demo seeded, and the development clock at Monday 23 November 2026, 14:40 in
 * Mexico City (Northside's elementary dismissal window; `DEV_CLOCK`, src/index.ts). The page signs
 * in with the development sign-in, shows the board and the call list, and follows the live stream:
 * a release made through the API appears on the page without a reload; a release clicked on the
 * page is recorded.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessToken, chromiumNote, type DevServer, hasChromium, launchChromium, startDevServer } from "./dev-server";

type Board = {
  seq: number;
  students: {
    studentId: number;
    firstName: string;
    status: string;
    release: unknown;
    collectors: { kind: string; id: number; name: string }[];
  }[];
};

describe.skipIf(!hasChromium)(`the board page in Chromium${chromiumNote}`, () => {
  let server: DevServer | undefined;
  let browser: Browser | undefined;
  let base = "";

  beforeAll(async () => {
    server = await startDevServer({ DEV_CLOCK: "2026-11-23T20:40:00.000Z" });
    base = server.base;
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("shows the board, and a release made through the API appears without a reload; a click releases", async () => {
    if (!browser) throw new Error("no browser");
    const token = await accessToken(base);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, "x-school-id": "1", "content-type": "application/json" },
      });
    const board = async () => (await (await api("/api/v1/dismissal/board")).json()) as Board;
    const releasable = (b: Board) =>
      b.students.filter(
        (s) => !s.release && s.collectors.length > 0 && ["waiting", "arrived", "called"].includes(s.status),
      );

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    // Nothing leaves the dev server.
    await page.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => route.abort());
    await page.goto(`${base}/board`);
    await page.click("#demo");
    await page.waitForSelector("#board tbody tr", { timeout: 20_000 });
    await page.waitForFunction(() => document.getElementById("state")?.textContent === "live", null, {
      timeout: 10_000,
    });

    const [first, second] = releasable(await board());
    if (!first || !second) throw new Error("the demo has no two children to release at 14:40");
    const row = (id: number) => page.locator(`#board tr[data-student="${id}"] .status`);
    expect(await row(first.studentId).textContent()).not.toBe("released");

    // Through the API: the page shows it, no reload.
    const collector = first.collectors[0];
    const released = await api("/api/v1/dismissal/release", {
      method: "POST",
      body: JSON.stringify({ studentId: first.studentId, collector: { kind: collector?.kind, id: collector?.id } }),
    });
    expect(released.status, await released.clone().text()).toBe(201);
    await page.waitForFunction(
      (id) => document.querySelector(`#board tr[data-student="${id}"] .status`)?.textContent === "released",
      first.studentId,
      { timeout: 5_000 },
    );
    expect(await page.locator("#feed").textContent()).toContain(`released student ${first.studentId}`);

    // A click on the page releases to that collector.
    await page.locator(`#board tr[data-student="${second.studentId}"] button[data-release]`).first().click();
    await page.waitForFunction(
      (id) => document.querySelector(`#board tr[data-student="${id}"] .status`)?.textContent === "released",
      second.studentId,
      { timeout: 5_000 },
    );
    const after = await board();
    expect(after.students.find((s) => s.studentId === second.studentId)?.status).toBe("released");
    expect(errors).toEqual([]);
  }, 60_000);
});
