/**
 * Sign-in by verification code, and the session that follows.
 *
 * Codes: 6 digits, stored as an HMAC, valid 10 minutes, 5 attempts; per number a resend cooldown
 * and an hourly cap (`config.authLimits`: 60 s and 5 unless development). Sessions: an access JWT
 * (10 minutes) and a rotating refresh token (30 days, stored hashed); reusing a rotated refresh
 * token revokes its whole family.
 *
 * D1 has no interactive transactions, so every limit is enforced by the one statement that uses it
 * up (a conditional insert, a conditional update, an upsert): concurrent requests cannot all pass
 * a check that each read before the others wrote.
 */
import { Batch } from "../../db/batch";
import { refreshTokens, verificationCodes } from "../../db/schema/auth";
import {
  RolePermissions,
  RoleUsers,
  rolePermissions,
  roleUsers,
  Schools,
  schools,
  Users,
  users,
} from "../../db/schema/core";
import { idempotencyKeys, rateLimits } from "../../db/schema/jobs";
import { otherDatabases } from "../../db/shards";
import { and, desc, eq, gt, isNull, lt, lte, sql } from "../../db/sql";
import type { Deps } from "../../deps";
import { bitmapsBySchool, FIRST_CUSTOM_PERMISSION_ID } from "../../lib/access";
import type { Ctx } from "../../lib/context";
import { hmacHex, randomDigits, randomToken, sha256Hex, timingSafeEqual } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { type Language, languageFor, languageFrom } from "../../lib/language";
import { type Message, m } from "../../lib/message";
import { addressKey, hitAll } from "../../lib/rate-limit";
import { ACCESS_TTL_SECONDS, signAccessToken } from "../../lib/tokens";
import { disabledModulesOfUser } from "../application-module/api";
import { delegatedMemberships, delegationsQuery } from "../delegate/api";
import { toUser } from "../user/api";

export const CODE_TTL_SECONDS = 10 * 60;
export const CODE_MAX_ATTEMPTS = 5;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;
/** Windows of the `verify-phone-number` limits (their sizes are settings). */
export const PHONE_CHECK_NUMBER_WINDOW_SECONDS = 3600;
export const PHONE_CHECK_ADDRESS_WINDOW_SECONDS = 10 * 60;

const iso = (d: Date) => d.toISOString();
const plus = (d: Date, seconds: number) => new Date(d.getTime() + seconds * 1000);

const tooMany = (detail: Message, retryAfter: number, title?: Message) =>
  new ApiError(429, detail, { title, headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfter))) } });

const codeHash = (deps: Deps, phone: string, code: string) => hmacHex(deps.config.authSecret, `${phone}:${code}`);

/** The text of the SMS that carries a code (the code is its only run of six digits, in every language). */
export const codeMessage = (code: string) => m`Your school app code is ${code}. It expires in 10 minutes.`;

/** The code a message from `codeMessage` carries, or null (the development outbox shows it). */
export const codeInMessage = (body: string) => /(?<!\d)(\d{6})(?!\d)/.exec(body)?.[1] ?? null;

/** Users who may sign in: invited (first sign-in activates them) or active. */
const canSignIn = (status: string | undefined) => status === "invited" || status === "active";

/**
 * Says whether a number may sign in. Limited per number and per client address (the
 * `cf-connecting-ip` of the request), so it cannot be used to list who is registered.
 */
export async function verifyPhoneNumber(deps: Deps, phone: string, clientAddress?: string | null) {
  const { db, clock, config } = deps;
  const now = clock.now();
  const limits = config.authLimits;
  const [byNumber, byAddress] = await hitAll(
    db,
    [
      {
        key: `verify-phone:${phone}`,
        limit: limits.phoneChecksPerNumber,
        windowSeconds: PHONE_CHECK_NUMBER_WINDOW_SECONDS,
      },
      {
        key: `verify-phone-ip:${addressKey(clientAddress)}`,
        limit: limits.phoneChecksPerAddress,
        windowSeconds: PHONE_CHECK_ADDRESS_WINDOW_SECONDS,
      },
    ],
    now,
  );
  const refused = [byNumber, byAddress].filter((h) => h && !h.allowed);
  if (refused.length > 0) {
    throw tooMany(m`Too many number checks; try again later`, Math.max(...refused.map((h) => h?.retryAfter ?? 1)));
  }
  const [user] = await db.select({ status: users.status }).from(users).where(eq(users.phone, phone)).limit(1);
  return { phone, registered: canSignIn(user?.status) };
}

