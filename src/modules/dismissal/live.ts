/**
 * The live board: `GET /api/v1/dismissal/live?date=&after=` as Server-Sent Events (`Accept:
 * text/event-stream`, resumable with `Last-Event-ID`), as a WebSocket (`Upgrade: websocket`), or,
 * for any other client, once as JSON (the snapshot and the events after `after`). First a snapshot
 * (the board, its `seq`), then one JSON event per change `{seq, type, studentId, at, ...}`. The
 * streams are held by the school's hub, a Durable Object (hub.ts): this verb checks the watcher's
 * credentials, reads the snapshot and hands the subscriber over. A client that reconnects with
 * `after` or `Last-Event-ID` gets every event it missed, none twice. A guardian's stream carries
 * only their children's events.
 *
 * Browsers cannot set `Authorization` on a WebSocket or an EventSource: `POST .../live/ticket`
 * gives a one-use ticket, valid 30 s, for `?ticket=`. The route is therefore public and checks its
 * own credentials: a ticket, or a bearer token with `X-School-Id` as every route takes it.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Batch } from "../../db/batch";
import { DismissalTickets, dismissalTickets } from "../../db/schema/dismissal";
import { and, eq, gt, isNull } from "../../db/sql";
import { PermissionSet } from "../../lib/access";
import { APP_MODULES, ModuleSet } from "../../lib/app-modules";
import { type AppEnv, type Ctx, ctxOf, type MemberCtx, type SchoolCtx } from "../../lib/context";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { schoolDate } from "../../lib/dates";
import { ApiError, notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { defineRoute, type InputOf, json, type Operation, operation } from "../../lib/route";
import { verifyAccessToken } from "../../lib/tokens";
import { schoolToday } from "../transport/api";
import { boardOf } from "./board";
import { eventJson, eventsAfter, visibleTo } from "./events";
import { subscribe } from "./hub";
import { permissions } from "./permissions";
import { type Cover, dayRead, holdingRead } from "./plan";
import { Board } from "./schemas";

/** How long a ticket is valid. */
const TICKET_SECONDS = 30;

const Event = z
  .looseObject({
    seq: z.number().int().openapi({ description: "The event's number in the school's day (1, 2, 3 ...)" }),
    type: z.string().openapi({ example: "released", description: "What changed: arrival, called, released, ..." }),
    studentId: z.number().int().nullable().openapi({ description: "The child it is about (null: the school's)" }),
    at: z.string().openapi({ description: "When it was recorded (ISO 8601)" }),
  })
  .openapi("DismissalEvent", {
    description: "One change of the day, with its facts",
    example: { seq: 7, type: "released", studentId: 12, at: "2026-11-23T21:07:00.000Z", method: "list" },
  });

const Live = z
  .object({
    board: orNull(Board).openapi({ description: "The snapshot (null when `after` was given)" }),
    events: z.array(Event).openapi({ description: "The events after `after` (or after the snapshot), in order" }),
  })
  .openapi("DismissalLive");

const liveRoute = defineRoute({
  method: "get",
  path: "/api/v1/dismissal/live",
  tag: "Transport",
  operationId: "getDismissalLive",
  summary: "The day's board, live: Server-Sent Events or a WebSocket (or once, as JSON)",
  description:
    "Authenticated by a bearer token (with X-School-Id) or a one-use `ticket` from POST /api/v1/dismissal/live/ticket. " +
    "`Accept: text/event-stream`: a `snapshot` event, then one event per change (`id` its seq; resume with Last-Event-ID). " +
    "`Upgrade: websocket`: the same as JSON messages. Otherwise the snapshot and the events after `after`, as JSON.",
  access: "public",
  errors: [401, 404],
  request: {
    query: z.object({
      date: schoolDate("A school-local date; default the school's today", "2026-11-25").optional(),
      after: z.coerce
        .number()
        .int()
        .min(0)
        .max(Number.MAX_SAFE_INTEGER)
        .optional()
        .openapi({ description: "Only the events after this seq (no snapshot): resume where one left off" }),
      ticket: z
        .string()
        .max(200)
        .optional()
        .openapi({ description: "A one-use ticket (30 s), instead of a bearer token" }),
    }),
  },
  responses: {
    200: {
      description: "The live board",
      content: {
        "application/json": { schema: Live },
        "text/event-stream": { schema: z.string().openapi({ description: "Server-Sent Events" }) },
      },
    },
    101: { description: "Switching Protocols: the WebSocket, its messages the same JSON events" },
  },
});

const TicketAnswer = z
  .object({
    ticket: z.string().openapi({ description: "Give it once as `?ticket=` to GET /api/v1/dismissal/live" }),
    expiresAt: z.string().openapi({ description: "When it stops working (ISO 8601): 30 s" }),
  })
  .openapi("DismissalLiveTicket");

