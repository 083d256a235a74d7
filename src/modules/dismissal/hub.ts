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
 *    which survives hibernation and eviction).
 *
 * Subscribing: the Worker authenticates the watcher and reads the snapshot (live.ts), then hands the
 * hub `{date, children, last, snapshot}`; the hub accepts the WebSocket (tags: the date, and the
 * children a guardian watches) or opens the SSE stream, sends the snapshot, and runs a catch-up
 * read for it. Since the subscriber is registered before that read starts, an event committed
 * between the snapshot and the subscription is in the read, and one committed after it is in the
 * read or in a later publish's: none is missed, and the per-subscriber `seq` sends none twice.
 * A hub restarted (evicted, redeployed) loses only its SSE streams, whose clients reconnect with
 * `Last-Event-ID`; hibernated sockets keep their `seq` in their attachment.
 */
import { z } from "@hono/zod-openapi";
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
});
type Watching = z.infer<typeof WatchingSchema>;

/** A socket's subscription, or null (a socket accepted without one: none here). */
const watchingOf = (ws: WebSocket): Watching | null =>
  WatchingSchema.safeParse(ws.deserializeAttachment()).data ?? null;

/** A Server-Sent Events subscriber: held in memory (a stream cannot hibernate). */
interface Stream extends Watching {
  send(e: DismissalEvent): void;
  close(): void;
}

/** Events read per D1 query while catching up. */
const PAGE = 1000;
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
    delete(key: string): Promise<boolean>;
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
        await this.state.storage.put(`pending:${key}`, subscription);
        return new Response(null, { status: 204 });
      }
      if (request.method === "GET" && path === "/subscribe") {
        const key = `pending:${new URL(request.url).searchParams.get("key") ?? ""}`;
        const subscription = SubscriptionSchema.safeParse(await this.state.storage.get(key)).data;
        if (!subscription) return new Response(null, { status: 410 });
        await this.state.storage.delete(key);
        return this.subscribe(subscription);
      }
      if (request.method === "GET" && path === "/watchers") {
        return Response.json({ websockets: this.state.getWebSockets().length, streams: this.streams.size });
      }
      return new Response(null, { status: 404 });
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
      const watching: Watching = { date: s.date, children: s.children, last: s.last };
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

    /** Reads `date`'s events after the lowest `seq` its subscribers have; sends each its new ones. */
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
      const events: DismissalEvent[] = [];
      for (let after = from; ; ) {
        const rows = await eventsAfter(ctx, date, after, PAGE).all();
        events.push(...rows.map(eventJson));
        if (rows.length < PAGE) break;
        after = rows.at(-1)?.seq ?? after;
      }
      if (events.length === 0) return;
      // Only to subscribers the read covers (seen up to `from` or later): one that subscribed while
      // it ran, further back, has a read of its own queued.
      for (const { ws, w } of sockets) {
        const current = watchingOf(ws);
        if (!current || current.last < from) continue;
        const next = events.filter((e) => e.seq > current.last);
        if (next.length === 0) continue;
        try {
          for (const e of next) if (visible(current, e)) ws.send(JSON.stringify(e));
          ws.serializeAttachment({ ...w, last: next.at(-1)?.seq ?? current.last });
        } catch {
          // closing: the client reconnects with `after`
        }
      }
      for (const s of this.streams) {
        if (s.date !== date || s.last < from) continue;
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