/**
 * Sends a code. The answer is the same whether or not the number belongs to a user (the app asks
 * `verify-phone-number` for that), and the limits apply to every number alike.
 */
export async function sendVerificationCode(deps: Deps, phone: string) {
  const { db, clock } = deps;
  const { resendCooldownSeconds: cooldown, codesPerHour } = deps.config.authLimits;
  const now = clock.now();
  const [user] = await db
    .select({ status: users.status, language: users.language })
    .from(users)
    .where(eq(users.phone, phone))
    .limit(1);
  const known = canSignIn(user?.status);
  // An unknown number gets a row too (so its limits count), holding a code nobody will see.
  const code = randomDigits(6);
  const hash = await codeHash(deps, phone, known ? code : randomToken());

  // One statement checks both limits and inserts: D1 runs statements one at a time, so of
  // concurrent requests exactly those within the limits get a row.
  const vc = verificationCodes;
  const col = (c: { name: string }) => sql.identifier(c.name);
  const recent = (since: Date) => and(eq(vc.phone, phone), gt(vc.createdAt, iso(since)));
  const inserted = await db.all<{ id: number }>(sql`
    INSERT INTO ${vc} (${col(vc.phone)}, ${col(vc.codeHash)}, ${col(vc.expiresAt)}, ${col(vc.createdAt)})
    SELECT ${phone}, ${hash}, ${iso(plus(now, CODE_TTL_SECONDS))}, ${iso(now)}
    WHERE NOT EXISTS (SELECT 1 FROM ${vc} WHERE ${recent(plus(now, -cooldown))})
      AND (SELECT count(*) FROM ${vc} WHERE ${recent(plus(now, -3600))}) < ${codesPerHour}
    RETURNING ${col(vc.id)}`);
  const row = inserted[0];
  if (!row) throw await refusal(deps, phone, now);

  if (known) {
    try {
      // The request's language (Accept-Language), else the number's user's own.
      await deps.sms.send(phone, codeMessage(code).render(languageFor(user?.language)));
    } catch (err) {
      // Nothing was delivered: the row must not hold a cooldown or count toward the hourly cap,
      // or the 503's "try again shortly" would be answered with a 429.
      await db.delete(vc).where(eq(vc.id, row.id));
      throw err;
    }
  }
  return { sent: true as const, expiresIn: CODE_TTL_SECONDS, resendIn: cooldown };
}

/** Why a code was refused, and for how long: the 429 of `sendVerificationCode`. */
async function refusal(deps: Deps, phone: string, now: Date) {
  const { resendCooldownSeconds: cooldown, codesPerHour } = deps.config.authLimits;
  const recent = await deps.db
    .select({ createdAt: verificationCodes.createdAt })
    .from(verificationCodes)
    .where(and(eq(verificationCodes.phone, phone), gt(verificationCodes.createdAt, iso(plus(now, -3600)))))
    .orderBy(desc(verificationCodes.createdAt));
  const age = (row: { createdAt: string }) => (now.getTime() - Date.parse(row.createdAt)) / 1000;
  const latest = recent[0];
  if (latest && cooldown - age(latest) > 0) {
    const wait = cooldown - age(latest);
    return tooMany(m`Wait ${Math.ceil(wait)} s before asking for another code`, wait);
  }
  // The code whose leaving the hour window brings the count under the cap.
  const blocking = recent[codesPerHour - 1];
  if (blocking) return tooMany(m`At most ${codesPerHour} codes per hour for a number`, 3600 - age(blocking));
  // A concurrent request's failed send removed its row in between: asking again will do.
  return tooMany(m`Another code was being sent to this number; try again`, 1);
}

/** What an access token says about a user's schools: each role's permissions, per school. */
/**
 * The permissions of a user's roles, per school. A delegate's delegations add, in each school where
 * one is valid today (the school's date: src/modules/delegate/acting.ts), the built-in parent
 * role's permissions: never more than a parent holds.
 */
function membershipsQuery(ctx: Ctx, userId: number) {
  return RoleUsers.everySchool(ctx, (school) => ({
    schoolId: school,
    permissionId: rolePermissions.permissionId,
    language: schools.language,
  }))
    .join(Schools, eq(schools.id, RoleUsers.schoolOf()))
    .leftJoin(RolePermissions, eq(rolePermissions.roleId, roleUsers.roleId))
    .where(eq(roleUsers.userId, userId));
}

type Membership = { schoolId: number; permissionId: number | null; language: Language };

