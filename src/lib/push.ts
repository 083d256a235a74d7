/**
 * Push delivery behind one interface, chosen by `PUSH_PROVIDER` (src/config.ts):
 * - `fcm`: Firebase Cloud Messaging's HTTP v1 API, authorised by an OAuth access token that the
 *   service account's key signs for (a JWT assertion, RS256 with `jose` on Web Crypto), cached
 *   until it expires; topics through the Instance ID API. `token_uri` (in the key) and
 *   `FCM_BASE_URL` / `FCM_IID_BASE_URL` point elsewhere in tests (a local stand-in).
 * - `log`: keeps each message in the development push outbox (`GET /api/v1/dev/push-outbox`),
 *   and topic changes too, so the whole path runs locally.
 *
 * A send answers what the caller must do next: nothing (`sent`), remove the token (`gone`: the
 * provider says it is unregistered or not a valid token), try again later (`retry`: 429, 5xx, the
 * network), or give up (`failed`: refused for another reason, which no retry changes).
 */
import { importPKCS8, SignJWT } from "jose";
import { z } from "zod";
import type { ServiceAccount } from "../config";
import type { Db } from "../db/client";
import { devPushOutbox } from "../db/schema/dev";
import { and, asc, isNotNull, sql } from "../db/sql";

export interface PushSend {
  token: string;
  title: string;
  body: string;
  /** String values only (FCM's `data`): the app's deep link. */
  data: Record<string, string>;
  /** Delivered at once by the platforms (Android high priority, APNs priority 10). */
  urgent: boolean;
}

export type PushOutcome =
  | { status: "sent" }
  | { status: "gone"; reason: string }
  | { status: "retry"; reason: string; retryAfterSeconds?: number }
  | { status: "failed"; reason: string };

/** What a topic change did to each token (in order): null, or the provider's error for it. */
export type TopicOutcome = { errors: (string | null)[] };

export interface PushProvider {
  readonly name: "log" | "fcm";
  send(message: PushSend): Promise<PushOutcome>;
  subscribe(topic: string, tokens: readonly string[]): Promise<TopicOutcome>;
  unsubscribe(topic: string, tokens: readonly string[]): Promise<TopicOutcome>;
  /** The topics the provider has the token subscribed to; null when it does not know the token. */
  topicsOf(token: string): Promise<string[] | null>;
}

/** The FCM v1 message of a send (what the log provider keeps, and what FCM is sent). */
export function fcmMessage(m: PushSend) {
  return {
    message: {
      token: m.token,
      notification: { title: m.title, body: m.body },
      data: m.data,
      android: { priority: m.urgent ? "HIGH" : "NORMAL" },
      apns: { headers: { "apns-priority": m.urgent ? "10" : "5" }, payload: { aps: { sound: "default" } } },
    },
  };
}

/** The `log` provider: the development push outbox. */
export function logPush(db: Db, clock: { now(): Date }): PushProvider {
  const keep = (row: { token?: string; topic?: string; payload: Record<string, unknown> }) =>
    db.insert(devPushOutbox).values({ ...row, createdAt: clock.now().toISOString() });
  const change = async (op: "subscribe" | "unsubscribe", topic: string, tokens: readonly string[]) => {
    await keep({ topic, payload: { op, tokens: [...tokens] } });
    return { errors: tokens.map(() => null) };
  };
  return {
    name: "log",
    async send(message) {
      await keep({ token: message.token, payload: fcmMessage(message) });
      return { status: "sent" };
    },
    subscribe: (topic, tokens) => change("subscribe", topic, tokens),
    unsubscribe: (topic, tokens) => change("unsubscribe", topic, tokens),
    async topicsOf(token) {
      // The outbox's topic changes that name the token, replayed in order.
      const changes = await db
        .select({ topic: devPushOutbox.topic, payload: devPushOutbox.payload })
        .from(devPushOutbox)
        .where(
          and(
            isNotNull(devPushOutbox.topic),
            sql`EXISTS (SELECT 1 FROM json_each(${devPushOutbox.payload}, '$.tokens') WHERE value = ${token})`,
          ),
        )
        .orderBy(asc(devPushOutbox.id));
      const topics = new Set<string>();
      for (const c of changes) {
        if (c.payload.op === "subscribe") topics.add(c.topic ?? "");
        else topics.delete(c.topic ?? "");
      }
      return [...topics].sort();
    },
  };
}

const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";

/** Access tokens by service account, kept for the isolate until a minute before they expire. */
const accessTokens = new Map<string, { value: Promise<string>; expiresAt: number }>();

/** Forgets cached access tokens (tests, and a 401 from FCM). */
export function forgetAccessTokens(): void {
  accessTokens.clear();
}

interface FcmConfig {
  account: ServiceAccount;
  baseUrl: string;
  iidBaseUrl: string;
}

