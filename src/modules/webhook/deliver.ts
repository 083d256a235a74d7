/**
 * The webhook queue's consumer: one attempt of one delivery. At least once, and idempotent:
 * - the attempt is claimed by one conditional UPDATE (still pending, due, its endpoint active), so
 *   a message delivered twice, or two copies at once, make one attempt; a delivered delivery is
 *   never sent again by a redelivered message;
 * - the event keeps its `webhook-id` on every attempt, so a receiver recognises a repeat;
 * - a failed attempt is recorded and retried with backoff (RETRY_SCHEDULE) for about 24 hours, then
 *   the delivery has failed for good; an endpoint with PAUSE_AFTER failed attempts in a row is paused
 *   and the school's admins are told.
 */
import { Batch } from "../../db/batch";
import {
  WebhookDeliveries,
  WebhookEndpoints,
  WebhookMessages,
  webhookDeliveries,
  webhookEndpoints,
  webhookMessages,
} from "../../db/schema/webhook";
import { and, eq, gte, isNull, lte, or, sql } from "../../db/sql";
import type { Deps } from "../../deps";
import { jobCtx, type SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { errorFields, log } from "../../lib/log";
import { type Consumer, RetryLater } from "../../lib/module";
import { notify } from "../notification/api";
import {
  ATTEMPT_TIMEOUT_MS,
  MAX_ATTEMPTS,
  PAUSE_AFTER,
  RETRY_SCHEDULE,
  WEBHOOK_QUEUE,
  type WebhookQueueMessage,
  WebhookQueueMessage as WebhookQueueMessageSchema,
} from "./queue";
import { openSecret } from "./secret";
import { signedHeaders } from "./signing";
import { refusedDestination } from "./url";

/** How long a claimed attempt is held before another consumer may take it over. */
const LEASE_MS = 60_000;
/** Attempts kept in a delivery's log (the oldest dropped first). */
const LOG_SIZE = 50;

const d = webhookDeliveries;

function parse(message: Message<unknown>): WebhookQueueMessage | undefined {
  const parsed = WebhookQueueMessageSchema.safeParse(message.body);
  if (!parsed.success) log.error("malformed webhook message", { queue: WEBHOOK_QUEUE, messageId: message.id });
  return parsed.success ? parsed.data : undefined;
}

export const consumeWebhook: Consumer = async (deps, message) => {
  const body = parse(message);
  if (body) await attempt(deps, body, message.id);
};

/** A message that failed for good: its delivery, if still pending, has failed. */
export const deadWebhook: Consumer = async (deps, message) => {
  const body = parse(message);
  if (!body) return;
  const ctx = jobCtx(deps, "webhook-delivery", body.schoolId);
  await failPending(ctx, body.deliveryId, deps.clock.now().toISOString());
};

/** A delivery still pending has failed (none that ended already changes). */
function failPending(ctx: SchoolCtx, deliveryId: number, at: string) {
  // Through a batch: the school's database (docs/scaling.md "Shards"), not the platform's.
  return new Batch(ctx)
    .add(
      ctx.deps.db
        .update(d)
        .set({ status: "failed", claim: null, nextAttemptAt: null, updatedAt: at })
        .where(WebhookDeliveries.where(ctx, eq(d.id, deliveryId), eq(d.status, "pending"))),
    )
    .commit();
}

type Outcome = { statusCode: number | null; error: string | null; durationMs: number; ok: boolean };

async function post(url: string, headers: Record<string, string>, body: string, deps: Deps): Promise<Outcome> {
  const started = Date.now();
  // Checked again at each attempt: where the name points may have changed since the endpoint was saved.
  const refused = await refusedDestination(url, deps.config.environment === "development", deps.resolver);
  if (refused) return { statusCode: null, error: `refused: ${refused}`, durationMs: 0, ok: false };
  try {
    const res = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    const error = ok ? null : res.status >= 300 && res.status < 400 ? "redirect not followed" : `HTTP ${res.status}`;
    return { statusCode: res.status, error, durationMs: Date.now() - started, ok };
  } catch (err) {
    const error = err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : "failed";
    return { statusCode: null, error, durationMs: Date.now() - started, ok: false };
  }
}

const logAppend = (entry: string) =>
  sql`CASE WHEN json_array_length(${d.attemptLog}) >= ${LOG_SIZE}
    THEN json_insert(json_remove(${d.attemptLog}, '$[0]'), '$[#]', json(${entry}))
    ELSE json_insert(${d.attemptLog}, '$[#]', json(${entry})) END`;

export async function attempt(deps: Deps, message: WebhookQueueMessage, messageId: string) {
  const ctx = jobCtx(deps, "webhook-delivery", message.schoolId);
  const now = deps.clock.now();
  const at = now.toISOString();
  const claim = `${messageId}:${randomToken(9)}`;
  const activeEndpoint = WebhookEndpoints.exists(
    ctx,
    eq(webhookEndpoints.id, d.endpointId),
    eq(webhookEndpoints.status, "active"),
  );
  const batch = new Batch(ctx).add(
    deps.db
      .update(d)
      .set({
        claim,
        attempts: sql`${d.attempts} + 1`,
        nextAttemptAt: new Date(now.getTime() + LEASE_MS).toISOString(),
        updatedAt: at,
      })
      .where(
        WebhookDeliveries.where(
          ctx,
          eq(d.id, message.deliveryId),
          eq(d.status, "pending"),
          or(isNull(d.nextAttemptAt), lte(d.nextAttemptAt, at)),
          activeEndpoint,
        ),
      ),
  );
  const read = batch.read(
    WebhookDeliveries.select(ctx, {
      id: d.id,
      status: d.status,
      claim: d.claim,
      attempts: d.attempts,
      nextAttemptAt: d.nextAttemptAt,
      endpointId: d.endpointId,
      endpointStatus: webhookEndpoints.status,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
      previousSecretUntil: webhookEndpoints.previousSecretUntil,
      msgId: webhookMessages.msgId,
      payload: webhookMessages.payload,
    })
      .join(WebhookEndpoints, eq(webhookEndpoints.id, d.endpointId))
      .join(WebhookMessages, eq(webhookMessages.id, d.messageId))
      .where(eq(d.id, message.deliveryId)),
  );
  const [row] = (await batch.commit()).get(read);
  if (row?.status !== "pending") return; // deleted, or delivered / failed already: nothing twice
  if (row.claim !== claim) {
    if (row.endpointStatus !== "active") {
      await failPending(ctx, row.id, at);
      return;
    }
    // Not due yet (an early copy of the message, or an attempt under way elsewhere): come back then.
    const due = row.nextAttemptAt ? Date.parse(row.nextAttemptAt) - now.getTime() : 0;
    throw new RetryLater("webhook delivery not due yet", Math.max(1, Math.ceil(due / 1000)));
  }

  const secrets = [await openSecret(deps.config.authSecret, row.secret)];
  if (row.previousSecret && row.previousSecretUntil && row.previousSecretUntil > at) {
    secrets.push(await openSecret(deps.config.authSecret, row.previousSecret));
  }
  const headers = await signedHeaders(secrets, row.msgId, now, row.payload);
  const outcome = await post(row.url, headers, row.payload, deps);
  const entry = JSON.stringify({
    at,
    statusCode: outcome.statusCode,
    error: outcome.error,
    durationMs: outcome.durationMs,
  });
  const mine = WebhookDeliveries.where(ctx, eq(d.id, row.id), eq(d.claim, claim));
  const endpoint = (where = eq(webhookEndpoints.id, row.endpointId)) => WebhookEndpoints.where(ctx, where);
  const done = new Batch(ctx);
  if (outcome.ok) {
    done.add(
      deps.db
        .update(d)
        .set({ status: "delivered", deliveredAt: at, claim: null, nextAttemptAt: null, attemptLog: logAppend(entry) })
        .where(mine),
      deps.db.update(webhookEndpoints).set({ failureStreak: 0 }).where(endpoint()),
    );
    await done.commit();
    return;
  }
  const last = row.attempts >= MAX_ATTEMPTS;
  const delay = RETRY_SCHEDULE[row.attempts - 1] ?? 0;
  done.add(
    deps.db
      .update(d)
      .set({
        status: last ? "failed" : "pending",
        claim: null,
        nextAttemptAt: last ? null : new Date(now.getTime() + delay * 1000).toISOString(),
        attemptLog: logAppend(entry),
      })
      .where(mine),
    deps.db
      .update(webhookEndpoints)
      .set({ failureStreak: sql`${webhookEndpoints.failureStreak} + 1` })
      .where(endpoint()),
    ...WebhookEndpoints.update(
      ctx,
      and(
        eq(webhookEndpoints.id, row.endpointId),
        eq(webhookEndpoints.status, "active"),
        gte(webhookEndpoints.failureStreak, PAUSE_AFTER),
      ),
      { status: "paused", pausedReason: `Paused after ${PAUSE_AFTER} failed attempts in a row` },
      "pause",
    ),
  );
  const paused = done.read(
    WebhookEndpoints.select(ctx, { id: webhookEndpoints.id, url: webhookEndpoints.url }).where(
      eq(webhookEndpoints.id, row.endpointId),
      eq(webhookEndpoints.status, "paused"),
      eq(webhookEndpoints.updatedAt, at),
      gte(webhookEndpoints.failureStreak, PAUSE_AFTER),
    ),
  );
  const [pausedNow] = (await done.commit()).get(paused);
  if (pausedNow) await tellPaused(ctx, pausedNow);
  if (!last) throw new RetryLater(`webhook attempt failed: ${outcome.error}`, delay);
}

/** The school's admins hear that an endpoint was paused (once: when this attempt paused it). */
async function tellPaused(ctx: SchoolCtx, endpoint: { id: number; url: string }) {
  try {
    const sending = notify(ctx, {
      category: "general",
      title: { en: "A webhook was paused", es: "Se pausó un webhook" },
      body: {
        en: `Deliveries to ${endpoint.url} failed ${PAUSE_AFTER} times in a row; it is paused until an admin resumes it.`,
        es: `Los envíos a ${endpoint.url} fallaron ${PAUSE_AFTER} veces seguidas; queda en pausa hasta que un administrador lo reanude.`,
      },
      about: { entity: "webhook", id: endpoint.id },
      audience: { roles: [2] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await sending.dispatch();
  } catch (err) {
    log.error("webhook pause not told", { endpointId: endpoint.id, ...errorFields(err) });
  }
}
