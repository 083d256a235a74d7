/**
 * Sign-in by verification code and the sessions that follow: limits on codes,
 * hashed storage, attempts, expiry, one use, refresh rotation with reuse detection, revocation,
 * and access tokens that expire and carry the caller's roles.
 *
 * Storage is shared by the tests of this file, so each test moves the clock two hours on (past
 * every per-number limit) and tests that exhaust a number use a number of their own. The limits
 * are the production ones, set explicitly (the test bindings are a development environment).
 *
 * Concurrency: requests fired together with Promise.all interleave at every D1 call, as requests
 * to one database do in production; a limit that reads, decides, then writes lets most through.
 */

import { eq, like } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { verificationCodes } from "../src/db/schema/auth";
import { users } from "../src/db/schema/core";
import { rateLimits } from "../src/db/schema/jobs";
import { withSearch } from "../src/db/search";
import { addressKey } from "../src/lib/rate-limit";
import { signAccessToken } from "../src/lib/tokens";
import { purgeExpired } from "../src/modules/auth/service";
import { configWith, DEMO, makeTestApp, problem, STRICT_AUTH_LIMITS } from "./helpers";

const t = makeTestApp({ config: configWith(STRICT_AUTH_LIMITS) });

beforeEach(() => {
  t.clock.advance(2 * 3600);
});

let nextPhone = 0;
/** A user of our own (a number no other test touches), in the given status. */
async function newUser(status: "invited" | "active" | "inactive" = "active") {
  const phone = `+1555010${String(++nextPhone).padStart(4, "0")}`;
  const [row] = await t.db
    .insert(users)
    .values(withSearch(users, { phone, status, firstName: "Test" }))
    .returning({ id: users.id });
  if (!row) throw new Error("user not inserted");
  return { id: row.id, phone };
}

const sendCode = (phone: unknown) =>
  t.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
const verify = (phone: string, code: string) =>
  t.request("/api/v1/auth/verify-code", { method: "POST", body: { phone, code } });
const verifyPhone = (phone: unknown, address?: string) =>
  t.request("/api/v1/auth/verify-phone-number", {
    method: "POST",
    body: { phone },
    headers: address ? { "cf-connecting-ip": address } : {},
  });
const refresh = (refreshToken: string) =>
  t.request("/api/v1/auth/refresh-token", { method: "POST", body: { refreshToken } });

const codeRows = (phone: string) => t.db.select().from(verificationCodes).where(eq(verificationCodes.phone, phone));

/** Statuses of many responses, counted: `{ 202: 1, 429: 19 }`. */
const tally = (responses: Response[]) =>
  responses.reduce<Record<number, number>>((acc, r) => {
    acc[r.status] = (acc[r.status] ?? 0) + 1;
    return acc;
  }, {});

/** Every 429 among `responses` is a problem with a whole, positive retry-after (returns them). */
async function retryAfters(responses: Response[]) {
  const waits: number[] = [];
  for (const res of responses.filter((r) => r.status === 429)) {
    expect((await problem(res)).type).toBe("/problems/rate-limited");
    const header = res.headers.get("retry-after") ?? "";
    expect(header).toMatch(/^[1-9]\d*$/);
    waits.push(Number(header));
  }
  return waits;
}

async function outbox(phone: string) {
  const res = await t.request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { total: number; data: { to: string; body: string }[] };
}

/** A code that is surely not the one sent (another 6-digit string). */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

function claimsOf(jwt: string) {
  const payload = jwt.split(".")[1] ?? "";
  return JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/"))) as {
    sub: string;
    iat: number;
    exp: number;
    sch: Record<string, string>;
  };
}

