/**
 * Asking for exit permissions: the snapshot (one round trip), the rules over it, then one batch
 * that writes what passed (the permission, its audit row and, when it is confirmed at once, the
 * earlier permission it supersedes and its seat and day changes). The HTTP routes, the dry-run and
 * other modules (`askExitPermissions` in ./api.ts) all come here.
 */
import { Batch, type Results } from "../../db/batch";
import { ExitPermissions, exitPermissions, type StoredFailure } from "../../db/schema/exit-permission";
import { eq } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { joinMessages, m } from "../../lib/message";
import { announce, readSuperseded } from "./announce";
import { confirmEffects, type Effect, linkSuperseded, supersede } from "./effects";
import { exitPermission } from "./resource";
import { decide, failure, RULES, type RuleFailure, shown, type Verdict } from "./rules";
import { type Ask, type Resolved, readSnapshot, resolve } from "./snapshot";

export type { Ask };

export interface Evaluated {
  resolved: Resolved;
  verdict: Verdict;
}

/** The snapshot and every rule over each ask: one round trip. */
export async function evaluate(ctx: SchoolCtx, asks: readonly Ask[], extra?: (b: Batch) => void) {
  const read = await readSnapshot(ctx, asks, extra);
  const evaluated = asks.map((ask): Evaluated => {
    const resolved = resolve(ctx, read, ask);
    return { resolved, verdict: decide(ask, resolved.snapshot) };
  });
  return { read, evaluated };
}

/** The 422 that lists every failed rule (`failures`, and each as a field error). */
export function refusal(failures: readonly RuleFailure[]): ApiError {
  const messages = failures.map((f) => f.message);
  return new ApiError(422, joinMessages(messages, "; "), {
    errors: failures.map((f) => ({ path: RULES[f.code].field, message: f.message })),
    members: { failures },
  });
}

/** What a confirmed permission changes on the route days. */
export const effectOf = (r: Resolved): Effect => ({
  studentId: r.student.id,
  date: r.ask.date,
  kind: r.ask.kind,
  reason: r.ask.reason ?? null,
  target: r.target,
  homeRoutes: r.homeRoutes,
});

const nowIso = (ctx: SchoolCtx) => ctx.deps.clock.now().toISOString();

/** The decision columns of a permission confirmed as it is asked (the school's setting). */
const autoDecision = (ctx: SchoolCtx) => ({
  decidedBy: ctx.userId,
  decidedAt: nowIso(ctx),
  // Kept as text, in the language of the request (or the school's, for the daily job) that decided.
  decisionReason: m`Confirmed automatically (the school's setting)`.render(),
});

/** A failure as a permission stores it: its message written now, in the language of the request (or the school's, for a job). */
export const stored = (f: RuleFailure): StoredFailure => ({ ...shown(f), code: f.code });

/**
 * Queues the writes of one ask that passed the rules (or, `review`, one the rules refused on its day:
 * it waits for the office with its failures); answers the slot that reads it back.
 */
export function queueAsk(
  ctx: SchoolCtx,
  batch: Batch,
  r: Resolved,
  review?: readonly RuleFailure[],
  confirmedBecause?: string,
) {
  const { ask } = r;
  const confirmed = !review && r.status === "confirmed";
  const invited = ask.invitationId !== undefined;
  if (confirmed) batch.add(...supersede(ctx, r.student.id, ask.date, null));
  batch.add(
    ...ExitPermissions.insert(ctx, {
      studentId: r.student.id,
      date: ask.date,
      kind: ask.kind,
      status: review ? "needs_review" : r.status,
      routeId: ask.kind === "route_change" ? (r.target?.routeId ?? null) : null,
      stopId: ask.kind === "route_change" ? (r.target?.stopId ?? null) : null,
      trustedAddressId: ask.trustedAddressId ?? null,
      pickupParentId: r.snapshot.pickup?.parentId ?? null,
      trustedPersonId: ask.trustedPersonId ?? null,
      askedBy: r.askedBy,
      parentId: r.parentId,
      askedAs: r.askedAs,
      // An invitation's acceptance is the family's: the answering guardian asks it.
      ...(invited ? { acceptedBy: ctx.userId, acceptedAt: nowIso(ctx) } : {}),
      failures: review ? review.map(stored) : null,
      reason: ask.reason ?? null,
      ...(confirmed ? { ...autoDecision(ctx), ...(confirmedBecause ? { decisionReason: confirmedBecause } : {}) } : {}),
      invitationId: ask.invitationId ?? null,
      fixedId: ask.fixedId ?? null,
      slug: randomToken(16),
    }),
  );
  const id = ExitPermissions.insertedId();
  if (confirmed) batch.add(linkSuperseded(ctx, r.student.id, ask.date, id), ...confirmEffects(ctx, id, effectOf(r)));
  return {
    record: batch.read(exitPermission.readOne(ctx, id)),
    superseded: confirmed ? readSuperseded(ctx, batch, id) : undefined,
  };
}

