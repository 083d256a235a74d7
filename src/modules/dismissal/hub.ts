/**
 * The live board's hub: a Durable Object per school (`DISMISSAL_LIVE`, named by the school's id;
 * SQLite storage, the WebSocket Hibernation API) that holds the school's live subscribers and tells
 * them each change of the day within moments of its commit, without polling.
 *
 * How an event flows (docs/architecture.md "The live board"):
 * 1. A verb that changes a fact writes the day's event row in its own batch (events.ts `eventOf`:
 *    D1's event log is the one truth, numbered `seq` per school and day).
 * 2. After the commit the verb (or the registry's wrapper, `published`) tells the school's hub:
 *    `publish(ctx)`, one small request, no payload. A publish that fails is logged and lost only to
 *    the live push: the event is in D1, and the next publish or reconnect carries it.
 * 3. The hub reads the day's log after the lowest `seq` any of its subscribers has seen (one D1 read
 *    per publish however many subscribers; concurrent publishes coalesce into one read), and sends
 *    each subscriber the events after its own `seq` that it may see (a guardian: their children's
 *    and the school's), in order, then remembers the new `seq` with the socket (its attachment,
 *    which survives hibernation and eviction). The same batch asks who may still watch (a guardian
 *    link removed or restricted, a delegation ended, a staff role taken since they subscribed):
 *    a child no longer theirs leaves the subscription, and one left with none is closed.
 *
 * Subscribing: the Worker authenticates the watcher and reads the snapshot (live.ts), then hands the
 * hub `{date, children, last, userId, today, snapshot}`; the hub accepts the WebSocket (tags: the
 * date, and the children a guardian watches) or opens the SSE stream, sends the snapshot, and runs a catch-up
 * read for it. Since the subscriber is registered before that read starts, an event committed
 * between the snapshot and the subscription is in the read, and one committed after it is in the
 * read or in a later publish's: none is missed, and the per-subscriber `seq` sends none twice.
 * A hub restarted (evicted, redeployed) loses only its SSE streams, whose clients reconnect with
 * `Last-Event-ID`; hibernated sockets keep their `seq` in their attachment.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import type { Deps, LiveHubs } from "../../deps";
import { ctxOf, jobCtx, type SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { errorFields, log } from "../../lib/log";
import type { Operation } from "../../lib/route";
import { type DismissalEvent, eventJson, eventsAfter, visibleTo } from "./events";

/** What the Worker hands the hub for one subscriber (parsed where the hub receives it). */
const SubscriptionSchema = z.object({
  schoolId: z.number().int(),
  date: z.string(),
  /** The children a guardian watches; null: the whole school. */
  children: z.array(z.number().int()).nullable(),
  /** The last `seq` the subscriber has (the snapshot's, or its `after`). */
  last: z.number().int(),
  /**
   * Who watches, checked again at each publish: a guardian's (or delegate's) user, whose children are
   * narrowed to the links they still hold; a staff member, whose stream ends with their role. Null:
   * not checked (a super-admin).
   */
  userId: z.number().int().nullable(),
  /** The school's date when subscribing: a delegation and a restriction are read on it. */
  today: z.string(),
  /** The board to send first (null when resuming). */
  snapshot: z.looseObject({ seq: z.number().int() }).nullable(),
  /** `websocket`, or `sse`. */
  mode: z.enum(["websocket", "sse"]),
});
export type Subscription = z.infer<typeof SubscriptionSchema>;

/** A socket's attachment: its subscription and the last `seq` it was sent (survives hibernation). */
const WatchingSchema = z.object({
  date: z.string(),
  children: z.array(z.number().int()).nullable(),
  last: z.number().int(),
  // Absent from a socket accepted before the re-check existed: not checked.
  userId: z.number().int().nullable().default(null),
  today: z.string().default(""),
});
type Watching = z.infer<typeof WatchingSchema>;

/** A socket's subscription, or null (a socket accepted without one: none here). */
const watchingOf = (ws: WebSocket): Watching | null => {
  const a: unknown = ws.deserializeAttachment();
  // The shape this hub writes, checked by hand (once per socket and publish: 500 sockets, no schema walk).
  if (isWatching(a)) return a;
  return WatchingSchema.safeParse(a).data ?? null;
};

const isInt = (x: unknown): x is number => Number.isInteger(x);

