/**
 * Sign-in by verification code, and the session that follows (BRIEF 3, "Auth").
 *
 * Codes: 6 digits, stored as an HMAC, valid 10 minutes, 5 attempts, one per minute per number,
 * at most 5 per number per hour. Sessions: an access JWT (10 minutes) and a rotating refresh token
 * (30 days, stored hashed); reusing a rotated refresh token revokes its whole family.
 */
import { and, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { rolePermissions, roleUsers, users } from "../../db/core";
import type { Deps } from "../../deps";
import { PermissionSet } from "../../lib/access";
import { hmacHex, randomDigits, randomToken, sha256Hex, timingSafeEqual } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { refreshTokens, verificationCodes } from "./schema";
import { ACCESS_TTL_SECONDS, signAccessToken } from "./tokens";

export const CODE_TTL_SECONDS = 10 * 60;
export const CODE_MAX_ATTEMPTS = 5;
export const RESEND_COOLDOWN_SECONDS = 60;
export const CODES_PER_HOUR = 5;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;

const iso = (d: Date) => d.toISOString();
const plus = (d: Date, seconds: number) => new Date(d.getTime() + seconds * 1000);

const tooMany = (detail: string, retryAfter: number) =>
  new ApiError(429, detail, { headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfter))) } });

const codeHash = (deps: Deps, phone: string, code: string) => hmacHex(deps.config.authSecret, `${phone}:${code}`);

/** Users who may sign in: invited (first sign-in activates them) or active. */
const canSignIn = (status: string | undefined) => status === "invited" || status === "active";

export async function verifyPhoneNumber(deps: Deps, phone: string) {
  const [user] = await deps.db.select({ status: users.status }).from(users).where(eq(users.phone, phone)).limit(1);
  return { phone, registered: canSignIn(user?.status) };
}

/**
 * Sends a code. The answer is the same whether or not the number belongs to a user (the app asks
 * `verify-phone-number` for that), and the limits apply to every number alike.
 */
export async function sendVerificationCode(deps: Deps, phone: string) {
  const { db, clock } = deps;
  const now = clock.now();
  const hourAgo = iso(plus(now, -3600));
  const [[user], recent] = await db.batch([
    db.select({ status: users.status }).from(users).where(eq(users.phone, phone)).limit(1),
    db
      .select({ createdAt: verificationCodes.createdAt })
      .from(verificationCodes)
      .where(and(eq(verificationCodes.phone, phone), gt(verificationCodes.createdAt, hourAgo)))
      .orderBy(desc(verificationCodes.createdAt)),
  ]);
  const latest = recent[0];
  if (latest) {
    const wait = RESEND_COOLDOWN_SECONDS - (now.getTime() - Date.parse(latest.createdAt)) / 1000;
    if (wait > 0) throw tooMany(`Wait ${Math.ceil(wait)} s before asking for another code`, wait);
  }
  if (recent.length >= CODES_PER_HOUR) {
    const oldest = recent[recent.length - 1] as { createdAt: string };
    const wait = 3600 - (now.getTime() - Date.parse(oldest.createdAt)) / 1000;
    throw tooMany(`At most ${CODES_PER_HOUR} codes per hour for a number`, wait);
  }

  const known = canSignIn(user?.status);
  // An unknown number gets a row too (so its limits count), holding a code nobody will see.
  const code = randomDigits(6);
  const [row] = await db
    .insert(verificationCodes)
    .values({
      phone,
      codeHash: await codeHash(deps, phone, known ? code : randomToken()),
      expiresAt: iso(plus(now, CODE_TTL_SECONDS)),
      createdAt: iso(now),
    })
    .returning({ id: verificationCodes.id });
  if (known) {
    try {
      await deps.sms.send(phone, `Your school app code is ${code}. It expires in 10 minutes.`);
    } catch (err) {
      // Nothing was delivered: the row must not hold a cooldown or count toward the hourly cap,
      // or the 503's "try again shortly" would be answered with a 429.
      if (row) await db.delete(verificationCodes).where(eq(verificationCodes.id, row.id));
      throw err;
    }
  }
  return { sent: true as const, expiresIn: CODE_TTL_SECONDS, resendIn: RESEND_COOLDOWN_SECONDS };
}