const ticketRoute = defineRoute({
  method: "post",
  path: "/api/v1/dismissal/live/ticket",
  tag: "Transport",
  operationId: "issueDismissalLiveTicket",
  summary: "A one-use ticket (30 s) for the live board, for clients that cannot send Authorization",
  access: "member",
  module: "dismissal",
  audit: "dismissal-ticket",
  responses: { 201: json(TicketAnswer, "The ticket") },
});

export async function createTicket(ctx: SchoolCtx) {
  const secret = randomToken(24);
  const ticket = `${ctx.schoolId}.${secret}`;
  const expiresAt = new Date(ctx.deps.clock.now().getTime() + TICKET_SECONDS * 1000).toISOString();
  await new Batch(ctx)
    .add(
      ...DismissalTickets.insert(ctx, {
        userId: ctx.userId ?? 0,
        hash: await sha256Hex(secret),
        school: ctx.can(permissions.read),
        expiresAt,
      }),
    )
    .commit();
  return { ticket, expiresAt };
}

export const createTicketOperation = operation(ticketRoute, createTicket);

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;
const unauthorized = () =>
  new ApiError(401, m`Send a bearer token or a ticket.`, {
    title: m`Missing bearer token`,
    headers: { "www-authenticate": 'Bearer realm="api"' },
  });

/** Who watches: the school and whether they read all of it; from a ticket (spent here) or a bearer token. */
async function watcher(
  ctx: Ctx,
  query: { ticket?: string },
  headers: { authorization?: string; school?: string },
): Promise<{ ctx: MemberCtx; wholeSchool: boolean; checked: boolean }> {
  if (query.ticket) {
    const [school, secret] = query.ticket.split(".");
    const schoolId = Number(school);
    if (!secret || !Number.isInteger(schoolId) || schoolId < 1) throw unauthorized();
    const now = ctx.deps.clock.now().toISOString();
    const scoped: SchoolCtx = { ...ctx, schoolId };
    const hash = await sha256Hex(secret);
    const valid = and(
      eq(dismissalTickets.hash, hash),
      isNull(dismissalTickets.usedAt),
      gt(dismissalTickets.expiresAt, now),
    );
    const batch = new Batch(scoped);
    // The ticket says whether its holder watched the whole school when it was issued; the roles they
    // hold now say whether they still do (read before the same batch spends it).
    const holding = batch.read(holdingRead(scoped, DismissalTickets.pick(scoped, dismissalTickets.userId, valid)));
    const spent = batch.read(
      DismissalTickets.select(scoped, { userId: dismissalTickets.userId, school: dismissalTickets.school }).where(
        valid,
      ),
    );
    // One use: the same batch spends it (a second use finds it spent).
    batch.add(...DismissalTickets.update(scoped, valid, { usedAt: now }, "use"));
    const results = await batch.commit();
    const [row] = results.get(spent);
    if (!row) throw unauthorized();
    const { deps, requestId } = ctx;
    const member: MemberCtx = {
      deps,
      requestId,
      schoolId,
      userId: row.userId,
      actor: { type: "user", userId: row.userId },
      isSuperAdmin: false,
      can: () => false,
    };
    return { ctx: member, wholeSchool: Boolean(row.school) && results.get(holding).length > 0, checked: true };
  }
  const token = BEARER.exec(headers.authorization ?? "")?.[1];
  if (!token) throw unauthorized();
  const claims = await verifyAccessToken(ctx.deps.config.authSecret, token, ctx.deps.clock.now());
  if (!claims) throw unauthorized();
  const schools = Object.keys(claims.sch);
  const named = headers.school ?? (schools.length === 1 ? schools[0] : undefined);
  const schoolId = Number(named);
  if (!named || !Number.isInteger(schoolId) || schoolId < 1) throw notFound(m`School ${named ?? ""} not found`);
  const superAdmin = claims.sa === 1;
  const bitmap = claims.sch[String(schoolId)];
  // No role in the school, or its dismissal module off: nothing to watch there (no 403 on a public route).
  if (bitmap === undefined && !superAdmin) throw notFound(m`School ${schoolId} not found`);
  if (ModuleSet.has(claims.off?.[String(schoolId)] ?? "", APP_MODULES.dismissal.id)) {
    throw notFound(m`The dismissal module is switched off in school ${schoolId}`);
  }
  const userId = Number(claims.sub);
  const can = (p: { id: number }) => superAdmin || PermissionSet.has(bitmap ?? "", p.id);
  const { deps, requestId } = ctx;
  const member: MemberCtx = {
    deps,
    requestId,
    schoolId,
    userId,
    isSuperAdmin: superAdmin,
    actor: { type: "user", userId },
    can,
  };
  return { ctx: member, wholeSchool: can(permissions.read), checked: false };
}

