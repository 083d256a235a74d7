/**
 * The one verb every feature sends notifications through (`notify`, on the module's face).
 *
 * A send is two steps, so it commits or not with the business change it belongs to:
 * 1. `statements`: the notification row (and its audit row), for the CALLER's own batch; its
 *    recipient count is computed by the same statement, from the audience, in SQL;
 * 2. `dispatch()`, once that batch committed: enqueues the fan-out (one message on the push
 *    queue). It never throws: a notification whose message was lost, or never sent because the
 *    Worker stopped between the commit and the dispatch, is enqueued by the sweep
 *    (`sweepNotifications`) a few minutes later, so a committed notification is never lost.
 *
 * The fan-out (./fan-out.ts) writes one copy per recipient (their inbox) and queues the pushes to
 * their devices, honouring their preferences and quiet hours.
 */
import { type Audience, type Localized, type NotificationCategory, Notifications } from "../../db/schema/notification";
import { type SQL, sql } from "../../db/sql";
import type { Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { errorFields, log } from "../../lib/log";
import { countOf } from "./audience";
import { PUSH_QUEUE, type PushMessage } from "./queue";

export interface Notice {
  category: NotificationCategory;
  /** Pushed at once even during the recipient's quiet hours (an emergency always is). */
  urgent?: boolean;
  /**
   * A `Localized` text is one the service writes itself (each recipient reads their language); a
   * string is staff's, sent as is; `LocalizedSql` one whose words this batch reads (a rider's name).
   */
  title: Localized | string | LocalizedSql;
  body: Localized | string | LocalizedSql;
  /** The record it is about (the app's deep link): its entity and id (an id this batch inserts: `X.insertedId()`). */
  about?: { entity: string; id: number | SQL<number> };
  audience: Audience;
}

export interface Sending {
  /** Names the notification in queue messages (unique). */
  key: string;
  /** The notification's id, for later statements of the same batch. */
  id: SQL<number>;
  /** The notification row and its audit row: add them to the caller's batch. */
  statements: Statement[];
  /** Enqueues the fan-out; call it after the batch committed. Never rejects. */
  dispatch(): Promise<void>;
  /** The fan-out's queue message (`dispatchAll` sends many in batches). */
  readonly message: PushMessage;
}

/** A `Localized` built in SQL (`localizedSql`): the JSON text of `{ en, es }`. */
export type LocalizedSql = SQL<Localized> & { readonly localized: true };

/**
 * A text in both languages whose parts are SQL (a name this batch reads), for a notice written in
 * the same batch as what it reads.
 * @example localizedSql(sql`${name} || ' is on the bus'`, sql`${name} || ' subió al autobús'`)
 */
export const localizedSql = (en: SQL<string>, es: SQL<string>): LocalizedSql =>
  Object.assign(sql<Localized>`json_object('en', ${en}, 'es', ${es})`, { localized: true as const });

const both = (text: Localized | string | LocalizedSql): Localized | LocalizedSql =>
  typeof text === "string" ? { en: text, es: text } : text;

/**
 * A notification from the current school to `notice.audience`: statements for the caller's batch,
 * and `dispatch()` for after it committed.
 * @example
 * const sending = notify(ctx, { category: "events", title: { en: "New event", es: "Nuevo evento" },
 *   body: name, about: { entity: "event", id: Events.insertedId() }, audience: { groups: [3] } });
 * await new Batch(ctx).add(...Events.insert(ctx, values), ...sending.statements).commit();
 * await sending.dispatch();
 */
export function notify(ctx: SchoolCtx, notice: Notice): Sending {
  const schoolId = ctx.schoolId;
  const key = crypto.randomUUID();
  const values = {
    key,
    category: notice.category,
    urgent: notice.urgent ?? false,
    title: both(notice.title),
    body: both(notice.body),
    aboutEntity: notice.about?.entity ?? null,
    aboutId:
      notice.about === undefined
        ? null
        : typeof notice.about.id === "number"
          ? notice.about.id
          : sql<number>`${notice.about.id}`,
    audience: notice.audience,
    senderId: ctx.actor.type === "user" && ctx.userId ? ctx.userId : null,
    recipientCount: countOf(ctx, notice.audience),
  };
  const message: PushMessage = { kind: "fan-out", key, schoolId, after: 0 };
  return {
    key,
    message,
    id: Notifications.insertedId(),
    // The audit row reads the count the insert computed, rather than resolving the audience again.
    statements: [...Notifications.insert(ctx, values, { stored: ["recipientCount"] })],
    async dispatch() {
      try {
        await ctx.deps.queues.push.send(message);
      } catch (err) {
        // The row is committed: the sweep enqueues it (notification_undispatched_idx).
        log.warn("notification not dispatched; the sweep will", { queue: PUSH_QUEUE, key, ...errorFields(err) });
      }
    },
  };
}

/**
 * Enqueues the fan-outs of many sendings once their batch committed: one queue call per 100
 * messages (as Queues allow), not one each (a gate's batch of 500 releases). Never rejects: the
 * sweep enqueues what was lost, as for `dispatch()`.
 */
export async function dispatchAll(ctx: SchoolCtx, sendings: readonly Sending[]): Promise<void> {
  const messages = sendings.map((s) => ({ body: s.message }));
  try {
    for (let i = 0; i < messages.length; i += 100) await ctx.deps.queues.push.sendBatch(messages.slice(i, i + 100));
  } catch (err) {
    log.warn("notifications not dispatched; the sweep will", {
      queue: PUSH_QUEUE,
      count: messages.length,
      ...errorFields(err),
    });
  }
}
