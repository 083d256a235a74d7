/**
 * Queue consumers. Delivery is at least once: each consumer records what it processed before its
 * side effects, acks per message, and lets failures retry with backoff until the dead-letter queue.
 */
import type { Deps } from "../deps";
import { BULK_QUEUE, consumeBulkProcess } from "../modules/bulk-process/consumer";

export type Consumer = (deps: Deps, message: Message<unknown>) => Promise<void>;

/** Consumers per queue name (wrangler.toml). Dead-letter queues log and ack. */
export const CONSUMERS: Record<string, Consumer> = {
  [BULK_QUEUE]: consumeBulkProcess,
};

const RETRY_DELAYS = [10, 30, 120, 600];

export async function handleQueue(deps: Deps, batch: MessageBatch<unknown>): Promise<void> {
  if (batch.queue.endsWith("-dlq")) {
    for (const message of batch.messages) {
      console.error(JSON.stringify({ level: "error", queue: batch.queue, id: message.id, body: message.body }));
      message.ack();
    }
    return;
  }
  const consume = Object.hasOwn(CONSUMERS, batch.queue) ? CONSUMERS[batch.queue] : undefined; // own keys only
  for (const message of batch.messages) {
    if (!consume) {
      console.error(JSON.stringify({ level: "error", queue: batch.queue, message: "no consumer for this queue" }));
      message.retry();
      continue;
    }
    try {
      await consume(deps, message);
      message.ack();
    } catch (err) {
      console.error(
        JSON.stringify({
          level: "error",
          queue: batch.queue,
          id: message.id,
          attempts: message.attempts,
          message: err instanceof Error ? err.message : String(err),
        }),
      );
      message.retry({ delaySeconds: RETRY_DELAYS[Math.min(message.attempts - 1, RETRY_DELAYS.length - 1)] });
    }
  }
}
