/**
 * A browser dashboard on another origin can use the API as the mobile app does (src/middleware/cors.ts):
 * in headless Chromium, a page served by a small local server (its own origin, in CORS_ORIGINS) calls
 * `wrangler dev` with the headers a dashboard sends (Authorization, X-School-Id, Accept-Language,
 * If-Match, Idempotency-Key), so each write is preflighted, and reads the headers it acts on: a record's
 * ETag, a 412 for a stale If-Match, a 204 for the right one, an export's file name from
 * Content-Disposition. Skipped where Chromium is not installed (test/node/dev-server.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessToken, chromiumNote, type DevServer, hasChromium, launchChromium, startDevServer } from "./dev-server";

describe.skipIf(!hasChromium)(`a dashboard on another origin, in Chromium${chromiumNote}`, () => {
  let page: Server | undefined;
  let dashboard = "";
  let server: DevServer | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // The dashboard's origin: a page of its own, on another port than the API's.
    page = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>Dashboard</title><p>Dashboard</p>");
    });
    await new Promise<void>((resolve) => page?.listen(0, "127.0.0.1", resolve));
    dashboard = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    server = await startDevServer({ CORS_ORIGINS: dashboard });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => page?.close(resolve));
  }, 60_000);

  it("reads an ETag, gets a 412 for a stale If-Match and a 204 for the right one, and saves an export by name", async () => {
    const api = server?.base ?? "";
    const token = await accessToken(api);
    const context = await browser?.newContext();
    if (!context) throw new Error("no browser");
    const tab = await context.newPage();
    await tab.goto(`${dashboard}/`);

    const seen = await tab.evaluate(
      async ({ api, token }) => {
        const headers = { authorization: `Bearer ${token}`, "x-school-id": "1", "accept-language": "es" };
        const list = await fetch(`${api}/api/v1/student?pageSize=1`, { headers });
        const id = ((await list.json()) as { data: { id: number }[] }).data[0]?.id;
        const read = await fetch(`${api}/api/v1/student/${id}`, { headers });
        const record = (await read.json()) as { firstName: string };
        const etag = read.headers.get("etag");
        const put = (ifMatch: string, firstName: string) =>
          fetch(`${api}/api/v1/student/${id}`, {
            method: "PUT",
            headers: { ...headers, "content-type": "application/json", "if-match": ifMatch },
            body: JSON.stringify({ firstName }),
          });
        const stale = await put('W/"0000000000000000"', `${record.firstName} (stale)`);
        const staleBody = (await stale.json()) as { status: number; detail: string };
        const fresh = await put(etag ?? "", record.firstName);
        // A refresh with the tag: a 304, readable too.
        const again = await fetch(`${api}/api/v1/student/${id}`, {
          headers: {
            ...headers,
            "if-none-match":
              (await (await fetch(`${api}/api/v1/student/${id}`, { headers })).headers.get("etag")) ?? "",
          },
        });
        // A write with Idempotency-Key, twice: the second is the first's answer, marked as a replay.
        const key = crypto.randomUUID();
        const device = () =>
          fetch(`${api}/api/v1/device-token`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json", "idempotency-key": key },
            body: JSON.stringify({ token: `cors-browser-${key}`, platform: "android" }),
          });
        const first = await device();
        const replay = await device();
        const file = await fetch(`${api}/api/v1/student/export`, { headers });
        const bytes = (await file.arrayBuffer()).byteLength;
        return {
          readStatus: read.status,
          etag,
          requestId: read.headers.get("x-request-id"),
          stale: { status: stale.status, body: staleBody, language: stale.headers.get("content-language") },
          fresh: fresh.status,
          again: again.status,
          first: first.status,
          replay: { status: replay.status, replayed: replay.headers.get("idempotent-replayed") },
          file: { status: file.status, disposition: file.headers.get("content-disposition"), bytes },
        };
      },
      { api, token },
    );

    expect(seen.readStatus).toBe(200);
    expect(seen.etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    expect(seen.requestId).toBeTruthy();
    expect(seen.stale.status).toBe(412);
    expect(seen.stale.body.status).toBe(412);
    expect(seen.stale.language).toBe("es");
    expect(seen.fresh).toBe(204);
    expect(seen.again).toBe(304);
    expect(seen.first).toBe(201);
    expect(seen.replay).toEqual({ status: 201, replayed: "true" });
    expect(seen.file.status).toBe(200);
    expect(seen.file.disposition).toMatch(/filename="?alumnos\.xlsx"?/);
    expect(seen.file.bytes).toBeGreaterThan(0);
    await context.close();
  }, 120_000);
});