describe("send-verification-code", () => {
  it("refuses what is not a possible phone number with its country code, naming the field", async () => {
    for (const phone of [
      "5550000002",
      "555-0100",
      "+0123456789",
      "+999 1234567",
      "",
      "+1555",
      "+1 555 ext",
      15550000002,
      null,
    ]) {
      const res = await sendCode(phone);
      expect(res.status, String(phone)).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toEqual(["phone"]);
    }
  });

  it("reads a number written with spaces, dashes or without its +, or with Mexico's old mobile 1, as the same user", async () => {
    const { phone } = await newUser();
    const spaced = `${phone.slice(0, 2)} (${phone.slice(2, 5)}) ${phone.slice(5, 8)}-${phone.slice(8)}`;
    expect((await sendCode(spaced)).status).toBe(202);
    expect((await outbox(phone)).total).toBe(1);
    const check = (p: string) => verifyPhone(p, "198.51.100.77").then((r) => r.json());
    expect(await check(phone.slice(1))).toMatchObject({ phone, registered: true });
    expect(await check("+52 1 55 1234 5678")).toMatchObject({ phone: "+525512345678" });
    expect(await check("5215512345678")).toMatchObject({ phone: "+525512345678" });
  });

  it("sends a 6-digit code to a known number", async () => {
    const { phone } = await newUser();
    const res = await sendCode(phone);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ sent: true, expiresIn: 600, resendIn: 60 });
    const box = await outbox(phone);
    expect(box.total).toBe(1);
    expect(box.data[0]?.to).toBe(phone);
    expect(box.data[0]?.body).toMatch(/\b\d{6}\b/);
  });

  it("answers an unknown number exactly the same, and sends nothing", async () => {
    const phone = "+15559990001";
    const res = await sendCode(phone);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ sent: true, expiresIn: 600, resendIn: 60 });
    expect((await outbox(phone)).total).toBe(0);
  });

  it("refuses a resend within 60 s with retry-after, then accepts it", async () => {
    const { phone } = await newUser();
    expect((await sendCode(phone)).status).toBe(202);
    t.clock.advance(20);
    const res = await sendCode(phone);
    expect(res.status).toBe(429);
    const wait = Number(res.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(40);
    expect((await problem(res)).type).toBe("/problems/rate-limited");
    expect((await outbox(phone)).total).toBe(1);
    t.clock.advance(wait);
    expect((await sendCode(phone)).status).toBe(202);
    expect((await outbox(phone)).total).toBe(2);
  });

  it("applies the same cooldown to unknown numbers (no way to tell them apart)", async () => {
    const phone = "+15559990002";
    expect((await sendCode(phone)).status).toBe(202);
    expect((await sendCode(phone)).status).toBe(429);
  });

  it("sends at most 5 codes an hour per number; an hour after the first it works again", async () => {
    const { phone } = await newUser();
    for (let i = 0; i < 5; i++) {
      expect((await sendCode(phone)).status).toBe(202);
      t.clock.advance(61);
    }
    const res = await sendCode(phone);
    expect(res.status).toBe(429);
    await problem(res);
    const wait = Number(res.headers.get("retry-after"));
    // The first of the five was 5 * 61 s ago: it leaves the hour window in 3600 - 305 s.
    expect(wait).toBe(3600 - 5 * 61);
    expect((await outbox(phone)).total).toBe(5);

    t.clock.advance(wait - 1);
    expect((await sendCode(phone)).status).toBe(429);
    t.clock.advance(1);
    expect((await sendCode(phone)).status).toBe(202);
    expect((await outbox(phone)).total).toBe(6);
  });

  it("of 20 concurrent requests for one number, exactly one gets a code; the others are 429 with retry-after", async () => {
    const { phone } = await newUser();
    const responses = await Promise.all(Array.from({ length: 20 }, () => sendCode(phone)));
    expect(tally(responses)).toEqual({ 202: 1, 429: 19 });
    for (const wait of await retryAfters(responses)) expect(wait).toBe(60);
    expect(await codeRows(phone)).toHaveLength(1);
    expect((await outbox(phone)).total).toBe(1);
  });

  it("with a cap of 5 an hour and no cooldown, 20 concurrent requests create exactly 5 codes", async () => {
    const capped = makeTestApp({
      config: configWith({ AUTH_RESEND_COOLDOWN_SECONDS: "0", AUTH_CODES_PER_HOUR: "5" }),
    });
    const { phone } = await newUser();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        capped.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } }),
      ),
    );
    expect(tally(responses)).toEqual({ 202: 5, 429: 15 });
    // All five were made this instant: the first leaves the hour window in an hour.
    for (const wait of await retryAfters(responses)) expect(wait).toBe(3600);
    expect(await codeRows(phone)).toHaveLength(5);
  });

  it("with development's defaults, a code may be asked for again at once", async () => {
    const dev = makeTestApp({ config: configWith({ ENVIRONMENT: "development" }) });
    const { phone } = await newUser();
    for (let i = 0; i < 10; i++) {
      const res = await dev.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { resendIn: number }).resendIn).toBe(0);
    }
    expect(await codeRows(phone)).toHaveLength(10);
  });

  it("sends nothing to an inactive user, and says the number is not registered", async () => {
    const { phone } = await newUser("inactive");
    expect((await sendCode(phone)).status).toBe(202);
    expect((await outbox(phone)).total).toBe(0);
    const check = await verifyPhone(phone);
    expect(await check.json()).toEqual({ phone, registered: false });
    // No code can sign them in either.
    for (const code of ["000000", "123456"]) expect((await verify(phone, code)).status).toBe(401);
  });
});

