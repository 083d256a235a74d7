#!/usr/bin/env node
// Development sign-in in one command: `npm run token -- +15550000002` prints an access token.
// It calls a running `npm run dev` server (API_URL, default http://localhost:8787) the way the app
// does: send-verification-code, read the code from the development outbox, verify-code.
// `--json` prints the whole session (accessToken, refreshToken, expiresIn, user).
import { callApi } from "./api-call.mjs";

const USAGE = "usage: npm run token -- <phone in E.164, e.g. +15550000002> [--json]";

const args = process.argv.slice(2);
const json = args.includes("--json");
const phones = args.filter((a) => a !== "--json");
const phone = phones[0];
if (phones.length !== 1 || !phone || args.some((a) => a.startsWith("-") && a !== "--json")) fail(USAGE);
if (!/^\+[1-9]\d{6,14}$/.test(phone)) fail(`"${phone}" is not an E.164 number (like +15550000002)\n${USAGE}`);

const api = (process.env.API_URL || "http://localhost:8787").replace(/\/+$/, "");

function fail(message) {
  console.error(`token: ${message}`);
  process.exit(1);
}

async function call(method, path, body) {
  try {
    return await callApi(api, method, path, { body, hint: "or set API_URL to where it runs" });
  } catch (err) {
    fail(err.message);
  }
}

const problem = (r) => r.data?.detail ?? r.text.slice(0, 200);

async function outbox() {
  const r = await call("GET", `/api/v1/dev/outbox?to=${encodeURIComponent(phone)}&pageSize=10`);
  if (r.status === 404) {
    fail(`${api} has no development outbox: the server is not running with ENVIRONMENT=development.`);
  }
  if (r.status !== 200 || !Array.isArray(r.data?.data)) fail(`reading the outbox: ${r.status} ${problem(r)}`);
  return r.data.data;
}

// The newest message before asking, so an older code is never taken for the new one.
const before = (await outbox())[0]?.id ?? 0;

const sent = await call("POST", "/api/v1/auth/send-verification-code", { phone });
if (sent.status === 429) {
  fail(`${problem(sent)} (retry after ${sent.headers.get("retry-after")} s; development limits are set in .dev.vars)`);
}
if (sent.status !== 202) fail(`send-verification-code: ${sent.status} ${problem(sent)}`);

const message = (await outbox()).find((m) => m.id > before && m.code);
if (!message) {
  fail(
    `no code reached the outbox for ${phone}: it is not the number of an active or invited user ` +
      "(see the demo numbers in README.md), or SMS_PROVIDER is not `log`.",
  );
}

const verified = await call("POST", "/api/v1/auth/verify-code", { phone, code: message.code });
if (verified.status !== 200) fail(`verify-code: ${verified.status} ${problem(verified)}`);

console.log(json ? JSON.stringify(verified.data, null, 2) : verified.data.accessToken);
