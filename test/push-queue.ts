/**
 * The push queue as the Queues runtime runs it, in a test's hands: what the app sends is kept
 * (each message with an id), and `drain` delivers it through the Worker's real queue handler
 * (`handleQueue`) with the test app's dependencies (its clock), retrying what the handler retries
 * up to wrangler.toml's `max_retries`, then delivering it to the dead-letter queue, as the runtime
 * does. Messages sent while draining are delivered too.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import type { Deps, QueueProducer } from "../src/deps";
import { handleQueue } from "../src/jobs/queue";

/** wrangler.toml: `max_retries` of school-push (three deliveries in all, then the dead-letter queue). */
export const MAX_RETRIES = 2;

type Held = { id: string; body: unknown; attempts: number; queue: string };

export class PushQueue implements QueueProducer {
  readonly held: Held[] = [];
  /** Every message ever sent (bodies), for assertions. */
  readonly sent: unknown[] = [];
  readonly deadLettered: unknown[] = [];
  /** The delays the handler asked for its retries, in order. */
  readonly retryDelays: (number | undefined)[] = [];
  private next = 0;

  /** The queue it stands for: the push queue unless told (`new PushQueue("school-bulk")`). */
  constructor(readonly queue = "school-push") {}

  async send(body: unknown) {
    this.hold(body);
  }

  async sendBatch(messages: Iterable<{ body: unknown }>) {
    for (const m of messages) this.hold(m.body);
  }

  private hold(body: unknown, queue = this.queue, attempts = 1, id = `push-${++this.next}-${crypto.randomUUID()}`) {
    this.sent.push(body);
    this.held.push({ id, body, attempts, queue });
  }

  /** Delivers one held message as is (a redelivery when `again`: the same id once more). */
  async deliverOne(deps: Deps, message: Held) {
    const batch = createMessageBatch(message.queue, [
      { id: message.id, body: message.body, timestamp: new Date(), attempts: message.attempts },
    ]);
    // The messages as the handler sees them, with the delay each retry asks for recorded.
    const delays: (number | undefined)[] = [];
    const messages = batch.messages.map(
      (m) =>
        new Proxy(m, {
          get(target, prop) {
            if (prop === "retry") {
              return (options?: QueueRetryOptions) => {
                delays.push(options?.delaySeconds);
                target.retry(options);
              };
            }
            const value = Reflect.get(target, prop, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    await handleQueue(deps, { ...batch, queue: batch.queue, messages, retryAll: batch.retryAll, ackAll: batch.ackAll });
    const result = await getQueueResult(batch, createExecutionContext());
    return { ...result, delays };
  }

  /** Delivers everything held (and what that sends) until nothing is left; answers the ids delivered. */
  async drain(deps: Deps, limit = 500): Promise<Held[]> {
    const delivered: Held[] = [];
    for (let i = 0; this.held.length > 0; i++) {
      if (i >= limit) throw new Error("the push queue never drained");
      const message = this.held.shift() as Held;
      delivered.push(message);
      const result = await this.deliverOne(deps, message);
      if (result.retryMessages.length > 0) {
        this.retryDelays.push(result.delays[0]);
        if (message.queue.endsWith("-dlq")) continue;
        if (message.attempts > MAX_RETRIES) {
          // Retried max_retries times already: the runtime moves it to the dead-letter queue.
          this.deadLettered.push(message.body);
          this.held.push({ ...message, queue: `${this.queue}-dlq`, attempts: 1 });
        } else this.held.push({ ...message, attempts: message.attempts + 1 });
      }
    }
    return delivered;
  }
}