describe("verify-code", () => {
  it("exchanges the right code for a session", async () => {
    const { id, phone } = await newUser();
    await sendCode(phone);
    const res = await verify(phone, await t.lastCode(phone));
    expect(res.status).toBe(200);
    const session = (await res.json()) as { accessToken: string; refreshToken: string; user: Record<string, unknown> };
    expect(session).toMatchObject({ tokenType: "Bearer", expiresIn: 600 });
    expect(session.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(session.refreshToken).toEqual(expect.any(String));
    expect(session.refreshToken.length).toBeGreaterThanOrEqual(20);
    expect(session.user).toMatchObject({ id, phone, status: "active", isSuperAdmin: false });
    expect(Object.keys(session.user).sort()).toEqual(
      [
        "createdAt",
        "email",
        "firstName",
        "id",
        "isSuperAdmin",
        "language",
        "lastName",
        "phone",
        "status",
        "updatedAt",
      ].sort(),
    );
    const me = await t.request("/api/v1/user/me", { token: session.accessToken });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: number }).id).toBe(id);
  });

  it("stores codes hashed, never in plain text", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    const rows = await t.db.select().from(verificationCodes).where(eq(verificationCodes.phone, phone));
    expect(rows).toHaveLength(1);
    for (const row of rows) {
      expect(row.codeHash).not.toContain(code);
      expect(JSON.stringify(row)).not.toContain(code);
      expect(row.codeHash).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("refuses a wrong code with 401 and counts the attempt", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    const res = await verify(phone, wrong(code));
    expect(res.status).toBe(401);
    const body = await problem(res);
    expect(body.detail).toMatch(/4 attempts left/);
    const [row] = await t.db.select().from(verificationCodes).where(eq(verificationCodes.phone, phone));
    expect(row?.attempts).toBe(1);
    // The right code still works after one mistake.
    expect((await verify(phone, code)).status).toBe(200);
  });

  it("after 5 wrong attempts even the right code is refused with 429", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    for (let i = 0; i < 5; i++) expect((await verify(phone, wrong(code))).status).toBe(401);
    const res = await verify(phone, code);
    expect(res.status).toBe(429);
    expect((await problem(res)).title).toBe("Too many attempts");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await codeRows(phone))[0]?.attempts).toBe(5);
    // A new code starts a new count.
    t.clock.advance(61);
    await sendCode(phone);
    expect((await verify(phone, await t.lastCode(phone))).status).toBe(200);
  });

  it("of 40 concurrent wrong guesses at most 5 are evaluated, and then even the right code is refused", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    const guesses = await Promise.all(Array.from({ length: 40 }, () => verify(phone, wrong(code))));
    expect(tally(guesses)).toEqual({ 401: 5, 429: 35 });
    await retryAfters(guesses);
    const details = await Promise.all(
      guesses.filter((r) => r.status === 401).map(async (r) => (await problem(r)).detail),
    );
    // Each evaluated guess used up its own attempt: 4, 3, 2, 1, 0 left.
    expect(details.map((d) => /(\d) attempts? left/.exec(d)?.[1]).sort()).toEqual(["0", "1", "2", "3", "4"]);
    expect((await codeRows(phone))[0]?.attempts).toBe(5);

    const right = await verify(phone, code);
    expect(right.status).toBe(429);
    await retryAfters([right]);
    expect((await codeRows(phone))[0]).toMatchObject({ attempts: 5, consumedAt: null });
  });

  it("the right code sent with 20 concurrent wrong guesses signs in only as one of the first 5 evaluated", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    const responses = await Promise.all([
      ...Array.from({ length: 20 }, () => verify(phone, wrong(code))),
      verify(phone, code),
    ]);
    const counts = tally(responses);
    const [row] = await codeRows(phone);
    expect(row?.attempts).toBeLessThanOrEqual(5);
    if (counts[200]) {
      // The right code was claimed among the first five: it signed in once and spent the code.
      expect(counts[200]).toBe(1);
      expect(row?.consumedAt).not.toBeNull();
    } else {
      expect(counts).toEqual({ 401: 5, 429: 16 });
      expect(row?.attempts).toBe(5);
    }
  });

  it("refuses an expired code (after 10 minutes)", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    t.clock.advance(601);
    const res = await verify(phone, code);
    expect(res.status).toBe(401);
    await problem(res);
  });

  it("accepts a code just before it expires", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    t.clock.advance(599);
    expect((await verify(phone, await t.lastCode(phone))).status).toBe(200);
  });

  it("accepts a code once", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const code = await t.lastCode(phone);
    expect((await verify(phone, code)).status).toBe(200);
    const again = await verify(phone, code);
    expect(again.status).toBe(401);
    await problem(again);
  });

  it("only the latest code of a number counts", async () => {
    const { phone } = await newUser();
    await sendCode(phone);
    const first = await t.lastCode(phone);
    t.clock.advance(61);
    await sendCode(phone);
    const second = await t.lastCode(phone);
    if (first !== second) expect((await verify(phone, first)).status).toBe(401);
    expect((await verify(phone, second)).status).toBe(200);
  });

  it("refuses bad input with 400", async () => {
    for (const body of [
      { phone: DEMO.northAdmin.phone, code: "12345" },
      { phone: DEMO.northAdmin.phone, code: "1234567" },
      { phone: DEMO.northAdmin.phone, code: "abcdef" },
      { phone: DEMO.northAdmin.phone, code: 123456 },
      { phone: "nope", code: "123456" },
      { phone: DEMO.northAdmin.phone },
      { phone: DEMO.northAdmin.phone, code: "123456", userId: 1 },
    ]) {
      const res = await t.request("/api/v1/auth/verify-code", { method: "POST", body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problem(res)).errors?.length).toBeGreaterThan(0);
    }
  });

  it("activates an invited user at their first sign-in", async () => {
    const { id, phone } = await newUser("invited");
    expect(await (await verifyPhone(phone)).json()).toEqual({ phone, registered: true });
    const session = await t.signIn(phone);
    expect((session.user as { status?: string }).status).toBe("active");
    const [row] = await t.db.select({ status: users.status }).from(users).where(eq(users.id, id));
    expect(row?.status).toBe("active");
  });
});

