#!/usr/bin/env node
// Moving a school to another database (docs/scaling.md "Moving a school"), from the command line:
//
//   npm run school:move -- <schoolId> <binding> [--url URL] [--token TOKEN]
//
// calls POST /api/v1/school/{id}/move { to: binding } on a running API (--url, else API_URL, else
// the local `npm run dev` server, http://localhost:8787) as a super-admin: --token (or TOKEN) is a
// super-admin's access token; without one, against a development server, it signs in as the demo
// super-admin (+15550000001) the way `npm run token` does. The move is synchronous (tens of seconds:
// it waits out the instances' copies of the shard map twice); it prints the answer: where the
// school was and is, the rows moved per table. Then GET /api/v1/school/{id}/shard tells the same.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { callApi } from "./api-call.mjs";

const USAGE = "usage: npm run school:move -- <schoolId> <DB | DB_SHARD_n> [--url URL] [--token TOKEN]";
const DEMO_SUPER_ADMIN = "+15550000001";

function fail(message) {
  console.error(`school:move: ${message}`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { url: { type: "string" }, token: { type: "string" } },
  });
} catch (err) {
  fail(`${err.message}\n${USAGE}`);
}
const [school, binding, ...extra] = parsed.positionals;
if (!school || !binding || extra.length > 0) fail(USAGE);
if (!/^[1-9]\d*$/.test(school)) fail(`"${school}" is not a school id\n${USAGE}`);
if (!/^DB(_SHARD_[1-9]\d*)?$/.test(binding))
  fail(`"${binding}" is not a database binding (DB or DB_SHARD_<n>)\n${USAGE}`);

const api = (parsed.values.url || process.env.API_URL || "http://localhost:8787").replace(/\/+$/, "");
let token = parsed.values.token || process.env.TOKEN;
if (!token) {
  // The development sign-in (scripts/token.mjs), as the demo super-admin.
  const script = fileURLToPath(new URL("token.mjs", import.meta.url));
  const signed = spawnSync(process.execPath, [script, DEMO_SUPER_ADMIN], {
    env: { ...process.env, API_URL: api },
    encoding: "utf8",
  });
  if (signed.status !== 0) fail(`no --token, and the development sign-in failed:\n${signed.stderr.trim()}`);
  token = signed.stdout.trim();
}

console.error(`Moving school ${school} to ${binding} through ${api} (its writes pause meanwhile)...`);
let res;
try {
  res = await callApi(api, "POST", `/api/v1/school/${school}/move`, {
    body: { to: binding },
    token,
    hint: "or give --url",
  });
} catch (err) {
  fail(err.message);
}
const { data, text } = res;
if (res.status !== 200) fail(`${res.status} ${data?.detail ?? text.slice(0, 300)}`);
console.log(JSON.stringify(data, null, 2));
if (!data.moved) console.error(`School ${school} was on ${binding} already: nothing moved.`);
