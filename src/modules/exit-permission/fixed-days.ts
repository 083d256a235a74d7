/**
 * A fixed permission is decided once: when the school confirms the pattern, each day it made that
 * still waits (`pending`, or `needs_review`) is decided again on that day, as the fixed permission's
 * asker: the days the rules pass are confirmed (their day changes made, a seat taken), the others
 * wait for the office as `needs_review` with their failures. Rejected, its waiting days are
 * rejected with it. Statements for the batch that decides the pattern.
 */
import { ExitPermissions, exitPermissions, type fixedExitPermissions } from "../../db/schema/exit-permission";
import { and, eq, gte, sql } from "../../db/sql";
import { inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { m } from "../../lib/message";
import { dateIn } from "../../lib/zoned-time";
import { schoolZone } from "../school/api";
import { confirmEffects, supersede } from "./effects";
import { type Ask, effectOf, evaluate, stored } from "./service";

type Fixed = typeof fixedExitPermissions.$inferSelect;

/** The states a day made from a fixed permission waits in. */
const WAITING = ["pending", "needs_review"] as const;

/** The statements that decide the waiting days of `fixed` from the school's today on; the days they confirm. */
export async function decideDays(
  ctx: SchoolCtx,
  fixed: Fixed,
  decision: "confirmed" | "rejected",
): Promise<{ statements: Statement[]; confirmed: number[] }> {
  const today = dateIn(await schoolZone(ctx), ctx.deps.clock.now());
  const at = ctx.deps.clock.now().toISOString();
  const waiting = [
    eq(exitPermissions.fixedId, fixed.id),
    gte(exitPermissions.date, today),
    inList(exitPermissions.status, WAITING),
  ];
  if (decision === "rejected") {
    const reason = m`Rejected with its fixed permission`.render();
    const statements = ExitPermissions.update(
      ctx,
      and(...waiting),
      { status: "rejected", decidedBy: ctx.userId, decidedAt: at, decisionReason: reason },
      "reject",
    );
    return { statements, confirmed: [] };
  }
  const days = await ExitPermissions.select(ctx)
    .where(...waiting)
    .all();
  if (days.length === 0) return { statements: [], confirmed: [] };
  const asks = days.map(
    (d): Ask => ({
      studentId: d.studentId,
      date: d.date,
      kind: d.kind,
      fixedId: fixed.id,
      as: { parentId: fixed.parentId, userId: fixed.askedBy },
      ...(d.routeId === null ? {} : { routeId: d.routeId }),
      ...(d.stopId === null ? {} : { stopId: d.stopId }),
      ...(d.trustedAddressId === null ? {} : { trustedAddressId: d.trustedAddressId }),
      ...(d.pickupParentId === null ? {} : { pickupParentId: d.pickupParentId }),
      ...(d.trustedPersonId === null ? {} : { trustedPersonId: d.trustedPersonId }),
      ...(d.reason === null ? {} : { reason: d.reason }),
    }),
  );
  const { evaluated } = await evaluate(ctx, asks);
  const reason = m`Confirmed with its fixed permission`.render();
  const confirmed: number[] = [];
  const statements = days.flatMap((day, i): Statement[] => {
    const one = evaluated[i];
    if (!one) return [];
    // Each day from the state it was read in: a day changed meanwhile aborts the batch (a 409 to retry).
    const from = eq(exitPermissions.status, day.status);
    const { failures } = one.verdict;
    if (failures.length > 0) {
      return ExitPermissions.updateOne(
        ctx,
        day.id,
        { status: "needs_review", failures: failures.map(stored) },
        { action: "review", where: from },
      );
    }
    const effect = effectOf(one.resolved);
    confirmed.push(day.id);
    return [
      ...supersede(ctx, day.studentId, day.date, day.id),
      ...ExitPermissions.updateOne(
        ctx,
        day.id,
        { status: "confirmed", failures: null, decidedBy: ctx.userId, decidedAt: at, decisionReason: reason },
        { action: "confirm", where: from },
      ),
      ...confirmEffects(ctx, sql<number>`${day.id}`, effect),
    ];
  });
  return { statements, confirmed };
}