/** What an access token says about a user's schools: each role's permissions, per school. */
function membershipsQuery(deps: Deps, userId: number) {
  return deps.db
    .select({ schoolId: roleUsers.schoolId, permissionId: rolePermissions.permissionId })
    .from(roleUsers)
    .leftJoin(rolePermissions, eq(rolePermissions.roleId, roleUsers.roleId))
    .where(eq(roleUsers.userId, userId));
}

export function schoolBitmaps(rows: { schoolId: number; permissionId: number | null }[]): Record<string, string> {
  const bySchool = new Map<number, number[]>();
  for (const { schoolId, permissionId } of rows) {
    const ids = bySchool.get(schoolId) ?? [];
    if (permissionId !== null) ids.push(permissionId);
    bySchool.set(schoolId, ids);
  }
  return Object.fromEntries([...bySchool].map(([id, ids]) => [String(id), PermissionSet.encode(ids)]));
}

type UserRow = typeof users.$inferSelect;

export function toUser(u: UserRow) {
  return {
    id: u.id,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
    phone: u.phone,
    firstName: u.firstName,
    lastName: u.lastName,
    email: u.email,
    language: u.language,
    status: u.status,
    isSuperAdmin: u.isSuperAdmin,
  };
}

async function issueTokens(
  deps: Deps,
  user: UserRow,
  memberships: { schoolId: number; permissionId: number | null }[],
  refreshToken: string,
) {
  const accessToken = await signAccessToken(deps.config.authSecret, deps.clock.now(), {
    userId: user.id,
    isSuperAdmin: user.isSuperAdmin,
    schools: schoolBitmaps(memberships),
  });
  return { accessToken, refreshToken, tokenType: "Bearer" as const, expiresIn: ACCESS_TTL_SECONDS, user: toUser(user) };
}

export async function verifyCode(deps: Deps, phone: string, code: string) {
  const { db, clock } = deps;
  const now = clock.now();
  const [[user], [pending]] = await db.batch([
    db.select().from(users).where(eq(users.phone, phone)).limit(1),
    db
      .select()
      .from(verificationCodes)
      .where(and(eq(verificationCodes.phone, phone), isNull(verificationCodes.consumedAt)))
      .orderBy(desc(verificationCodes.id))
      .limit(1),
  ]);
  if (!pending || Date.parse(pending.expiresAt) <= now.getTime()) {
    throw new ApiError(401, "No valid code for this number; request a new one", { title: "Invalid code" });
  }
  if (pending.attempts >= CODE_MAX_ATTEMPTS) {
    throw new ApiError(429, "Too many wrong attempts; request a new code", { title: "Too many attempts" });
  }
  const matches = timingSafeEqual(pending.codeHash, await codeHash(deps, phone, code));
  if (!matches || !user || !canSignIn(user.status)) {
    await db
      .update(verificationCodes)
      .set({ attempts: sql`${verificationCodes.attempts} + 1` })
      .where(eq(verificationCodes.id, pending.id));
    const left = CODE_MAX_ATTEMPTS - pending.attempts - 1;
    throw new ApiError(401, `Wrong code; ${left} attempt${left === 1 ? "" : "s"} left`, { title: "Invalid code" });
  }

  const refreshToken = randomToken();
  const [consumed, , , , memberships] = await db.batch([
    db
      .update(verificationCodes)
      .set({ consumedAt: iso(now) })
      .where(and(eq(verificationCodes.id, pending.id), isNull(verificationCodes.consumedAt)))
      .returning({ id: verificationCodes.id }),
    db
      .update(users)
      .set({ status: "active", updatedAt: iso(now) })
      .where(and(eq(users.id, user.id), eq(users.status, "invited"))),
    db.insert(refreshTokens).values({
      userId: user.id,
      tokenHash: await sha256Hex(refreshToken),
      family: randomToken(12),
      expiresAt: iso(plus(now, REFRESH_TTL_SECONDS)),
      createdAt: iso(now),
    }),
    // The other codes of this number are spent too: one sign-in per code request.
    db
      .update(verificationCodes)
      .set({ consumedAt: iso(now) })
      .where(and(eq(verificationCodes.phone, phone), isNull(verificationCodes.consumedAt))),
    membershipsQuery(deps, user.id),
  ] as const);
  if (consumed.length === 0) {
    // Another request used the same code in between: that one signed in, this one does not.
    await db.delete(refreshTokens).where(eq(refreshTokens.tokenHash, await sha256Hex(refreshToken)));
    throw new ApiError(401, "This code was already used; request a new one", { title: "Invalid code" });
  }
  return issueTokens(deps, { ...user, status: "active" }, memberships, refreshToken);
}

