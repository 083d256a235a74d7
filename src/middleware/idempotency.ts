/**
 * Safe retries. A POST or PATCH sent with `Idempotency-Key` by a signed-in user runs once: its
 * answer is stored (per user and key, for 24 hours) and a repeat of the same request gets that
 * answer again, with `Idempotent-Replayed: true`. The same key with another request (method, path,
 * school or body) is a 422; a repeat while the first is still running is a 409 (retry shortly).
 *
 * Claiming a key is ONE statement (an upsert that takes a free or expired key and answers the row
 * only when it took it), so two concurrent requests with one key cannot both run. An answer of 500
 * or more is not kept (the key is freed: a retry runs again), nor one that is not text (a file).
 * Requests without the header cost nothing.
 */
import type { MiddlewareHandler } from "hono";
import { idempotencyKeys } from "../db/schema/jobs";
import { and, eq, lte, sql } from "../db/sql";
import type { AppEnv } from "../lib/context";
import { sha256Hex } from "../lib/crypto";
import { ApiError, say } from "../lib/errors";
import { m } from "../lib/message";

const KEEP_MS = 24 * 60 * 60 * 1000;
/** Printable ASCII, as Stripe's and the IETF draft's keys are. */
const KEY = /^[\x21-\x7e]{1,255}$/;
/** The largest answer kept for replay (a page of records; a bigger answer is not kept). */
const MAX_KEPT_BYTES = 256 * 1024;
const KEPT_HEADERS = ["content-type", "location"];

export const idempotency: MiddlewareHandler<AppEnv> = async function idempotency(c, next) {
  const key = c.req.header("idempotency-key");
  const userId = c.get("principal")?.userId;
  if (key === undefined || userId === undefined) return next();
  if (!KEY.test(key)) {
    throw new ApiError(400, m`Idempotency-Key must be 1 to 255 printable ASCII characters`, {
      title: m`Invalid Idempotency-Key`,
    });
  }
  const { db, clock } = c.get("deps");
  const url = new URL(c.req.url);
  // The body as bytes (a text read would garble an uploaded file the route then reads from the cache).
  const head = new TextEncoder().encode(
    `${c.req.method}\n${url.pathname}${url.search}\n${c.get("principal")?.schoolId ?? ""}\n`,
  );
  const body = new Uint8Array(await c.req.arrayBuffer());
  const whole = new Uint8Array(head.length + body.length);
  whole.set(head);
  whole.set(body, head.length);
  const fingerprint = await sha256Hex(whole);
  const now = clock.now();
  const at = now.toISOString();
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ userId, key, fingerprint, status: "pending", expiresAt: new Date(now.getTime() + KEEP_MS).toISOString() })
    .onConflictDoUpdate({
      target: [idempotencyKeys.userId, idempotencyKeys.key],
      set: {
        fingerprint: sql`excluded.fingerprint`,
        status: "pending",
        responseStatus: null,
        responseHeaders: null,
        responseBody: null,
        createdAt: at,
        expiresAt: sql`excluded.expires_at`,
      },
      // Only an expired key is taken over; a live one answers no row.
      setWhere: lte(idempotencyKeys.expiresAt, at),
    })
    .returning({ id: idempotencyKeys.id });

  if (!claimed) return replay(c, userId, key, fingerprint);

  await next();
  const res = c.res;
  const type = res.headers.get("content-type") ?? "";
  const text = res.status < 500 && /json|text/.test(type) ? await res.clone().text() : undefined;
  const row = eq(idempotencyKeys.id, claimed.id);
  if (text === undefined || text.length > MAX_KEPT_BYTES) {
    await db.delete(idempotencyKeys).where(row);
    return;
  }
  const headers = Object.fromEntries(
    KEPT_HEADERS.flatMap((h) => (res.headers.has(h) ? [[h, res.headers.get(h)]] : [])),
  );
  await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: res.status, responseHeaders: JSON.stringify(headers), responseBody: text })
    .where(row);
};

/** The stored answer to a repeat, or why there is none. */
async function replay(c: Parameters<typeof idempotency>[0], userId: number, key: string, fingerprint: string) {
  const [row] = await c
    .get("deps")
    .db.select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)))
    .limit(1);
  if (row && row.fingerprint !== fingerprint) {
    throw new ApiError(422, say.idempotencyReused, {
      title: m`Idempotency-Key reused`,
    });
  }
  // Still running, or just freed by a failure: either way, a retry in a moment runs or replays.
  if (row?.status !== "done" || row.responseStatus === null) {
    throw new ApiError(409, say.idempotencyRunning, {
      title: m`Request in progress`,
      headers: { "retry-after": "1" },
    });
  }
  const headers = new Headers(JSON.parse(row.responseHeaders ?? "{}"));
  headers.set("idempotent-replayed", "true");
  return new Response(row.responseBody, { status: row.responseStatus, headers });
}