describe("verify-phone-number", () => {
  it("says whether a number may sign in, and nothing else", async () => {
    const invited = await newUser("invited");
    const inactive = await newUser("inactive");
    for (const [phone, registered] of [
      [DEMO.northAdmin.phone, true],
      [invited.phone, true],
      [inactive.phone, false],
      ["+15559990003", false],
    ] as const) {
      const res = await verifyPhone(phone);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ phone, registered });
    }
  });

  it("limits each number: of 30 concurrent checks from 30 addresses exactly 10 pass, the rest are 429", async () => {
    const phone = "+15550200001";
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => verifyPhone(phone, `203.0.113.${i + 1}`)));
    expect(tally(responses)).toEqual({ 200: 10, 429: 20 });
    for (const wait of await retryAfters(responses)) expect(wait).toBe(3600);
    // The number's window is over an hour after it began; then it answers again.
    t.clock.advance(3599);
    const early = await verifyPhone(phone, "203.0.113.200");
    expect(early.status).toBe(429);
    expect(early.headers.get("retry-after")).toBe("1");
    t.clock.advance(1);
    expect((await verifyPhone(phone, "203.0.113.200")).status).toBe(200);
  });

  it("limits each client address: of 40 concurrent checks of 40 numbers exactly 30 pass; other addresses may go on", async () => {
    const address = "198.51.100.7";
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => verifyPhone(`+1555021${String(i).padStart(4, "0")}`, address)),
    );
    expect(tally(responses)).toEqual({ 200: 30, 429: 10 });
    for (const wait of await retryAfters(responses)) expect(wait).toBe(600);
    expect((await verifyPhone("+15550219999", "198.51.100.8")).status).toBe(200);
    t.clock.advance(600);
    expect((await verifyPhone("+15550219998", address)).status).toBe(200);
  });

  it("answers the standard RateLimit and RateLimit-Policy headers, the tightest limit's quota left", async () => {
    const phone = "+15550240001";
    const address = "192.0.2.77";
    const first = await verifyPhone(phone, address);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"verify-phone";q=10;w=3600, "verify-phone-ip";q=30;w=600');
    expect(first.headers.get("ratelimit")).toBe('"verify-phone";r=9;t=3600');
    t.clock.advance(60);
    const second = await verifyPhone(phone, address);
    expect(second.headers.get("ratelimit")).toBe('"verify-phone";r=8;t=3540');
    for (let i = 0; i < 8; i++) await verifyPhone(phone, address);
    const refused = await verifyPhone(phone, address);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit")).toBe('"verify-phone";r=0;t=3540');
    expect(refused.headers.get("retry-after")).toBe("3540");
    // A route without a limit answers none.
    expect((await t.request("/api/health")).headers.get("ratelimit")).toBeNull();
  });

  it("counts requests without a client address under one shared key", async () => {
    const responses: Response[] = [];
    for (let i = 0; i < 31; i++) responses.push(await verifyPhone(`+1555022${String(i).padStart(4, "0")}`));
    expect(tally(responses)).toEqual({ 200: 30, 429: 1 });
  });

  it("counts the addresses of one IPv6 /64 as one client", async () => {
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:DB8:1:2:ffff:0:0:9")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey(undefined)).toBe("unknown");
    expect(addressKey("")).toBe("unknown");
    const responses = await Promise.all(
      Array.from({ length: 31 }, (_, i) =>
        verifyPhone(`+1555023${String(i).padStart(4, "0")}`, `2001:db8:77:1:${(i + 1).toString(16)}::1`),
      ),
    );
    expect(tally(responses)).toEqual({ 200: 30, 429: 1 });
  });

  it("refuses a malformed number or body with 400", async () => {
    for (const phone of ["abc", "", "+1", 123]) {
      const res = await verifyPhone(phone);
      expect(res.status).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe("phone");
    }
    const extra = await t.request("/api/v1/auth/verify-phone-number", {
      method: "POST",
      body: { phone: DEMO.northAdmin.phone, status: "active" },
    });
    expect(extra.status).toBe(400);
  });
});