function isWatching(a: unknown): a is Watching {
  if (typeof a !== "object" || a === null) return false;
  const field = (name: string): unknown => Reflect.get(a, name);
  const userId = field("userId");
  const children = field("children");
  return (
    typeof field("date") === "string" &&
    typeof field("today") === "string" &&
    isInt(field("last")) &&
    (userId === null || isInt(userId)) &&
    (children === null || (Array.isArray(children) && children.every(isInt)))
  );
}

/** A Server-Sent Events subscriber: held in memory (a stream cannot hibernate). */
interface Stream extends Watching {
  send(e: DismissalEvent): void;
  close(): void;
}

/** Events read per D1 query while catching up. */
const PAGE = 1000;
/** How long a WebSocket subscription waits for its upgrade before the hub's alarm forgets it. */
const PENDING_SECONDS = 60;
/** A stored subscription, waiting for its upgrade until `expiresAt` (epoch ms). */
const PendingSchema = z.object({ subscription: SubscriptionSchema, expiresAt: z.number() });
/** How long an SSE stream lasts before its client reconnects with `Last-Event-ID`. */
const SSE_SECONDS = 300;

const dateTag = (date: string) => `d:${date}`;

/** Whether a watcher sees event `e` (events.ts `visibleTo`). */
const visible = (w: Watching, e: DismissalEvent) => visibleTo(w.children === null ? null : new Set(w.children), e);

/** The parts of the Durable Object state the hub uses (Cloudflare's `DurableObjectState`). */
interface HubState {
  acceptWebSocket(ws: WebSocket, tags?: string[]): void;
  getWebSockets(tag?: string): WebSocket[];
  getTags(ws: WebSocket): string[];
  /** The object's SQLite-backed storage: a WebSocket's subscription between its two requests. */
  storage: {
    get(key: string): Promise<unknown>;
    put(key: string, value: unknown): Promise<void>;
    delete(key: string | string[]): Promise<boolean | number>;
    list(options: { prefix: string }): Promise<Map<string, unknown>>;
    getAlarm(): Promise<number | null>;
    setAlarm(at: number): Promise<void>;
  };
}

/**
 * The Durable Object class, given how it builds the app's dependencies from its env (the Worker
 * entry's own `depsFromEnv`: D1 or libSQL). src/index.ts and src/index.libsql.ts export it as
 * `DismissalLive`.
 */
