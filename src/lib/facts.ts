/**
 * Facts the afternoon's decisions stand on, and the hook their changes go through. A module low in
 * the layers (a guardian link, a holiday, a route's seats, a schedule) says what it changed with
 * `factChanged(ctx, change)` and adds the statements it answers to its own batch; the module that
 * decides on those facts (exit-permission) declares the handler in its `index.ts` (`facts`), and the
 * registry (src/modules/index.ts) hands every module's handler here. So a fact's owner never imports
 * the afternoon, and the afternoon is told of every change in the same batch as the change.
 */
import type { Statement } from "../db/write";
import type { SchoolCtx } from "./context";
import type { Level } from "./levels";

/** A guardian link's facts as the rules read them. */
export interface LinkFacts {
  canPickUp: boolean;
  canRequestChanges: boolean;
  restricted: boolean;
  restrictionFrom: string | null;
  restrictionUntil: string | null;
}

/** What changed. Each says where its statements go in the caller's batch. */
export type FactChange =
  /** AFTER the link's change (or its removal: `link: null`); `link` gives the new values the change sets. */
  | { fact: "guardian"; linkId: number; link: Partial<LinkFacts> | null }
  /** BEFORE its deletion (the permission's reference is set to null with it). */
  | { fact: "trusted-person"; id: number }
  | { fact: "trusted-address"; id: number }
  /** A holiday cycle between two instants (added, or moved there): AFTER it is written. */
  | { fact: "holiday"; start: string; end: string }
  /** Students removed (soft-deleted): AFTER. */
  | { fact: "students"; studentIds: readonly number[] }
  /** A student moved to another level (or to none): AFTER. */
  | { fact: "level"; studentId: number; level: Level | null }
  /**
   * A route's seats on some dates set to `seats` (null: the vehicle's; a day's own, or the route moved
   * to another vehicle): AFTER. The latest confirmed lose theirs first.
   */
  | { fact: "seats"; routeId: number; dates: readonly string[]; seats: number | null }
  /** A route's weekdays, levels or direction changed (the values it now has): AFTER. */
  | {
      fact: "route";
      routeId: number;
      weekdays: readonly number[];
      levels: readonly Level[];
      direction: "home" | "to_school";
    }
  /** A level's schedule on an ISO weekday removed (or moved to another level or weekday): AFTER. */
  | { fact: "schedule"; level: Level; weekday: number }
  /** A route cancelled on a date: AFTER. */
  | { fact: "route-day"; routeId: number; date: string }
  /** A student no longer active (inactive, graduated): AFTER. */
  | { fact: "student-status"; studentId: number }
  /**
   * Students' rides home put on, changed or taken off (`rider`: what the change sets, null when the
   * ride is deleted): AFTER. Their confirmed day changes follow their home routes.
   */
  | { fact: "riders"; rides: readonly RideChange[] };

/** One ride changed: the student, the route, and what the change sets (null: taken off). */
export interface RideChange {
  studentId: number;
  routeId: number;
  rider: Partial<RiderFacts> | null;
}

/** A student's ride on a route as the afternoon reads it. */
export interface RiderFacts {
  direction: "home" | "to_school";
  /** ISO weekdays as a bit mask (Monday = 1). */
  weekdays: number;
  suspendedFrom: string | null;
  suspendedUntil: string | null;
}

export interface Redecision {
  /** For the caller's batch, where `FactChange` says. */
  statements: Statement[];
  /** How many permissions the read found no longer holding (the notification's). */
  withdrawn: number;
  /** After the batch committed: enqueues the notification. Never rejects. */
  dispatch(): Promise<void>;
}

/** What a module does when a fact changes: statements for the caller's batch, and what to send after it. */
export type FactHandler = (ctx: SchoolCtx, change: FactChange) => Promise<Redecision>;

let handlers: (() => readonly FactHandler[]) | undefined;

/** The registry's hand-off: every module's fact handler (src/modules/index.ts). */
export function declareFactHandlers(assemble: () => readonly FactHandler[]): void {
  handlers = assemble;
}

/**
 * A change of a fact decides again what stood on it: statements for the caller's own batch (placed
 * where `FactChange` says) and `dispatch()` after the commit. Refuses to run before the registry
 * declared the handlers: a change that silently decided nothing again would leave a decision standing.
 *
 * @example
 * const redecided = await factChanged(ctx, { fact: "guardian", linkId, link: { restricted: true } });
 * await new Batch(ctx).add(...change, ...redecided.statements).commit();
 * await redecided.dispatch();
 */
export async function factChanged(ctx: SchoolCtx, change: FactChange): Promise<Redecision> {
  if (!handlers) throw new Error("a fact changed before the module registry declared its handlers");
  const results = await Promise.all(handlers().map((handle) => handle(ctx, change)));
  return {
    statements: results.flatMap((r) => r.statements),
    withdrawn: results.reduce((sum, r) => sum + r.withdrawn, 0),
    dispatch: async () => {
      await Promise.all(results.map((r) => r.dispatch()));
    },
  };
}