describe("housekeeping", () => {
  it("purgeExpired removes rate-limit windows that are over and keeps the running ones", async () => {
    const at = (seconds: number) => new Date(t.clock.now().getTime() + seconds * 1000).toISOString();
    await t.db.insert(rateLimits).values([
      { key: "purge-test:over", count: 3, resetAt: at(-1) },
      { key: "purge-test:ends-now", count: 3, resetAt: at(0) },
      { key: "purge-test:running", count: 3, resetAt: at(1) },
    ]);
    await purgeExpired(t.deps);
    const left = await t.db
      .select({ key: rateLimits.key })
      .from(rateLimits)
      .where(like(rateLimits.key, "purge-test:%"));
    expect(left.map((r) => r.key)).toEqual(["purge-test:running"]);
  });
});

describe("the OpenAPI document", () => {
  it("declares the 401 and 429 the auth routes answer, and retry-after on every 429", async () => {
    type Responses = Record<string, { headers?: Record<string, { required?: boolean; schema?: { type?: string } }> }>;
    const doc = (await (await t.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Responses }>>;
    };
    const statuses = (path: string) => Object.keys(doc.paths[path]?.post?.responses ?? {});
    expect(statuses("/api/v1/auth/verify-code")).toEqual(expect.arrayContaining(["401", "429"]));
    expect(statuses("/api/v1/auth/refresh-token")).toContain("401");
    expect(statuses("/api/v1/auth/verify-phone-number")).toContain("429");
    expect(statuses("/api/v1/auth/send-verification-code")).toContain("429");
    const tooMany = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.responses["429"] ? [op.responses["429"]] : [])),
    );
    expect(tooMany.length).toBeGreaterThanOrEqual(3);
    for (const response of tooMany) {
      expect(response.headers?.["retry-after"]).toMatchObject({ required: true, schema: { type: "integer" } });
    }
  });
});

