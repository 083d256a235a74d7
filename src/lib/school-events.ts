/**
 * "Something happened in the school", and the hook it goes through. A verb that changed what others
 * follow (an exit permission confirmed or withdrawn, a child released at the gate, a bus boarding or
 * drop, a student created or changed) says so with `schoolEvent(ctx, event)` AFTER its batch
 * committed; each module that follows such events declares its handler in its `index.ts` (`events`)
 * and the registry (src/modules/index.ts) hands every handler here. So the module where an event
 * happens never imports those that hear it: the dismissal module's live board logs it, the webhook
 * module posts it to the school's endpoints.
 *
 * Unlike a fact change (src/lib/facts.ts), an event decides nothing: it is told after the commit,
 * every handler on its own, and it never throws into the caller (a handler that failed is logged).
 */
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

/** What a module does when events happened (after their commit). May throw: the hook logs it. */
export type SchoolEventHandler = (ctx: SchoolCtx, events: readonly SchoolEvent[]) => Promise<void>;

let handlers: (() => readonly SchoolEventHandler[]) | undefined;

/** The registry's hand-off: every module's event handler (src/modules/index.ts). */
export function declareSchoolEventHandlers(assemble: () => readonly SchoolEventHandler[]): void {
  handlers = assemble;
}

/**
 * Tells every module that follows school events of `events` (in order), after the change committed.
 * Never throws: a handler that fails is logged, the others still run.
 *
 * @example
 * await batch.commit();
 * await schoolEvent(ctx, { type: "route.boarded", data: { routeId, studentId }, student: { id: studentId, date } });
 */
export async function schoolEvent(ctx: SchoolCtx, ...events: readonly SchoolEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (!handlers) {
    log.error("a school event before the module registry declared its handlers", { type: events[0]?.type });
    return;
  }
  await Promise.all(
    handlers().map(async (handle) => {
      try {
        await handle(ctx, events);
      } catch (err) {
        log.error("a school event's handler failed", {
          types: events.map((e) => e.type).join(","),
          ...errorFields(err),
        });
      }
    }),
  );
}