/**
 * The snapshot (board) and the watcher's children, in one round trip; with `check`, the same batch
 * asks whether that user still holds `dismissal.read` (`held` false: they do not, and the school's
 * board must not be shown them).
 */
async function snapshot(ctx: SchoolCtx, date: string, cover: Cover, check?: number) {
  const batch = new Batch(ctx);
  const holding = check === undefined ? undefined : batch.read(holdingRead(ctx, [check]));
  const read = dayRead(ctx, batch, date, cover);
  const results = await batch.commit();
  const day = read(results);
  const held = !holding || results.get(holding).length > 0;
  return { board: boardOf(day), children: new Set(day.entries.map((e) => e.studentId)), held };
}

/** The events after `after` the watcher may see (a guardian: their children's and the school's own). */
async function newEvents(ctx: SchoolCtx, date: string, after: number, children: Set<number> | null) {
  const rows = await eventsAfter(ctx, date, after).all();
  const last = rows.at(-1)?.seq ?? after;
  const events = rows.map(eventJson).filter((e) => visibleTo(children, e));
  return { events, last };
}

export async function getLive(base: Ctx, { query }: InputOf<typeof liveRoute>, request: Request) {
  const watching = await watcher(base, query, {
    authorization: request.headers.get("authorization") ?? undefined,
    school: request.headers.get("x-school-id") ?? undefined,
  });
  const { ctx, checked } = watching;
  let { wholeSchool } = watching;
  const today = await schoolToday(ctx);
  const date = query.date ?? today;
  const mine: Cover = { mine: { userId: ctx.userId ?? 0, today, watching: true } };
  const resumeHeader = request.headers.get("last-event-id");
  const resumed = query.after ?? (resumeHeader && /^\d+$/.test(resumeHeader) ? Number(resumeHeader) : undefined);
  const upgrade = (request.headers.get("upgrade") ?? "").toLowerCase() === "websocket";
  const stream = /text\/event-stream/i.test(request.headers.get("accept") ?? "");
  const hubs = ctx.deps.live;
  // The hub is told which school's stream it holds (a message, not a row).
  const { schoolId } = ctx;

  // A token's word for the whole school is checked against the roles held now (a ticket's was, when
  // spent): a role taken since ends the school's stream here, not at the token's expiry; the hub
  // checks again at each publish. Resuming, alone; else in the snapshot's batch.
  const resumingStaff = hubs && (upgrade || stream) && wholeSchool && resumed !== undefined;
  if (resumingStaff && !checked) wholeSchool = (await holdingRead(ctx, [ctx.userId ?? 0]).all()).length > 0;

  // Staff resuming a stream need no snapshot (nor, watching the whole school, its children).
  if (hubs && (upgrade || stream) && wholeSchool && resumed !== undefined) {
    return subscribe(hubs, {
      schoolId,
      date,
      children: null,
      last: resumed,
      userId: ctx.userId ?? 0,
      today,
      snapshot: null,
      mode: upgrade ? "websocket" : "sse",
    });
  }
  const check = wholeSchool && !checked && !resumingStaff ? (ctx.userId ?? 0) : undefined;
  let taken = await snapshot(ctx, date, wholeSchool ? { school: true } : mine, check);
  if (!taken.held) {
    // The role is gone (the token lags): their own children, if any.
    wholeSchool = false;
    taken = await snapshot(ctx, date, mine);
  }
  const { board, children } = taken;
  const visible = wholeSchool ? null : children;

  // The school's hub (a Durable Object) holds the stream from here: the snapshot, the events since
  // it (its own catch-up read), then each change as the verbs publish it (hub.ts).
  if (hubs && (upgrade || stream)) {
    return subscribe(hubs, {
      schoolId,
      date,
      children: visible ? [...visible] : null,
      last: resumed ?? board.seq,
      userId: ctx.userId ?? 0,
      today,
      snapshot: resumed === undefined ? board : null,
      mode: upgrade ? "websocket" : "sse",
    });
  }

  if (!upgrade && !stream) {
    const first = await newEvents(ctx, date, resumed ?? board.seq, visible);
    return { board: resumed === undefined ? board : null, events: first.events };
  }
  // A runtime without the school's hub (Node with libSQL) serves no stream: the JSON answer above.
  throw new ApiError(
    503,
    m`The live stream is not available here; ask without Accept: text/event-stream for the board and its events.`,
  );
}

type Validated = { out: { query: InputOf<typeof liveRoute>["query"] } };

/** Served by a handler of its own: the verb needs the request's headers (credentials, the stream it asks for). */
export const getLiveOperation: Operation = {
  route: liveRoute,
  handler: async (c: Context<AppEnv, string, Validated>) => {
    const answer = await getLive(ctxOf(c), { query: c.req.valid("query") }, c.req.raw);
    return answer instanceof Response ? answer : c.json(answer, 200);
  },
};
