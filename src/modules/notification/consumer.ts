/**
 * The push queue's consumer: a fan-out chunk (./fan-out.ts) or a batch of pushes (./deliver.ts),
 * and its dead-letter handler. Delivery is at least once: each step records its receipt and is
 * idempotent per recipient and per device (the unique indexes), so a message delivered twice
 * writes no second copy and sends no second push.
 */
import { log } from "../../lib/log";
import type { Consumer } from "../../lib/module";
import { PUSH_QUEUE, PushMessage } from "./queue";

function parse(message: Message<unknown>) {
  const parsed = PushMessage.safeParse(message.body);
  // Acked: no retry can make a malformed message valid.
  if (!parsed.success)
    log.error("malformed push message", { queue: PUSH_QUEUE, messageId: message.id, body: message.body });
  return parsed.success ? parsed.data : undefined;
}

export const consumePush: Consumer = async (deps, message) => {
  const body = parse(message);
  if (!body) return;
  if (body.kind === "fan-out") await (await import("./fan-out")).fanOut(deps, body, message.id);
  else await (await import("./deliver")).deliverPushes(deps, body, message.id);
};

export const deadPush: Consumer = async (deps, message) => {
  const body = parse(message);
  if (body) await (await import("./deliver")).recordUndelivered(deps, body);
};
