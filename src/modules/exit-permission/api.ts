/**
 * What other modules may ask of exit permissions. The invitation module creates the permissions an
 * accepted invitation implies through `askExitPermissions`, so they pass the same rules.
 *
 * SCAFFOLD: the signature is the contract; the exit-permission module's builder replaces the body.
 */
import type { ExitPermissionKind, ExitPermissionStatus } from "../../db/schema/exit-permission";
import type { Ctx } from "../../lib/context";

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

/** One failed rule: a stable code, a message in the caller's language, and the facts behind it. */
export interface RuleFailure {
  code: string;
  message: string;
  [fact: string]: unknown;
}

export type AskResult = { ok: true; id: number; status: ExitPermissionStatus } | { ok: false; failures: RuleFailure[] };

/**
 * Asks, as the current caller, for each permission: the rules decide each one; those that pass
 * are written (with their audit rows, seats taken for confirmed route changes) in one batch.
 */
export async function askExitPermissions(_ctx: Ctx, _asks: readonly ExitPermissionAsk[]): Promise<AskResult[]> {
  throw new Error("askExitPermissions: not built yet");
}
