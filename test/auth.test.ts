/**
 * Sign-in by verification code and the sessions that follow (BRIEF 3 "Auth"): limits on codes,
 * hashed storage, attempts, expiry, one use, refresh rotation with reuse detection, revocation,
 * and access tokens that expire and carry the caller's roles.
 *
 * Storage is shared by the tests of this file, so each test moves the clock two hours on (past
 * every per-number limit) and tests that exhaust a number use a number of their own.
 */
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { users } from "../src/db/core";
import { verificationCodes } from "../src/modules/auth/schema";
import { signAccessToken } from "../src/modules/auth/tokens";
import { DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();

beforeEach(() => {
  t.clock.advance(2 * 3600);
});

let nextPhone = 0;
/** A user of our own (a number no other test touches), in the given status. */
async function newUser(status: "invited" | "active" | "inactive" = "active") {
  const phone = `+1555010${String(++nextPhone).padStart(4, "0")}`;
  const [row] = await t.db.insert(users).values({ phone, status, firstName: "Test" }).returning({ id: users.id });
  if (!row) throw new Error("user not inserted");
  return { id: row.id, phone };
}

const sendCode = (phone: unknown) =>
  t.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
const verify = (phone: string, code: string) =>
  t.request("/api/v1/auth/verify-code", { method: "POST", body: { phone, code } });
const verifyPhone = (phone: unknown) =>
  t.request("/api/v1/auth/verify-phone-number", { method: "POST", body: { phone } });
const refresh = (refreshToken: string) =>
  t.request("/api/v1/auth/refresh-token", { method: "POST", body: { refreshToken } });

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
  it("refuses a number that is not E.164, naming the field", async () => {
    for (const phone of ["5550000002", "+0123456789", "+1 555 000 0002", "", "+1555", 15550000002, null]) {
      const res = await sendCode(phone);
      expect(res.status, String(phone)).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toEqual(["phone"]);
    }
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
    const session = (await res.json()) as Record<string, any>;
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
    await problem(res);
    // A new code starts a new count.
    t.clock.advance(61);
    await sendCode(phone);
    expect((await verify(phone, await t.lastCode(phone))).status).toBe(200);
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