/** The asks a batch wrote, as records; and the events they make, told (`announce`). */
export async function announceWritten(ctx: SchoolCtx, results: Results, slots: readonly Queued[]) {
  const records = slots.map((slot) => {
    const [row] = results.get(slot.record);
    if (!row) throw new Error("the exit permission was not read back");
    return exitPermission.toRecord(ctx, row);
  });
  await announce(ctx, {
    withdrawn: slots.flatMap((slot) => (slot.superseded ? results.get(slot.superseded) : [])),
    confirmed: records,
  });
  return records;
}

export type Queued = ReturnType<typeof queueAsk>;

/** A route change that needs a seat (a guard that failed in its batch was its seat). */
const needsSeat = (r: Resolved) => r.ask.kind === "route_change" && r.target !== null && !r.target.rides;

/** The `no-seat` failure of a route change whose seat went while it was written. */
function noSeat(r: Resolved): RuleFailure {
  return failure("no-seat", {
    route: r.snapshot.route?.name,
    routeId: r.target?.routeId,
    date: r.ask.date,
    seats: r.snapshot.route?.seats,
    available: 0,
  });
}

export type Written = Awaited<ReturnType<typeof exitPermission.find>>;

/**
 * Writes the asks that passed, in one batch. When a seat guard fails (another family took the last
 * seat meanwhile) nothing of the batch is written: with one ask that is its `no-seat`; with several,
 * each is written in a batch of its own so the others still pass.
 */
export async function writeAsks(
  ctx: SchoolCtx,
  passed: readonly Resolved[],
): Promise<({ ok: true; record: Written } | { ok: false; failures: RuleFailure[] })[]> {
  if (passed.length === 0) return [];
  const batch = new Batch(ctx);
  const reads = passed.map((r) => queueAsk(ctx, batch, r));
  try {
    const results = await batch.commit({ conflict: exitPermission.messages.conflict });
    const records = await announceWritten(ctx, results, reads);
    return records.map((record) => ({ ok: true as const, record }));
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    if (passed.length === 1) {
      const [only] = passed;
      if (only && needsSeat(only)) return [{ ok: false, failures: [noSeat(only)] }];
      throw err;
    }
    const out = [];
    for (const r of passed) out.push(...(await writeAsks(ctx, [r])));
    return out;
  }
}

/** One ask through the rules and, when it passes, written: the record (201), or the 422 of every failed rule. */
export async function askOne(ctx: SchoolCtx, ask: Ask) {
  const { evaluated } = await evaluate(ctx, [ask]);
  const [one] = evaluated;
  if (!one) throw new Error("no evaluation");
  if (one.verdict.failures.length > 0) throw refusal(one.verdict.failures);
  const [written] = await writeAsks(ctx, [one.resolved]);
  if (!written) throw new Error("nothing written");
  if (!written.ok) throw refusal(written.failures);
  // A collector who may not learn the child's name learns nothing of the child's day either.
  const hidden = written.record.studentName === null;
  return {
    ...written.record,
    warnings: one.verdict.warnings.map(shown),
    deadline: hidden ? null : one.verdict.deadline,
  };
}

/** The verdict on an ask without writing anything. */
export async function dryRun(ctx: SchoolCtx, ask: Ask) {
  const { evaluated } = await evaluate(ctx, [ask]);
  const [one] = evaluated;
  if (!one) throw new Error("no evaluation");
  const { verdict, resolved } = one;
  return {
    ok: verdict.failures.length === 0,
    failures: verdict.failures.map(shown),
    warnings: verdict.warnings.map(shown),
    deadline: verdict.deadline,
    dismissal: verdict.dismissal,
    latest: verdict.latest,
    status: resolved.status,
    seats: resolved.snapshot.route
      ? { seats: resolved.snapshot.route.seats, available: resolved.snapshot.route.available }
      : null,
    others: resolved.others,
  };
}

/** A permission's row as the rules need it again (respond, update). */
export async function storedRow(ctx: SchoolCtx, id: number) {
  const row = await ExitPermissions.select(ctx).where(eq(exitPermissions.id, id)).first();
  return row;
}
