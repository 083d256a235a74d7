/**
 * The real bulk queue, counted (test/helpers.ts gives it to every test app): a message a test file
 * sends is consumed by the Worker's queue handler in the background, and a consumer still running
 * when its file ends (its log line, its import of the Worker) meets the file's runner closed
 * ("EnvironmentTeardownError: Closing rpc while ... was pending"), or leaves the next file's
 * messages waiting. test/setup.ts waits, when a file ends, until the Worker has consumed as many
 * messages as the file sent, and the queue holds none (`settleBulk`). Only the queue's own deliveries
 * count: a test that hands the Worker a batch of its own (`worker.queue(createMessageBatch(...))`,
 * ids like `import-5`) consumed nothing the queue still holds, and counting it let a file end while
 * its real message was still to come.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { QueueProducer } from "../src/deps";

/** One delivery the Worker's handler saw: the file it ran in, its message ids, when it started and ended (ms since the first). */
type Delivery = { file: string; ids: string[]; start: number; end?: number; error?: string };
// On globalThis: a file that loads the modules again (a `vi.mock`) keeps the log of the files before it.
const kept = globalThis as { __bulkDeliveries?: Delivery[]; __bulkEpoch?: number };
kept.__bulkDeliveries ??= [];
kept.__bulkEpoch ??= Date.now();
const log = kept.__bulkDeliveries;
const epoch = kept.__bulkEpoch;

let sent = 0;
/** The queue's own messages the Worker consumed (Miniflare's ids: 16 random bytes in hex), each once: a redelivery is the same message. */
const consumed = new Set<string>();
const delivered = (id: string) => /^[0-9a-f]{32}$/.test(id);
let running = 0;
let watching: Promise<void> | undefined;

/** Counts the messages the Worker's queue handler consumes (its default export's `queue`, wrapped once). */
function watchConsumer(): Promise<void> {
  watching ??= (async () => {
    // Imported when a file first sends, after its own imports and mocks (test/setup.ts).
    const worker = (await import("../src/index")).default;
    const queue = worker.queue.bind(worker);
    worker.queue = async (batch, workerEnv) => {
      running++;
      const file = (expect.getState().testPath ?? "").replace(/^.*\/test\//, "");
      const delivery: Delivery = { file, ids: batch.messages.map((m) => m.id.slice(0, 8)), start: Date.now() - epoch };
      log.push(delivery);
      if (log.length > 12) log.shift();
      try {
        return await queue(batch, workerEnv);
      } catch (error) {
        delivery.error = String(error);
        throw error;
      } finally {
        delivery.end = Date.now() - epoch;
        running--;
        for (const { id } of batch.messages) if (delivered(id)) consumed.add(id);
      }
    };
  })();
  return watching;
}

/** `env.BULK_QUEUE`, its sends counted. */
export const bulkQueue: QueueProducer = {
  async send(body) {
    await watchConsumer();
    sent++;
    return env.BULK_QUEUE.send(body);
  },
  async sendBatch(messages) {
    await watchConsumer();
    const list = [...messages];
    sent += list.length;
    return env.BULK_QUEUE.sendBatch(list);
  },
};

/**
 * For a test's failure message: this file's counts (was the message sent, handed to the Worker, still
 * running?), the queue's backlog as its broker counts it (messages waiting, not the batch in flight),
 * and the last deliveries of this and earlier files.
 */
export const bulkState = async () => ({
  sent,
  consumed: consumed.size,
  running,
  backlog: (await env.BULK_QUEUE.metrics()).backlogCount,
  now: Date.now() - epoch,
  deliveries: log,
});

/**
 * Waits (up to `ms`) until the Worker has consumed every bulk message this file sent, none is running
 * and the queue holds none; says so on stderr if it gave up (what the next file's bulk tests may meet).
 */
export async function settleBulk(ms = 10_000) {
  const until = Date.now() + ms;
  const busy = async () => consumed.size < sent || running > 0 || (await env.BULK_QUEUE.metrics()).backlogCount > 0;
  while ((await busy()) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (await busy()) console.warn(`bulk queue not settled at the end of the file: ${JSON.stringify(await bulkState())}`);
  // The next file counts its own.
  sent = 0;
  consumed.clear();
}