describe("refresh-token", () => {
  it("rotates: a new refresh token each time, and the old one stops working", async () => {
    const { phone } = await newUser();
    const first = await t.signIn(phone);
    const res = await refresh(first.refreshToken);
    expect(res.status).toBe(200);
    const second = (await res.json()) as { accessToken: string; refreshToken: string; tokenType: string };
    expect(second.tokenType).toBe("Bearer");
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await t.request("/api/v1/user/me", { token: second.accessToken })).status).toBe(200);

    const reused = await refresh(first.refreshToken);
    expect(reused.status).toBe(401);
    await problem(reused);
  });

  it("detects reuse: presenting a rotated token ends the whole session family", async () => {
    const { phone } = await newUser();
    const first = await t.signIn(phone);
    const second = (await (await refresh(first.refreshToken)).json()) as { refreshToken: string };
    const third = (await (await refresh(second.refreshToken)).json()) as { refreshToken: string };
    // A thief replays the first token: refused, and the family is revoked...
    expect((await refresh(first.refreshToken)).status).toBe(401);
    // ...so the legitimate, newest token stops working too.
    expect((await refresh(third.refreshToken)).status).toBe(401);
  });

  it("reuse in one session leaves the user's other sessions alone", async () => {
    const { phone } = await newUser();
    const a = await t.signIn(phone);
    const b = await t.signIn(phone);
    await refresh(a.refreshToken);
    expect((await refresh(a.refreshToken)).status).toBe(401);
    expect((await refresh(b.refreshToken)).status).toBe(200);
  });

  it("expires after 30 days", async () => {
    const { phone } = await newUser();
    const session = await t.signIn(phone);
    t.clock.advance(30 * 24 * 3600);
    expect((await refresh(session.refreshToken)).status).toBe(401);
  });

  it("refuses unknown tokens and bad bodies", async () => {
    expect((await refresh("not-a-token")).status).toBe(401);
    for (const body of [{}, { refreshToken: "" }, { refreshToken: 1 }, { refreshToken: "x".repeat(201) }]) {
      const res = await t.request("/api/v1/auth/refresh-token", { method: "POST", body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      await problem(res);
    }
  });

  it("logout revokes the session", async () => {
    const { phone } = await newUser();
    const session = await t.signIn(phone);
    const out = await t.request("/api/v1/auth/logout", {
      method: "POST",
      body: { refreshToken: session.refreshToken },
    });
    expect(out.status).toBe(204);
    expect(await out.text()).toBe("");
    expect((await refresh(session.refreshToken)).status).toBe(401);
    // Logging out twice, or with an unknown token, is harmless.
    const again = await t.request("/api/v1/auth/logout", { method: "POST", body: { refreshToken: "unknown" } });
    expect(again.status).toBe(204);
  });

  it("logout-all revokes every session of the signed-in user, and only theirs", async () => {
    const { phone } = await newUser();
    const other = await newUser();
    const a = await t.signIn(phone);
    const b = await t.signIn(phone);
    const c = await t.signIn(other.phone);
    expect((await t.request("/api/v1/auth/logout-all", { method: "POST" })).status).toBe(401);
    const out = await t.request("/api/v1/auth/logout-all", { method: "POST", token: b.accessToken });
    expect(out.status).toBe(204);
    expect((await refresh(a.refreshToken)).status).toBe(401);
    expect((await refresh(b.refreshToken)).status).toBe(401);
    expect((await refresh(c.refreshToken)).status).toBe(200);
  });
});

