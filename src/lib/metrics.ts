/**
 * Per-request counters (D1 round trips) for the access log. The D1 binding is wrapped once
 * (src/db/client.ts) and counts into the store of the request being served, found through
 * AsyncLocalStorage, so nothing is shared between requests.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestMetrics {
  d1Calls: number;
}

const store = new AsyncLocalStorage<RequestMetrics>();

export function withMetrics<T>(metrics: RequestMetrics, run: () => T): T {
  return store.run(metrics, run);
}

export function countD1Call() {
  const metrics = store.getStore();
  if (metrics) metrics.d1Calls++;
}