/**
 * The user's schools on the other databases (docs/scaling.md "Shards", group F): the sign-in's
 * own batch reads those on the platform's; each shard's are one read batch there (the schools'
 * rows point at their anchors: `school`, the user), in parallel with it. Never one statement over
 * two databases.
 */
async function onShards(ctx: Ctx, userId: number) {
  const parts = await Promise.all(
    otherDatabases(ctx).map(async (on) => {
      const batch = new Batch(on);
      const memberships = batch.read(membershipsQuery(on, userId));
      const disabled = batch.read(disabledModulesOfUser(on, userId));
      const delegations = batch.result(delegationsQuery(on.deps, userId));
      const results = await batch.commit();
      return {
        memberships: results.get(memberships),
        disabled: results.get(disabled),
        delegations: results.get(delegations),
      };
    }),
  );
  return {
    memberships: parts.flatMap((p) => p.memberships),
    disabled: parts.flatMap((p) => p.disabled),
    delegations: parts.flatMap((p) => p.delegations),
  };
}

export function schoolBitmaps(rows: { schoolId: number; permissionId: number | null }[]): Record<string, string> {
  // Tokens carry the built-in catalogue only: custom permissions (ids from 1000) gate no route.
  const builtIn = (id: number | null) => (id !== null && id < FIRST_CUSTOM_PERMISSION_ID ? id : null);
  return bitmapsBySchool(rows.map((r) => ({ schoolId: r.schoolId, id: builtIn(r.permissionId) })));
}

type UserRow = typeof users.$inferSelect;

async function issueTokens(
  deps: Deps,
  user: UserRow,
  memberships: Membership[],
  disabled: { schoolId: number; moduleId: number }[],
  refreshToken: string,
) {
  const accessToken = await signAccessToken(deps.config.authSecret, deps.clock.now(), {
    userId: user.id,
    isSuperAdmin: user.isSuperAdmin,
    schools: schoolBitmaps(memberships),
    disabledModules: bitmapsBySchool(disabled.map((r) => ({ schoolId: r.schoolId, id: r.moduleId }))),
    language: languageFrom(user.language),
    schoolLanguages: Object.fromEntries(memberships.map((r) => [String(r.schoolId), r.language])),
  });
  return { accessToken, refreshToken, tokenType: "Bearer" as const, expiresIn: ACCESS_TTL_SECONDS, user: toUser(user) };
}

export async function verifyCode(ctx: Ctx, phone: string, code: string) {
  const { deps } = ctx;
  const { db, clock } = deps;
  const now = clock.now();
  const vc = verificationCodes;
  const latest = and(eq(vc.phone, phone), isNull(vc.consumedAt));
  // The attempt is claimed before the code is compared, by one conditional update: of concurrent
  // guesses at most CODE_MAX_ATTEMPTS are ever evaluated, and after them the code is dead, even
  // for the right code. The read before it (same batch, so the same moment) says why a claim failed.
  const [[user], [pending], [claimed]] = await db.batch([
    db.select().from(users).where(eq(users.phone, phone)).limit(1),
    db.select().from(vc).where(latest).orderBy(desc(vc.id)).limit(1),
    db
      .update(vc)
      .set({ attempts: sql`${vc.attempts} + 1` })
      .where(
        and(
          eq(vc.id, db.select({ id: vc.id }).from(vc).where(latest).orderBy(desc(vc.id)).limit(1)),
          isNull(vc.consumedAt),
          lt(vc.attempts, CODE_MAX_ATTEMPTS),
          gt(vc.expiresAt, iso(now)),
        ),
      )
      .returning({ id: vc.id, attempts: vc.attempts, codeHash: vc.codeHash }),
  ] as const);
  if (!claimed) {
    if (pending && Date.parse(pending.expiresAt) > now.getTime()) {
      // Spent: the remedy is a new code, which may be asked for once the resend cooldown is over.
      const wait =
        deps.config.authLimits.resendCooldownSeconds - (now.getTime() - Date.parse(pending.createdAt)) / 1000;
      throw tooMany(m`Too many wrong attempts; request a new code`, wait, m`Too many attempts`);
    }
    throw new ApiError(401, m`No valid code for this number; request a new one`, { title: m`Invalid code` });
  }
  const matches = timingSafeEqual(claimed.codeHash, await codeHash(deps, phone, code));
  if (!matches || !user || !canSignIn(user.status)) {
    const left = CODE_MAX_ATTEMPTS - claimed.attempts;
    throw new ApiError(401, left === 1 ? m`Wrong code; ${left} attempt left` : m`Wrong code; ${left} attempts left`, {
      title: m`Invalid code`,
    });
  }

  const refreshToken = randomToken();
  const batch = new Batch(ctx);
  const consumedSlot = batch.result(
    db
      .update(verificationCodes)
      .set({ consumedAt: iso(now) })
      .where(and(eq(verificationCodes.id, claimed.id), isNull(verificationCodes.consumedAt)))
      .returning({ id: verificationCodes.id }),
  );
  // A first sign-in activates the user: the row copied to every database holding it.
  if (user.status === "invited") batch.mirrorUsers([user.id]);
  batch.add(
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
  );
  const membershipSlot = batch.read(membershipsQuery(ctx, user.id));
  const disabledSlot = batch.read(disabledModulesOfUser(ctx, user.id));
  const delegationSlot = batch.result(delegationsQuery(deps, user.id));
  const [results, shards] = await Promise.all([batch.commit(), onShards(ctx, user.id)]);
  const [consumed, memberships, disabled, delegations] = [
    results.get(consumedSlot),
    [...results.get(membershipSlot), ...shards.memberships],
    [...results.get(disabledSlot), ...shards.disabled],
    [...results.get(delegationSlot), ...shards.delegations],
  ];
  if (consumed.length === 0) {
    // Another request used the same code in between: that one signed in, this one does not.
    await db.delete(refreshTokens).where(eq(refreshTokens.tokenHash, await sha256Hex(refreshToken)));
    throw new ApiError(401, m`This code was already used; request a new one`, { title: m`Invalid code` });
  }
  const all = [...memberships, ...delegatedMemberships(delegations, now)];
  return issueTokens(deps, { ...user, status: "active" }, all, disabled, refreshToken);
}