describe("access tokens", () => {
  it("expire after 600 s", async () => {
    const { phone } = await newUser();
    const { accessToken } = await t.signIn(phone);
    const { iat, exp } = claimsOf(accessToken);
    expect(exp - iat).toBe(600);
    t.clock.current = new Date(exp * 1000 - 1000);
    expect((await t.request("/api/v1/user/me", { token: accessToken })).status).toBe(200);
    t.clock.current = new Date(exp * 1000);
    const res = await t.request("/api/v1/user/me", { token: accessToken });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    await problem(res);
  });

  it("stop counting once the secret changes, even a token this isolate has already accepted", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    expect((await t.request("/api/v1/user/me", { token: accessToken })).status).toBe(200);
    const rotated = makeTestApp({
      clock: t.clock,
      config: configWith({ AUTH_SECRET: "a-rotated-secret-0123456789abcdef0123456789" }),
    });
    const res = await rotated.request("/api/v1/user/me", { token: accessToken });
    expect(res.status).toBe(401);
    // And the old secret still accepts it (the cache keeps what each secret verified apart).
    expect((await t.request("/api/v1/user/me", { token: accessToken })).status).toBe(200);
  });

  it("refuses a missing, malformed or foreign token with 401 and www-authenticate", async () => {
    const forged = await signAccessToken("another-secret-0123456789abcdef0123456789", t.clock.now(), {
      userId: DEMO.superAdmin.id,
      isSuperAdmin: true,
      schools: {},
    });
    const { accessToken } = await t.signIn(DEMO.northTeacher.phone);
    const [header, payload] = accessToken.split(".");
    const unsigned = `${header}.${payload}.`;
    for (const authorization of [
      undefined,
      `Bearer ${forged}`,
      `Bearer ${unsigned}`,
      "Bearer not-a-jwt",
      `Basic ${btoa("a:b")}`,
      accessToken,
    ]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const res = await t.request("/api/v1/user/me", { headers });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await problem(res)).type).toBe("/problems/unauthorized");
    }
  });

  it("carry the caller's roles: a parent may not read permissions, an admin may", async () => {
    const parent = await t.signIn(DEMO.northParent.phone);
    expect(Object.keys(claimsOf(parent.accessToken).sch)).toEqual(["1"]);
    const denied = await t.request("/api/v1/permission", { token: parent.accessToken });
    expect(denied.status).toBe(403);
    expect((await problem(denied)).detail).toMatch(/permission\.read/);

    const admin = await t.signIn(DEMO.northAdmin.phone);
    expect((await t.request("/api/v1/permission", { token: admin.accessToken })).status).toBe(200);
  });
});
