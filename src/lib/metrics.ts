/**
 * The state of the request being served, found through AsyncLocalStorage: its id, who called
 * (for the access log) and its D1 round trips. The D1 binding is wrapped once (src/db/client.ts)
 * and counts into it; a module's sub-app (src/app.ts) reads the request id from it. Nothing is
 * shared between requests.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Language } from "./language";

export interface RequestMetrics {
  d1Calls: number;
  requestId?: string;
  /** The operation's route template, set by the module app that served it. */
  route?: string;
  /** Set by `authorize` wherever it runs. */
  userId?: number;
  schoolId?: number | null;
  /** The client's address (`cf-connecting-ip`), for limits per address. */
  clientAddress?: string;
  /** The origin the request was made to (`https://api.example.org`): links the API hands out (a calendar feed's). */
  origin?: string;
  /**
   * The language the request is answered in (src/lib/language.ts): the `Accept-Language` header's,
   * set by the access log; without one, `authorize` sets the caller's or the school's.
   */
  language?: Language;
  /** The current school's language, when `authorize` knows the school (new people default to it). */
  schoolLanguage?: Language;
  /** The rate limits this request was counted against (src/lib/rate-limit.ts), for its RateLimit headers. */
  limits?: CountedLimit[];
}

/** One limit a request was counted against: its policy, and where the window stands after it. */
export interface CountedLimit {
  policy: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

const store = new AsyncLocalStorage<RequestMetrics>();

export function withMetrics<T>(metrics: RequestMetrics, run: () => T): T {
  return store.run(metrics, run);
}

/** The state of the current request, if one is being served. */
export function currentRequest(): RequestMetrics | undefined {
  return store.getStore();
}

export function countD1Call() {
  const metrics = store.getStore();
  if (metrics) metrics.d1Calls++;
}
