/**
 * "Something happened in the school", and the hook it goes through. A verb that changed what others
 * follow (an exit permission confirmed or withdrawn, a child released at the gate, a bus boarding or
 * drop, a student created or changed) says so: in its own batch with `schoolEventsIn(ctx, batch,
 * event)` (the followers' writes commit with the change, in the same round trip, then their steps
 * run), or with `schoolEvent(ctx, event)` AFTER its batch committed (one batch of their own). Each
 * module that follows such events declares its handler in its `index.ts` (`events`) and the
 * registry (src/modules/index.ts) hands every handler here. So the module where an event happens
 * never imports those that hear it: the dismissal module's live board logs it, the webhook module
 * posts it to the school's endpoints.
 *
 * Unlike a fact change (src/lib/facts.ts), an event decides nothing: a handler only adds writes
 * and a step after the commit, and the hook never throws into the caller (a handler that failed to
 * prepare is logged and left out).
 */
import { Batch, type Results } from "../db/batch";
import type { WebhookEventType } from "../db/schema/webhook";
import type { SchoolCtx } from "./context";
import { errorFields, log } from "./log";

/**
 * What happened: the webhook event types (docs/domain.md "Webhooks"), which the school's other
 * systems hear, and the school's own ones, which only its modules hear (a bus leaving on its run:
 * the live board shows it).
 */
export type SchoolEventType = WebhookEventType | OwnEventType;

/** The events not posted to webhooks. */
export const OWN_EVENT_TYPES = ["route.departed"] as const;
export type OwnEventType = (typeof OWN_EVENT_TYPES)[number];

/** Whether an event is one the school's webhooks may carry. */
export const isWebhookEvent = (e: SchoolEvent): e is SchoolEvent & { type: WebhookEventType } =>
  !OWN_EVENT_TYPES.some((own) => own === e.type);

export interface SchoolEvent {
  type: SchoolEventType;
  /** The event's facts, as a webhook's `data` carries them. */
  data: Record<string, unknown>;
  /** The child and the school day it is about, when it is about one (the live board's). */
  student?: { id: number; date: string };
}

/**
 * What a module does when events happened: it adds its writes (and the reads it needs back) to the
 * verb's own batch, so they commit with the change or not at all, and answers what must follow the
 * commit (a queue send, the live board's publish), or nothing. May throw: the hook logs it.
 */
export type SchoolEventHandler = (
  ctx: SchoolCtx,
  events: readonly SchoolEvent[],
  batch: Batch,
) => Promise<AfterCommit | undefined>;

/** A handler's step once the batch committed, with its results. Never throws into the caller. */
export type AfterCommit = (results: Results) => Promise<void>;

let handlers: (() => readonly SchoolEventHandler[]) | undefined;

/** The registry's hand-off: every module's event handler (src/modules/index.ts). */
export function declareSchoolEventHandlers(assemble: () => readonly SchoolEventHandler[]): void {
  handlers = assemble;
}

/**
 * Adds what every module that follows school events writes for `events` (in order) to the verb's
 * `batch`, and answers the one step to run once it committed (with its results). A handler that
 * fails to prepare is logged and left out; one whose statements fail fails the batch: all or nothing.
 *
 * @example
 * const told = await schoolEventsIn(ctx, batch, { type: "route.boarded", data, student: { id, date } });
 * const results = await batch.commit();
 * await told(results);
 */
export async function schoolEventsIn(
  ctx: SchoolCtx,
  batch: Batch,
  ...events: readonly SchoolEvent[]
): Promise<AfterCommit> {
  if (events.length === 0) return async () => {};
  if (!handlers) {
    log.error("a school event before the module registry declared its handlers", { type: events[0]?.type });
    return async () => {};
  }
  const types = events.map((e) => e.type).join(",");
  const steps: AfterCommit[] = [];
  // In order, each on the same batch (a handler's slots are its own).
  for (const handle of handlers()) {
    try {
      const step = await handle(ctx, events, batch);
      if (step) steps.push(step);
    } catch (err) {
      log.error("a school event's handler failed", { types, ...errorFields(err) });
    }
  }
  return async (results) => {
    await Promise.all(
      steps.map(async (step) => {
        try {
          await step(results);
        } catch (err) {
          log.error("a school event's step after the commit failed", { types, ...errorFields(err) });
        }
      }),
    );
  };
}

/**
 * Tells every module that follows school events of `events` (in order), after the change committed:
 * their writes in ONE batch of their own, then their steps. Never throws (a failure is logged). A
 * verb that can put them in its own batch uses `schoolEventsIn` instead (one round trip less, and
 * nothing written unless the change is).
 *
 * @example
 * await batch.commit();
 * await schoolEvent(ctx, { type: "student.created", data: { student } });
 */
export async function schoolEvent(ctx: SchoolCtx, ...events: readonly SchoolEvent[]): Promise<void> {
  if (events.length === 0) return;
  try {
    const batch = new Batch(ctx);
    const told = await schoolEventsIn(ctx, batch, ...events);
    await told(await batch.commit());
  } catch (err) {
    log.error("a school event's writes failed", { types: events.map((e) => e.type).join(","), ...errorFields(err) });
  }
}