export function dismissalLiveObject<E>(depsOf: (env: E) => Promise<Deps>) {
  return class DismissalLive {
    private readonly streams = new Set<Stream>();
    /** Per date: the catch-up read queued but not started (publishes join it), and the one running. */
    private readonly queued = new Map<string, Promise<void>>();
    private readonly tails = new Map<string, Promise<void>>();
    private schoolId: number | null = null;

    constructor(
      private readonly state: HubState,
      private readonly env: E,
    ) {}

    async fetch(request: Request): Promise<Response> {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path === "/publish") {
        const { schoolId } = z.object({ schoolId: z.number().int() }).parse(await request.json());
        this.schoolId = schoolId;
        await Promise.all(this.dates().map((date) => this.catchUp(date)));
        return new Response(null, { status: 204 });
      }
      if (request.method === "POST" && path === "/subscribe") {
        return this.subscribe(SubscriptionSchema.parse(await request.json()));
      }
      // A WebSocket upgrade reaches an object as a GET without a body: its subscription was put first.
      if (request.method === "POST" && path === "/prepare") {
        const { key, subscription } = z
          .object({ key: z.string(), subscription: SubscriptionSchema })
          .parse(await request.json());
        const expiresAt = Date.now() + PENDING_SECONDS * 1000;
        await this.state.storage.put(`pending:${key}`, { subscription, expiresAt });
        // An upgrade that never comes (the client went away in between) leaves no row: the alarm.
        if ((await this.state.storage.getAlarm()) === null) await this.state.storage.setAlarm(expiresAt);
        return new Response(null, { status: 204 });
      }
      if (request.method === "GET" && path === "/subscribe") {
        const key = `pending:${new URL(request.url).searchParams.get("key") ?? ""}`;
        const pending = PendingSchema.safeParse(await this.state.storage.get(key)).data;
        if (!pending || pending.expiresAt < Date.now()) return new Response(null, { status: 410 });
        await this.state.storage.delete(key);
        return this.subscribe(pending.subscription);
      }
      if (request.method === "GET" && path === "/watchers") {
        return Response.json({ websockets: this.state.getWebSockets().length, streams: this.streams.size });
      }
      return new Response(null, { status: 404 });
    }

    /** Forgets the subscriptions whose upgrade never came; set again while others still wait. */
    async alarm() {
      const now = Date.now();
      const rows = await this.state.storage.list({ prefix: "pending:" });
      const expired: string[] = [];
      let next = Number.POSITIVE_INFINITY;
      for (const [key, value] of rows) {
        const expiresAt = PendingSchema.safeParse(value).data?.expiresAt ?? 0;
        if (expiresAt < now) expired.push(key);
        else next = Math.min(next, expiresAt);
      }
      // Storage deletes at most 128 keys a call.
      for (let i = 0; i < expired.length; i += 128) await this.state.storage.delete(expired.slice(i, i + 128));
      if (next !== Number.POSITIVE_INFINITY) await this.state.storage.setAlarm(next);
    }

    /** A client's message: nothing to do (the stream is one-way); a `ping` is answered. */
    webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
      if (message === "ping") ws.send(JSON.stringify({ type: "pong" }));
    }

    webSocketClose(ws: WebSocket, code: number) {
      try {
        ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
      } catch {
        // already closed
      }
    }

    webSocketError() {}

    private subscribe(s: Subscription): Response {
      this.schoolId = s.schoolId;
      const watching: Watching = {
        date: s.date,
        children: s.children,
        last: s.last,
        userId: s.userId,
        today: s.today,
      };
      let response: Response;
      if (s.mode === "websocket") {
        const pair = new WebSocketPair();
        const [client, server] = [pair[0], pair[1]];
        // Tags: the date, and a guardian's children (at most 9: the filter itself is the attachment's).
        const tags = [dateTag(s.date), ...(s.children ?? []).slice(0, 9).map((id) => `s:${id}`)];
        this.state.acceptWebSocket(server, tags);
        server.serializeAttachment(watching);
        if (s.snapshot) server.send(JSON.stringify({ type: "snapshot", seq: s.snapshot.seq, board: s.snapshot }));
        response = new Response(null, { status: 101, webSocket: client });
      } else {
        const encoder = new TextEncoder();
        let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
        const stream: Stream = {
          ...watching,
          send: (e) =>
            controller?.enqueue(encoder.encode(`id: ${e.seq}\nevent: change\ndata: ${JSON.stringify(e)}\n\n`)),
          close: () => {
            this.streams.delete(stream);
            try {
              controller?.close();
            } catch {
              // cancelled by the client
            }
          },
        };
        const body = new ReadableStream<Uint8Array>({
          start: (c) => {
            controller = c;
            c.enqueue(encoder.encode("retry: 1000\n\n"));
            if (s.snapshot) {
              c.enqueue(
                encoder.encode(`id: ${s.snapshot.seq}\nevent: snapshot\ndata: ${JSON.stringify(s.snapshot)}\n\n`),
              );
            }
          },
          cancel: () => {
            this.streams.delete(stream);
          },
        });
        this.streams.add(stream);
        setTimeout(() => stream.close(), SSE_SECONDS * 1000);
        response = new Response(body, {
          status: 200,
          headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
        });
      }
      // Registered above, before the read starts: whatever committed since the snapshot is in it.
      void this.catchUp(s.date).catch(() => undefined);
      return response;
    }

    /** The dates someone watches. */
    private dates(): string[] {
      const dates = new Set<string>([...this.streams].map((s) => s.date));
      for (const ws of this.state.getWebSockets()) {
        const tag = this.state.getTags(ws).find((t) => t.startsWith("d:"));
        if (tag) dates.add(tag.slice(2));
      }
      return [...dates];
    }

    /**
     * One read of `date`'s new events and their delivery, after the one running (if any); a call
     * while one is queued joins it (it has not started, so it will see this call's event).
     */
    private catchUp(date: string): Promise<void> {
      const queued = this.queued.get(date);
      if (queued) return queued;
      const round = (this.tails.get(date) ?? Promise.resolve()).then(() => {
        this.queued.delete(date);
        return this.deliver(date);
      });
      this.queued.set(date, round);
      const tail = round.catch((err) =>
        log.error("the live board's hub could not read the day's events", errorFields(err)),
      );
      this.tails.set(date, tail);
      void tail.then(() => {
        if (this.tails.get(date) === tail) this.tails.delete(date);
      });
      return round;
    }

    /**
     * Reads `date`'s events after the lowest `seq` its subscribers have, and in the same batch who of
     * them may still watch (plan.ts `stillWatched`, `holdingRead`: a guardian link removed or
     * restricted, a delegation ended, a role taken since they subscribed); narrows or ends those
     * subscriptions, then sends each the new events it may see.
     */
    private async deliver(date: string): Promise<void> {
      if (this.schoolId === null) return;
      const sockets = this.state.getWebSockets(dateTag(date)).flatMap((ws) => {
        const w = watchingOf(ws);
        return w ? [{ ws, w }] : [];
      });
      const streams = [...this.streams].filter((s) => s.date === date);
      const lasts = [...sockets.map((s) => s.w.last), ...streams.map((s) => s.last)];
      if (lasts.length === 0) return;
      const from = Math.min(...lasts);
      const ctx: SchoolCtx = jobCtx(await depsOf(this.env), "dismissal-live", this.schoolId);
      const watchers: Watching[] = [...sockets.map((s) => s.w), ...streams];
      const guardians = [...new Set(watchers.flatMap((w) => (w.children && w.userId !== null ? [w.userId] : [])))];
      const staff = [...new Set(watchers.flatMap((w) => (!w.children && w.userId !== null ? [w.userId] : [])))];
      const today =
        watchers
          .map((w) => w.today)
          .sort()
          .at(-1) || date;

      // The plan's reads load with the module (they pull in much of the app), not with the Worker's entry.
      const { holdingRead, stillWatched } = await import("./plan");
      const batch = new Batch(ctx);
      const firstPage = batch.read(eventsAfter(ctx, date, from, PAGE));
      const children = [...new Set(watchers.flatMap((w) => (w.userId !== null ? (w.children ?? []) : [])))];
      const checks = (events: { date: string; after: number } | null) =>
        children.length ? stillWatched(ctx, guardians, children, events, today) : [];
      const [own, delegated] = checks({ date, after: from });
      const links = [own, delegated].flatMap((q) => (q ? [batch.read(q)] : []));
      const roles = staff.length ? batch.read(holdingRead(ctx, staff)) : undefined;
      const results = await batch.commit();
      const rows = results.get(firstPage);
      const events: DismissalEvent[] = rows.map(eventJson);
      for (let after = rows.at(-1)?.seq ?? from, more = rows.length === PAGE; more; ) {
        const page = await eventsAfter(ctx, date, after, PAGE).all();
        events.push(...page.map(eventJson));
        more = page.length === PAGE;
        after = page.at(-1)?.seq ?? after;
      }
      if (events.length === 0) return;
      const watched = new Set(links.flatMap((slot) => results.get(slot).map((r) => `${r.userId}:${r.studentId}`)));
      const holding = new Set(roles ? results.get(roles).map((r) => r.userId) : []);
      const about = new Set(events.flatMap((e) => (e.studentId === null ? [] : [e.studentId])));
      // A school-wide event a guardian sees (a reunification: rare) is about every child they watch:
      // a second read checks them all, so one who watches none any more is closed, not told.
      if (children.length && events.some((e) => e.studentId === null && visibleTo(new Set(), e))) {
        const again = new Batch(ctx);
        const slots = checks(null).map((q) => again.read(q));
        const all = await again.commit();
        for (const slot of slots) for (const r of all.get(slot)) watched.add(`${r.userId}:${r.studentId}`);
        for (const id of children) about.add(id);
      }
      /**
       * The children a watcher may still watch (null: the whole school; false: none, the stream
       * ends), decided once per watcher (user and children) and publish, whatever their sockets.
       */
      const decided = new Map<string, number[] | null | false>();
      const mayWatch = (w: Watching): number[] | null | false => {
        if (w.userId === null) return w.children;
        if (!w.children) return holding.has(w.userId) ? null : false;
        const key = `${w.userId}:${w.children.join(",")}`;
        let kept = decided.get(key);
        if (kept === undefined) {
          const still = w.children.filter((id) => !about.has(id) || watched.has(`${w.userId}:${id}`));
          kept = still.length === 0 ? false : still;
          decided.set(key, kept);
        }
        return kept;
      };
      /** The subscription as it may still be: children no longer theirs dropped; null when it ends. */
      const recheck = (w: Watching): Watching | null => {
        const kept = mayWatch(w);
        if (kept === false) return null;
        return kept === w.children || kept?.length === w.children?.length ? w : { ...w, children: kept };
      };
      // Each event's JSON once, and the events a watcher of the whole school sees: the same for all.
      const texts = events.map((e) => JSON.stringify(e));
      const byChildren = new Map<string, boolean[]>();
      const seen = (w: Watching) => {
        const key = w.children === null ? "*" : w.children.join(",");
        let shown = byChildren.get(key);
        if (!shown) {
          shown = events.map((e) => visible(w, e));
          byChildren.set(key, shown);
        }
        return shown;
      };
      const lastSeq = events.at(-1)?.seq ?? from;
      // Only to subscribers the read covers (seen up to `from` or later): one that subscribed while
      // it ran, further back, has a read of its own queued. Their attachments are as read above:
      // deliveries of a date run one at a time, and only they write them.
      for (const { ws, w: current } of sockets) {
        if (current.last < from) continue;
        const allowed = recheck(current);
        try {
          if (!allowed) {
            ws.close(4403, "no longer allowed to watch");
            continue;
          }
          if (lastSeq <= allowed.last && allowed === current) continue;
          const shown = seen(allowed);
          for (let i = 0; i < events.length; i++) {
            if ((events[i]?.seq ?? 0) > allowed.last && shown[i]) ws.send(texts[i] ?? "");
          }
          ws.serializeAttachment({ ...allowed, last: Math.max(lastSeq, allowed.last) });
        } catch {
          // closing: the client reconnects with `after`
        }
      }
      for (const s of [...this.streams]) {
        if (s.date !== date || s.last < from) continue;
        const allowed = recheck(s);
        if (!allowed) {
          s.close();
          continue;
        }
        s.children = allowed.children;
        for (const e of events) {
          if (e.seq <= s.last) continue;
          if (visible(s, e)) s.send(e);
          s.last = e.seq;
        }
      }
    }
  };
}

