/**
 * What other modules may ask of exit permissions. The invitation module creates the permissions an
 * accepted invitation implies through `askExitPermissions`, so they pass the same rules. Fact changes
 * of the modules below reach `redecide` through src/lib/facts.ts (registered in ./index.ts).
 */
import type { ExitPermissionKind, ExitPermissionStatus } from "../../db/schema/exit-permission";
import type { SchoolCtx } from "../../lib/context";
import type { Message } from "../../lib/message";

export interface ExitPermissionAsk {
  studentId: number;
  /** School-local `YYYY-MM-DD`. */
  date: string;
  kind: ExitPermissionKind;
  routeId?: number;
  stopId?: number;
  trustedAddressId?: number;
  pickupParentId?: number;
  trustedPersonId?: number;
  reason?: string;
  /**
   * The accepted invitation this permission comes from: its inviting guardian may then collect
   * (auto pickup) though they are not the child's guardian, since the child's guardian accepted.
   */
  invitationId?: number;
}

/** One failed rule: a stable code, a message (in the language of the answer), and the facts behind it. */
export interface RuleFailure {
  code: string;
  message: Message;
  [fact: string]: unknown;
}

export type AskResult = { ok: true; id: number; status: ExitPermissionStatus } | { ok: false; failures: RuleFailure[] };

/**
 * Asks, as the current caller, for each permission: the rules decide each one; those that pass
 * are written (with their audit rows, seats taken for confirmed route changes) in one batch.
 * Ids that are not this school's, or a student who is not the caller's, throw the 404.
 */
export async function askExitPermissions(ctx: SchoolCtx, asks: readonly ExitPermissionAsk[]): Promise<AskResult[]> {
  const { evaluate, writeAsks } = await import("./service");
  const { evaluated } = await evaluate(ctx, asks);
  const passed = evaluated.filter((e) => e.verdict.failures.length === 0).map((e) => e.resolved);
  const written = await writeAsks(ctx, passed);
  let next = 0;
  return evaluated.map((e): AskResult => {
    if (e.verdict.failures.length > 0) return { ok: false, failures: e.verdict.failures };
    const w = written[next++];
    if (!w) throw new Error("an ask was not written");
    return w.ok ? { ok: true, id: w.record.id, status: w.record.status } : { ok: false, failures: w.failures };
  });
}

/**
 * The day's dismissal window of a child (an hour before their level's dismissal to an hour after
 * their after-school program ends, or after dismissal without one): when a pickup pass is valid,
 * and when a guardian may say "I'm here" (the dismissal board).
 */
export async function dismissalWindowOf(
  date: string,
  dismissal: string,
  afterSchoolEnd: string | null,
  timeZone: string,
) {
  const { dismissalWindow } = await import("./pass");
  return dismissalWindow(date, dismissal, afterSchoolEnd, timeZone);
}

/**
 * A pickup pass as a gate verifies it (signature, time box, school, date): its claims, or null.
 * The caller still checks that its permission (`jti`, the slug) holds.
 */
export async function verifyPickupPass(ctx: SchoolCtx, token: string, date: string) {
  const { passKey, verifyPass } = await import("./pass-key");
  const key = await passKey(ctx.deps.config.authSecret, ctx.schoolId);
  const claims = await verifyPass(key.jwk, token, ctx.deps.clock.now()).catch(() => null);
  if (claims?.typ !== "pickup-pass" || claims.school !== ctx.schoolId || claims.date !== date) return null;
  return typeof claims.jti === "string" ? { slug: claims.jti, collector: claims.collector } : null;
}