export async function refresh(ctx: Ctx, presented: string) {
  const { deps } = ctx;
  const { db, clock } = deps;
  const now = clock.now();
  const hash = await sha256Hex(presented);
  const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hash)).limit(1);
  const invalid = () =>
    new ApiError(401, m`Invalid or expired refresh token; sign in again`, { title: m`Invalid token` });
  if (!row) throw invalid();
  if (row.revokedAt) {
    // A rotated token came back: someone holds a copy. End every session of this family.
    await revokeFamily(deps, row.family);
    throw invalid();
  }
  if (Date.parse(row.expiresAt) <= now.getTime()) throw invalid();

  const next = randomToken();
  const batch = new Batch(ctx);
  const rotatedSlot = batch.result(
    db
      .update(refreshTokens)
      .set({ revokedAt: iso(now) })
      .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.revokedAt)))
      .returning({ id: refreshTokens.id }),
  );
  batch.add(
    db.insert(refreshTokens).values({
      userId: row.userId,
      tokenHash: await sha256Hex(next),
      family: row.family,
      expiresAt: iso(plus(now, REFRESH_TTL_SECONDS)),
      createdAt: iso(now),
    }),
  );
  const userSlot = batch.read(Users.select(ctx).where(eq(users.id, row.userId)).limit(1));
  const membershipSlot = batch.read(membershipsQuery(ctx, row.userId));
  const disabledSlot = batch.read(disabledModulesOfUser(ctx, row.userId));
  const delegationSlot = batch.result(delegationsQuery(deps, row.userId));
  const [results, shards] = await Promise.all([batch.commit(), onShards(ctx, row.userId)]);
  const rotated = results.get(rotatedSlot);
  const [user] = results.get(userSlot);
  const memberships = [...results.get(membershipSlot), ...shards.memberships];
  const disabled = [...results.get(disabledSlot), ...shards.disabled];
  const delegations = [...results.get(delegationSlot), ...shards.delegations];
  if (rotated.length === 0 || !user || user.status !== "active") {
    await revokeFamily(deps, row.family);
    throw invalid();
  }
  return issueTokens(deps, user, [...memberships, ...delegatedMemberships(delegations, now)], disabled, next);
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

/**
 * Housekeeping for the cron sweep: drop codes and refresh tokens that can no longer be used, and
 * rate-limit windows that are over (a new hit starts a fresh window anyway), and idempotency keys
 * past their 24 hours.
 */
export async function purgeExpired(deps: Deps) {
  const { db } = deps;
  const now = iso(deps.clock.now());
  const dayAgo = iso(plus(deps.clock.now(), -86400));
  await db.batch([
    db.delete(verificationCodes).where(lt(verificationCodes.expiresAt, dayAgo)),
    db.delete(refreshTokens).where(lt(refreshTokens.expiresAt, now)),
    db.delete(rateLimits).where(lte(rateLimits.resetAt, now)),
    db.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, now)),
  ]);
}