export async function refresh(deps: Deps, presented: string) {
  const { db, clock } = deps;
  const now = clock.now();
  const hash = await sha256Hex(presented);
  const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hash)).limit(1);
  const invalid = () =>
    new ApiError(401, "Invalid or expired refresh token; sign in again", { title: "Invalid token" });
  if (!row) throw invalid();
  if (row.revokedAt) {
    // A rotated token came back: someone holds a copy. End every session of this family.
    await revokeFamily(deps, row.family);
    throw invalid();
  }
  if (Date.parse(row.expiresAt) <= now.getTime()) throw invalid();

  const next = randomToken();
  const [rotated, , [user], memberships] = await db.batch([
    db
      .update(refreshTokens)
      .set({ revokedAt: iso(now) })
      .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.revokedAt)))
      .returning({ id: refreshTokens.id }),
    db.insert(refreshTokens).values({
      userId: row.userId,
      tokenHash: await sha256Hex(next),
      family: row.family,
      expiresAt: iso(plus(now, REFRESH_TTL_SECONDS)),
      createdAt: iso(now),
    }),
    db.select().from(users).where(eq(users.id, row.userId)).limit(1),
    membershipsQuery(deps, row.userId),
  ] as const);
  if (rotated.length === 0 || !user || user.status !== "active") {
    await revokeFamily(deps, row.family);
    throw invalid();
  }
  return issueTokens(deps, user, memberships, next);
}

async function revokeFamily(deps: Deps, family: string) {
  await deps.db
    .update(refreshTokens)
    .set({ revokedAt: iso(deps.clock.now()) })
    .where(and(eq(refreshTokens.family, family), isNull(refreshTokens.revokedAt)));
}

/** Ends the session a refresh token belongs to. Unknown tokens are ignored (nothing to end). */
export async function logout(deps: Deps, presented: string) {
  const [row] = await deps.db
    .select({ family: refreshTokens.family })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, await sha256Hex(presented)))
    .limit(1);
  if (row) await revokeFamily(deps, row.family);
}

/** Ends every session of a user (sign out everywhere). */
export async function revokeAll(deps: Deps, userId: number) {
  await deps.db
    .update(refreshTokens)
    .set({ revokedAt: iso(deps.clock.now()) })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
}

/** Housekeeping for the cron sweep: drop codes and refresh tokens that can no longer be used. */
export async function purgeExpired(deps: Deps) {
  const { db } = deps;
  const now = iso(deps.clock.now());
  const dayAgo = iso(plus(deps.clock.now(), -86400));
  await db.batch([
    db.delete(verificationCodes).where(lt(verificationCodes.expiresAt, dayAgo)),
    db.delete(refreshTokens).where(lt(refreshTokens.expiresAt, now)),
  ]);
}
