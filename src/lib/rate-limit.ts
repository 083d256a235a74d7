/**
 * Fixed-window rate limits kept in the `rate_limit` table, so they hold across every isolate and
 * location (no in-memory counters). A hit is ONE upsert that counts and, when the window is over,
 * starts a new one: concurrent requests are serialised by the database and none can pass a check
 * that another has already used up.
 */
import type { Db } from "../db/client";
import { rateLimits } from "../db/schema/jobs";
import { sql } from "../db/sql";
import type { Ctx } from "./context";
import { ApiError } from "./errors";
import type { Message } from "./message";
import { type CountedLimit, currentRequest } from "./metrics";

export type Limit = { key: string; limit: number; windowSeconds: number };

/** `allowed` when the count is within the limit; `retryAfter`: seconds until the window resets. */
export type Hit = { allowed: boolean; count: number; retryAfter: number };

function upsert(db: Db, { key, windowSeconds }: Limit, now: Date) {
  const at = now.toISOString();
  const over = sql`${rateLimits.resetAt} <= ${at}`;
  return db
    .insert(rateLimits)
    .values({ key, count: 1, resetAt: new Date(now.getTime() + windowSeconds * 1000).toISOString() })
    .onConflictDoUpdate({
      target: rateLimits.key,
      // SQLite evaluates every SET expression on the row as it was: both see the old reset_at.
      set: {
        count: sql`CASE WHEN ${over} THEN 1 ELSE ${rateLimits.count} + 1 END`,
        resetAt: sql`CASE WHEN ${over} THEN excluded.reset_at ELSE ${rateLimits.resetAt} END`,
      },
    })
    .returning({ count: rateLimits.count, resetAt: rateLimits.resetAt });
}

const toHit = (
  { key, limit, windowSeconds }: Limit,
  now: Date,
  row: { count: number; resetAt: string } | undefined,
): Hit => {
  if (!row) throw new Error("rate_limit upsert returned no row");
  const retryAfter = Math.max(1, Math.ceil((Date.parse(row.resetAt) - now.getTime()) / 1000));
  // The request answers RateLimit headers for it (src/app.ts); the policy is the key's kind.
  const counted = currentRequest();
  if (counted) {
    const policy = key.slice(0, Math.max(0, key.indexOf(":"))) || key;
    const remaining = Math.max(0, limit - row.count);
    counted.limits = [...(counted.limits ?? []), { policy, limit, windowSeconds, remaining, resetSeconds: retryAfter }];
  }
  return { allowed: row.count <= limit, count: row.count, retryAfter };
};

/**
 * The standard rate-limit headers (IETF httpapi draft, structured fields) of the limits a request
 * was counted against: `RateLimit-Policy` lists each, `RateLimit` tells the tightest's remaining
 * quota and the seconds until its window resets.
 */
export function rateLimitHeaders(limits: readonly CountedLimit[]): Record<string, string> {
  const tightest = limits.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return {
    "ratelimit-policy": limits.map((l) => `"${l.policy}";q=${l.limit};w=${l.windowSeconds}`).join(", "),
    ratelimit: `"${tightest.policy}";r=${tightest.remaining};t=${tightest.resetSeconds}`,
  };
}

/**
 * Counts one request against `key`: at most `limit` per window of `windowSeconds`.
 *
 * @example
 * const { allowed, retryAfter } = await hit(db, `verify-phone:${phone}`, 10, 3600, clock.now());
 * if (!allowed) throw new ApiError(429, "Too many checks", { headers: { "retry-after": String(retryAfter) } });
 */
export async function hit(db: Db, key: string, limit: number, windowSeconds: number, now: Date): Promise<Hit> {
  const [row] = await upsert(db, { key, limit, windowSeconds }, now);
  return toHit({ key, limit, windowSeconds }, now, row);
}

/**
 * Counts one request against several limits in one round trip (one batch). Each is counted even
 * when another refuses, so a refused caller keeps using up its own windows.
 */
export async function hitAll(db: Db, limits: readonly [Limit, ...Limit[]], now: Date): Promise<Hit[]> {
  const [first, ...rest] = limits.map((l) => upsert(db, l, now));
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  return results.map((rows, i) => {
    const limit = limits[i];
    if (!limit) throw new Error("hitAll: a result without its limit");
    return toHit(limit, now, rows[0]);
  });
}

/** The key used when a request carries no client address (local development, tests). */
export const UNKNOWN_ADDRESS = "unknown";

/**
 * A client address as a rate-limit identity: IPv4 as is; IPv6 by its /64, the block one subscriber
 * gets, so rotating addresses within it buys no extra tries.
 */
export function addressKey(address: string | null | undefined): string {
  const a = address?.trim().toLowerCase().slice(0, 64);
  if (!a) return UNKNOWN_ADDRESS;
  if (!a.includes(":")) return a;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)?.[1];
  if (mapped) return mapped;
  const [head = "", tail] = a.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = 8 - left.length - right.length;
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, missing)).fill("0"), ...right];
  const prefix = groups.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16));
  while (prefix.length < 4) prefix.push("0");
  return `${prefix.join(":")}::/64`;
}

/** How many lookups of a public page by its secret key (a pickup pass, an event's, a task's) one address makes a minute. */
export const PUBLIC_LOOKUPS_PER_MINUTE = 60;

/**
 * The guard of a public page found by its secret key: at most PUBLIC_LOOKUPS_PER_MINUTE lookups a
 * minute per client address (`<kind>-ip:<address>`, the RateLimit policy `<kind>-ip`), else a 429
 * with retry-after saying `tooMany`. Every such page goes through it, so guessing keys costs the same
 * everywhere.
 */
export async function limitPublicLookups(ctx: Ctx, kind: string, tooMany: Message): Promise<void> {
  const address = addressKey(currentRequest()?.clientAddress);
  const limited = await hit(ctx.deps.db, `${kind}-ip:${address}`, PUBLIC_LOOKUPS_PER_MINUTE, 60, ctx.deps.clock.now());
  if (!limited.allowed) throw new ApiError(429, tooMany, { headers: { "retry-after": String(limited.retryAfter) } });
}
