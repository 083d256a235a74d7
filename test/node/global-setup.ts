/**
 * Real local servers the Worker talks to, started in Node on loopback before the tests:
 * - an S3-compatible server (s3rver) for presigned uploads and downloads;
 * - an SMS server that speaks Twilio's Messages API (form POST with basic auth), recording what
 *   it receives so tests can read the messages back.
 * - an FCM stand-in (./fcm-server.ts): the OAuth token endpoint, FCM HTTP v1 sends and the
 *   Instance ID topic API, checking the service account's signature, the bearer token and the
 *   message shape, and failing on demand.
 * - a webhook receiver (./webhook-receiver.ts) that verifies every delivery with the
 *   `standardwebhooks` library and recognises replays.
 * Their addresses reach the tests through `inject("s3Endpoint")`, `inject("smsEndpoint")`,
 * `inject("fcmEndpoint")` (with `inject("fcmServiceAccount")`, the key the stand-in trusts),
 * `inject("webhookReceiver")`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import type { TestProject } from "vitest/node";
import { startFcmServer } from "./fcm-server";
import { startWebhookReceiver } from "./webhook-receiver";

declare module "vitest" {
  export interface ProvidedContext {
    s3Endpoint: string;
    smsEndpoint: string;
    fcmEndpoint: string;
    fcmServiceAccount: string;
    webhookReceiver: string;
  }
}

export const TEST_BUCKET = "school-documents";

export default async function setup(project: TestProject) {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const s3 = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: TEST_BUCKET, configs: [] }],
  });
  const s3Address = (await s3.run()) as AddressInfo;
  project.provide("s3Endpoint", `http://127.0.0.1:${s3Address.port}`);

  const sms = await startSmsServer();
  project.provide("smsEndpoint", sms.url);

  const fcm = await startFcmServer();
  project.provide("fcmEndpoint", fcm.url);
  project.provide("fcmServiceAccount", fcm.serviceAccount);

  const webhooks = await startWebhookReceiver();
  project.provide("webhookReceiver", webhooks.url);

  return async () => {
    await s3.close();
    rmSync(directory, { recursive: true, force: true });
    await sms.close();
    await fcm.close();
    await webhooks.close();
  };
}

/**
 * Twilio's `POST /2010-04-01/Accounts/{sid}/Messages.json`: basic auth `sid:token`, form fields
 * To, From, Body; answers 201 with the message resource, 401 on bad credentials, 400 on a
 * missing field. `GET /messages?to=` lists what was received (for assertions).
 */
async function startSmsServer() {
  const received: { to: string; from: string; body: string; accountSid: string }[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/messages") {
      return reply(
        200,
        received.filter((m) => m.to === url.searchParams.get("to")),
      );
    }
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname);
    if (req.method !== "POST" || !match) return reply(404, { code: 20404, message: "Not found" });
    const [user, pass] = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64")
      .toString()
      .split(":");
    if (user !== match[1] || pass !== "test-auth-token") return reply(401, { code: 20003, message: "Authenticate" });
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const form = new URLSearchParams(raw);
      const [to, from, body] = [form.get("To"), form.get("From"), form.get("Body")];
      if (!to || !from || !body) return reply(400, { code: 21604, message: "A 'To', 'From' and 'Body' are required" });
      received.push({ to, from, body, accountSid: user ?? "" });
      reply(201, { sid: `SM${received.length}`, to, from, body, status: "queued" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
