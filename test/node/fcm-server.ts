/**
 * A stand-in for Google's push services on loopback, speaking their protocols, for the tests:
 *
 * - `POST /token`: the OAuth 2.0 JWT bearer grant (RFC 7523). The assertion must be an RS256 JWT
 *   signed by the service account's key (verified with its public key, `jose`), with the account
 *   as issuer, this endpoint as audience, the firebase.messaging scope and a lifetime of at most
 *   an hour (judged at its own `iat`: the tests run on an injected clock). Answers an access token.
 * - `POST /v1/projects/{project}/messages:send`: FCM HTTP v1. The bearer token must be one issued
 *   here (else 401 UNAUTHENTICATED); the message must have `token`, `notification.title` and
 *   `.body`, `data` of strings, `android.priority` and `apns.headers.apns-priority` (else 400
 *   INVALID_ARGUMENT on the field). A token given a script answers it first, one answer per send:
 *   `UNREGISTERED` (404), `INVALID_ARGUMENT` (400, not a valid registration token), `429`, `500`.
 * - `POST /iid/v1:batchAdd`, `/iid/v1:batchRemove`, `GET /iid/info/{token}?details=true`: the
 *   Instance ID topic API (bearer token and `access_token_auth: true`); tokens starting `bad-` are
 *   refused per token (`INVALID_ARGUMENT`).
 * - For assertions: `POST /stand-in/script` `{ token, answers }`, `GET /stand-in/messages?token=`,
 *   `GET /stand-in/stats` (access tokens issued).
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from "jose";

const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";

export async function startFcmServer() {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const verifyKey = await importSPKI(publicKey, "RS256");
  const projectId = "school-test";
  const clientEmail = "push@school-test.iam.gserviceaccount.com";
  const keyId = "test-key-1";
  const issued = new Set<string>();
  const scripts = new Map<string, (string | number)[]>();
  const received: { token: string; message: unknown; authorization: string }[] = [];
  const topics = new Map<string, Set<string>>();
  let url = "";

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: ServerResponse, code: number, status: string, message: string, details: unknown[] = []) =>
    reply(res, code, { error: { code, message, status, details } });
  const fcmError = (errorCode: string, more: unknown[] = []) => [
    { "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode },
    ...more,
  ];
  const bodyOf = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let raw = "";
      req.on("data", (chunk) => {
        raw += chunk;
      });
      req.on("end", () => resolve(raw));
    });
  const bearer = (req: IncomingMessage) => (req.headers.authorization ?? "").replace(/^Bearer /, "");

  async function token(req: IncomingMessage, res: ServerResponse) {
    const form = new URLSearchParams(await bodyOf(req));
    const assertion = form.get("assertion") ?? "";
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return reply(res, 400, { error: "unsupported_grant_type" });
    }
    try {
      const header = decodeProtectedHeader(assertion);
      const claims = decodeJwt(assertion);
      if (header.kid !== keyId) throw new Error("unknown key id");
      if (typeof claims.iat !== "number" || typeof claims.exp !== "number") throw new Error("no iat/exp");
      if (claims.exp - claims.iat > 3600 || claims.exp <= claims.iat) throw new Error("lifetime over an hour");
      if (claims.scope !== SCOPE) throw new Error("scope");
      await jwtVerify(assertion, verifyKey, {
        algorithms: ["RS256"],
        issuer: clientEmail,
        audience: `${url}/token`,
        currentDate: new Date(claims.iat * 1000),
      });
    } catch (err) {
      return reply(res, 400, { error: "invalid_grant", error_description: String(err) });
    }
    const access = `ya29.${randomUUID()}`;
    issued.add(access);
    reply(res, 200, { access_token: access, expires_in: 3599, token_type: "Bearer" });
  }

  /** The first thing wrong with an FCM v1 message, as the field FCM would name. */
  function invalidField(body: unknown): string | undefined {
    const m = (body as { message?: Record<string, unknown> })?.message;
    if (!m || typeof m !== "object") return "message";
    if (typeof m.token !== "string" || m.token === "") return "message.token";
    const n = m.notification as Record<string, unknown> | undefined;
    if (!n || typeof n.title !== "string" || typeof n.body !== "string") return "message.notification";
    const data = m.data as Record<string, unknown> | undefined;
    if (!data || Object.values(data).some((v) => typeof v !== "string")) return "message.data";
    const android = m.android as { priority?: unknown } | undefined;
    if (!android || (android.priority !== "HIGH" && android.priority !== "NORMAL")) return "message.android.priority";
    const apns = m.apns as { headers?: Record<string, unknown> } | undefined;
    const priority = apns?.headers?.["apns-priority"];
    if (priority !== "10" && priority !== "5") return "message.apns.headers";
    return undefined;
  }

  async function send(req: IncomingMessage, res: ServerResponse, project: string) {
    const raw = await bodyOf(req);
    if (!issued.has(bearer(req)))
      return googleError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    if (project !== projectId) return googleError(res, 404, "NOT_FOUND", "Requested entity was not found.");
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return googleError(res, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
    }
    const field = invalidField(body);
    const token = (body as { message?: { token?: string } }).message?.token ?? "";
    if (field) {
      return googleError(res, 400, "INVALID_ARGUMENT", `Invalid value at '${field}'`, [
        { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description: "Invalid" }] },
      ]);
    }
    const answer = scripts.get(token)?.shift();
    if (answer === "UNREGISTERED") {
      return googleError(res, 404, "NOT_FOUND", "Requested entity was not found.", fcmError("UNREGISTERED"));
    }
    if (answer === "INVALID_ARGUMENT") {
      return googleError(res, 400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", [
        ...fcmError("INVALID_ARGUMENT"),
        { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "message.token" }] },
      ]);
    }
    if (answer === 429) {
      res.setHeader("retry-after", "1");
      return googleError(res, 429, "RESOURCE_EXHAUSTED", "Quota exceeded", fcmError("QUOTA_EXCEEDED"));
    }
    if (answer === 500) return googleError(res, 500, "INTERNAL", "Internal error", fcmError("INTERNAL"));
    received.push({ token, message: (body as { message: unknown }).message, authorization: bearer(req) });
    reply(res, 200, { name: `projects/${projectId}/messages/${received.length}` });
  }

  async function topicChange(req: IncomingMessage, res: ServerResponse, op: string) {
    const raw = await bodyOf(req);
    if (!issued.has(bearer(req)) || req.headers.access_token_auth !== "true") {
      return reply(res, 401, { error: "Unauthorized" });
    }
    const { to, registration_tokens: tokens } = JSON.parse(raw) as { to: string; registration_tokens: string[] };
    const topic = to.replace(/^\/topics\//, "");
    const results = tokens.map((t) => {
      if (t.startsWith("bad-")) return { error: "INVALID_ARGUMENT" };
      const set = topics.get(t) ?? new Set<string>();
      if (op === "batchAdd") set.add(topic);
      else set.delete(topic);
      topics.set(t, set);
      return {};
    });
    reply(res, 200, { results });
  }

  const server = createServer(async (req, res) => {
    const at = new URL(req.url ?? "/", "http://localhost");
    const path = at.pathname;
    if (req.method === "POST" && path === "/token") return token(req, res);
    const sendPath = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
    if (req.method === "POST" && sendPath) return send(req, res, sendPath[1] ?? "");
    if (req.method === "POST" && (path === "/iid/v1:batchAdd" || path === "/iid/v1:batchRemove")) {
      return topicChange(req, res, path.endsWith("batchAdd") ? "batchAdd" : "batchRemove");
    }
    const info = /^\/iid\/info\/(.+)$/.exec(path);
    if (req.method === "GET" && info) {
      if (!issued.has(bearer(req))) return reply(res, 401, { error: "Unauthorized" });
      const set = topics.get(decodeURIComponent(info[1] ?? ""));
      if (!set) return reply(res, 404, { error: "No information found about this instance id." });
      return reply(res, 200, {
        application: "org.example.school",
        platform: "ANDROID",
        rel: { topics: Object.fromEntries([...set].map((t) => [t, { addDate: "2026-11-23" }])) },
      });
    }
    if (req.method === "POST" && path === "/stand-in/script") {
      const { token, answers } = JSON.parse(await bodyOf(req)) as { token: string; answers: (string | number)[] };
      scripts.set(token, [...answers]);
      return reply(res, 200, { scripted: answers.length });
    }
    if (req.method === "GET" && path === "/stand-in/messages") {
      return reply(
        res,
        200,
        received.filter((m) => m.token === at.searchParams.get("token")),
      );
    }
    if (req.method === "GET" && path === "/stand-in/stats") return reply(res, 200, { accessTokensIssued: issued.size });
    reply(res, 404, { error: "Not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serviceAccount = JSON.stringify({
    type: "service_account",
    project_id: projectId,
    private_key_id: keyId,
    private_key: privateKey,
    client_email: clientEmail,
    token_uri: `${url}/token`,
  });
  return {
    url,
    serviceAccount,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