/** The `fcm` provider: FCM HTTP v1 and the Instance ID API. */
export function fcmPush(config: FcmConfig, clock: { now(): Date }): PushProvider {
  const { account } = config;
  const cacheKey = `${account.client_email} ${account.token_uri}`;

  async function fetchAccessToken(): Promise<{ token: string; expiresIn: number }> {
    const key = await importPKCS8(account.private_key, "RS256");
    const now = Math.floor(clock.now().getTime() / 1000);
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({
        alg: "RS256",
        typ: "JWT",
        ...(account.private_key_id ? { kid: account.private_key_id } : {}),
      })
      .setIssuer(account.client_email)
      .setSubject(account.client_email)
      .setAudience(account.token_uri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
    const res = await fetch(account.token_uri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }),
    });
    const body = TokenAnswer.safeParse(await res.json().catch(() => null));
    if (!res.ok || !body.success) throw new PushAuthError(`the OAuth token endpoint answered ${res.status}`);
    return { token: body.data.access_token, expiresIn: body.data.expires_in ?? 3600 };
  }

  /** The cached access token, or a new one (one request at a time per isolate). */
  function accessToken(): Promise<string> {
    const cached = accessTokens.get(cacheKey);
    const now = clock.now().getTime();
    if (cached && cached.expiresAt > now) return cached.value;
    const entry = { value: Promise.resolve(""), expiresAt: now + 60_000 };
    entry.value = fetchAccessToken().then(
      ({ token, expiresIn }) => {
        entry.expiresAt = now + Math.max(0, expiresIn - 60) * 1000;
        return token;
      },
      (err) => {
        accessTokens.delete(cacheKey);
        throw err;
      },
    );
    accessTokens.set(cacheKey, entry);
    return entry.value;
  }

  /** A request with the access token; a 401 forgets it and tries once more with a new one. */
  async function authorised(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const token = await accessToken();
      const res = await fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
      if (res.status !== 401 || attempt > 0) return res;
      accessTokens.delete(cacheKey);
    }
  }

  const topicChange = async (op: "batchAdd" | "batchRemove", topic: string, tokens: readonly string[]) => {
    const res = await authorised(`${config.iidBaseUrl}/iid/v1:${op}`, {
      method: "POST",
      headers: { "content-type": "application/json", access_token_auth: "true" },
      body: JSON.stringify({ to: `/topics/${topic}`, registration_tokens: tokens }),
    });
    if (!res.ok) throw new Error(`the topic service answered ${res.status} to ${op}`);
    const body = TopicAnswer.parse(await res.json());
    return { errors: tokens.map((_, i) => body.results?.[i]?.error ?? null) };
  };

  return {
    name: "fcm",
    async send(message) {
      let res: Response;
      try {
        res = await authorised(
          `${config.baseUrl}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`,
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(fcmMessage(message)),
          },
        );
      } catch (err) {
        if (err instanceof PushAuthError) return { status: "retry", reason: err.message };
        return { status: "retry", reason: `network: ${err instanceof Error ? err.message : String(err)}` };
      }
      if (res.ok) return { status: "sent" };
      const error = FcmError.safeParse(await res.json().catch(() => null));
      return outcomeOf(res.status, error.success ? error.data : {}, res.headers.get("retry-after"));
    },
    subscribe: (topic, tokens) => topicChange("batchAdd", topic, tokens),
    unsubscribe: (topic, tokens) => topicChange("batchRemove", topic, tokens),
    async topicsOf(token) {
      const res = await authorised(`${config.iidBaseUrl}/iid/info/${encodeURIComponent(token)}?details=true`, {
        method: "GET",
        headers: { access_token_auth: "true" },
      });
      if (res.status === 404 || res.status === 400) return null;
      if (!res.ok) throw new Error(`the topic service answered ${res.status}`);
      const body = InfoAnswer.parse(await res.json());
      return Object.keys(body.rel?.topics ?? {}).sort();
    },
  };
}

class PushAuthError extends Error {
  override name = "PushAuthError";
}

/** What the provider answers, as far as we read it (anything else in it is ignored). */
const TokenAnswer = z.object({ access_token: z.string().min(1), expires_in: z.number().optional() });
const TopicAnswer = z.object({ results: z.array(z.object({ error: z.string().optional() })).optional() });
const InfoAnswer = z.object({ rel: z.object({ topics: z.record(z.string(), z.unknown()).optional() }).optional() });
const FcmError = z.object({
  error: z
    .object({
      status: z.string().optional(),
      message: z.string().optional(),
      details: z
        .array(
          z.object({
            errorCode: z.string().optional(),
            fieldViolations: z.array(z.object({ field: z.string().optional() })).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
type FcmError = z.infer<typeof FcmError>;

/** What an FCM error answer means for the token and the message. */
export function outcomeOf(status: number, body: FcmError, retryAfter: string | null): PushOutcome {
  const error = body.error ?? {};
  const codes = (error.details ?? []).flatMap((d) => (d.errorCode ? [d.errorCode] : []));
  const reason = `${status} ${codes[0] ?? error.status ?? ""}`.trim();
  if (codes.includes("UNREGISTERED") || codes.includes("SENDER_ID_MISMATCH")) return { status: "gone", reason };
  const badToken =
    (error.details ?? []).some((d) => d.fieldViolations?.some((v) => v.field === "message.token")) ||
    /registration token/i.test(error.message ?? "");
  if (status === 400 && badToken) return { status: "gone", reason };
  if (status === 429 || status >= 500) {
    const seconds = Number(retryAfter);
    return {
      status: "retry",
      reason,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterSeconds: seconds } : {}),
    };
  }
  return { status: "failed", reason };
}

/** The provider the configuration names. */
export function pushFromConfig(
  config: { push: { provider: "log" } | ({ provider: "fcm" } & FcmConfig) },
  db: Db,
  clock: { now(): Date },
): PushProvider {
  return config.push.provider === "fcm" ? fcmPush(config.push, clock) : logPush(db, clock);
}

/** The topic of a school, and of a role in it. */
export const schoolTopic = (schoolId: number) => `school-${schoolId}`;
export const roleTopic = (schoolId: number, roleId: number) => `school-${schoolId}-role-${roleId}`;
