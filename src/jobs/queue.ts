/**
 * The queue dispatcher. Delivery is at least once: each consumer records what it processed before
 * its side effects, acks per message, and lets failures retry with backoff until the dead-letter
 * queue. Consumers come from the module registry; dead-letter queues log and ack. A consumer that
 * meets the database briefly unavailable throws, and its message is retried like any failure.
 */
import { inSession } from "../db/client";
import { failureFields, unavailable } from "../db/transient";
import type { Deps } from "../deps";
import { errorFields, log } from "../lib/log";
import { type Consumer, RetryLater } from "../lib/module";
import { MODULES } from "../modules";

/** The dead-letter handler of a queue (`<queue>-dlq` serves `<queue>`'s), by own keys only. */
function deadLetterFor(queue: string): Consumer | undefined {
  const source = queue.slice(0, -"-dlq".length);
  for (const m of MODULES) {
    if (m.deadLetters && Object.hasOwn(m.deadLetters, source)) return m.deadLetters[source];
  }
  return undefined;
}

/** The consumer of a queue, by own keys only. */
export function consumerFor(queue: string): Consumer | undefined {
  for (const m of MODULES) {
    if (m.consumers && Object.hasOwn(m.consumers, queue)) return m.consumers[queue];
  }
  return undefined;
}

const RETRY_DELAYS = [10, 30, 120, 600];

/**
 * The queue a module consumes, by the name a deployment gave it: queues are the account's, so an
 * environment beside production names its own after production's with its name added
 * (`school-bulk-staging`, `school-bulk-staging-dlq` in wrangler.toml's [env.staging]).
 */
export function queueOf(name: string, environment: string): string {
  const suffix = `-${environment}`;
  if (name.endsWith(`${suffix}-dlq`)) return `${name.slice(0, -`${suffix}-dlq`.length)}-dlq`;
  return name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

/** Consumes a batch; its queries are one D1 session from the primary (consumers write). */
export function handleQueue(deps: Deps, batch: MessageBatch<unknown>): Promise<void> {
  return inSession(deps.db, "first-primary", () => consumeBatch(deps, batch));
}

async function consumeBatch(deps: Deps, batch: MessageBatch<unknown>): Promise<void> {
  const queue = queueOf(batch.queue, deps.config.environment);
  if (queue.endsWith("-dlq")) {
    const record = deadLetterFor(queue);
    for (const message of batch.messages) {
      log.error("dead-lettered message", { queue: batch.queue, messageId: message.id, body: message.body });
      try {
        await record?.(deps, message);
        message.ack();
      } catch (err) {
        log.error("dead letter not recorded; retrying", {
          queue: batch.queue,
          messageId: message.id,
          ...errorFields(err),
        });
        message.retry({ delaySeconds: 30 });
      }
    }
    return;
  }
  const consume = consumerFor(queue);
  for (const message of batch.messages) {
    if (!consume) {
      log.error("no consumer for this queue", { queue: batch.queue, messageId: message.id });
      message.retry();
      continue;
    }
    try {
      await consume(deps, message);
      message.ack();
    } catch (err) {
      // A database hiccup is no failure of the message: retried like any other, never acked.
      const down = unavailable(err);
      log.error(down ? "database unavailable; message retried" : "message failed; retrying", {
        queue: batch.queue,
        messageId: message.id,
        attempts: message.attempts,
        ...failureFields(err),
      });
      const delay = RETRY_DELAYS[Math.min(message.attempts - 1, RETRY_DELAYS.length - 1)] ?? 10;
      const asked = err instanceof RetryLater ? err.delaySeconds : 0;
      message.retry({ delaySeconds: Math.max(delay, down?.retryAfterSeconds ?? 0, asked) });
    }
  }
}