/** The school's hub. */
const hubOf = (hubs: LiveHubs, schoolId: number) => hubs.getByName(String(schoolId));

/**
 * Tells the school's hub that the day's log has new events (after their batch committed). Never
 * throws: the events are in D1, and a subscriber's next publish or reconnect carries them.
 */
export async function publish(ctx: { deps: Deps; schoolId: number }): Promise<void> {
  const hubs = ctx.deps.live;
  if (!hubs) return;
  // A message to the school's own hub (named by the school), not a row.
  const { schoolId } = ctx;
  try {
    const res = await hubOf(hubs, schoolId).fetch("https://hub/publish", {
      method: "POST",
      body: JSON.stringify({ schoolId }),
    });
    await res.body?.cancel();
  } catch (err) {
    log.error("the live board's hub was not told of a change", errorFields(err));
  }
}

/** Hands a subscriber to the school's hub: its answer is the stream (101 WebSocket, or SSE). */
export async function subscribe(hubs: LiveHubs, s: Subscription): Promise<Response> {
  const hub = hubOf(hubs, s.schoolId);
  let res: Response;
  if (s.mode === "websocket") {
    // An upgrade carries no body: the subscription (with its snapshot) goes first, under a key.
    const key = randomToken(16);
    const put = await hub.fetch("https://hub/prepare", {
      method: "POST",
      body: JSON.stringify({ key, subscription: s }),
    });
    await put.body?.cancel();
    res = await hub.fetch(`https://hub/subscribe?key=${key}`, { headers: { upgrade: "websocket" } });
  } else {
    res = await hub.fetch("https://hub/subscribe", { method: "POST", body: JSON.stringify(s) });
  }
  // A fetched answer's headers are immutable; the app's middleware adds its own.
  const headers = new Headers(res.headers);
  if (res.webSocket) return new Response(null, { status: 101, webSocket: res.webSocket, headers });
  return new Response(res.body, { status: res.status, headers });
}

/** An operation that, once it answered 2xx, tells the school's hub (its verb wrote events). */
export function published(op: Operation): Operation {
  return {
    route: op.route,
    handler: async (c, next) => {
      const res = await op.handler(c, next);
      const { deps, schoolId } = ctxOf(c);
      if (res instanceof Response && res.ok && schoolId !== null) await publish({ deps, schoolId });
      return res;
    },
  };
}
