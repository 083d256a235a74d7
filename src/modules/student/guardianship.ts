/**
 * Guardianship rules other modules read (exit permissions, the afternoon's pick-up list): whether a
 * parent may pick a student up on a date. The decision is `pickUpDecision` (pure, over one guardian
 * link); `mayPickUp` reads the link (one D1 call) and decides.
 *
 * A restriction is the school's (a court order): it holds from `restrictionFrom` to
 * `restrictionUntil`, both inclusive, either open-ended when null.
 */
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { eq, isNull, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { m } from "../../lib/message";

export type PickUp =
  | { allowed: true }
  | {
      allowed: false;
      /** Why not, in the language of the request: "not a guardian", "may not pick up", "restricted until YYYY-MM-DD". */
      reason: string;
    };

export interface GuardianLink {
  canPickUp: boolean;
  restricted: boolean;
  restrictionFrom: string | null;
  restrictionUntil: string | null;
}

/** Whether a restriction holds on `date` (YYYY-MM-DD; the bounds are inclusive). */
export function restrictedOn(link: GuardianLink, date: string): boolean {
  if (!link.restricted) return false;
  if (link.restrictionFrom !== null && date < link.restrictionFrom) return false;
  if (link.restrictionUntil !== null && date > link.restrictionUntil) return false;
  return true;
}

/** The decision for one guardian link (or none) on `date`. */
export function pickUpDecision(link: GuardianLink | undefined, date: string): PickUp {
  if (!link) return { allowed: false, reason: m`not a guardian`.render() };
  // The school's restriction first: it is the reason staff must see at the door.
  if (restrictedOn(link, date)) {
    return {
      allowed: false,
      reason: (link.restrictionUntil ? m`restricted until ${link.restrictionUntil}` : m`restricted`).render(),
    };
  }
  if (!link.canPickUp) return { allowed: false, reason: m`may not pick up`.render() };
  return { allowed: true };
}

export type Who = { parentId: number } | { guardianUserId: number };

/**
 * May this parent (by parent profile id, or by user id) pick `studentId` up on `date` (the school's
 * local date, `dateIn(timeZone, now)` for today)? One D1 call: the student (this school, not
 * deleted) left-joined to the guardian link of that parent.
 */
export async function mayPickUp(ctx: SchoolCtx, input: Who & { studentId: number; date: string }): Promise<PickUp> {
  // By user: the guardian whose parent profile (in this school) is that user's.
  const parent =
    "parentId" in input ? input.parentId : Parents.pick(ctx, parents.id, eq(parents.userId, input.guardianUserId));
  const row = await Students.select(ctx, {
    studentId: students.id,
    guardianId: guardians.id,
    canPickUp: guardians.canPickUp,
    restricted: guardians.restricted,
    restrictionFrom: guardians.restrictionFrom,
    restrictionUntil: guardians.restrictionUntil,
  })
    .leftJoin(Guardians, sql`${eq(guardians.studentId, students.id)} AND ${eq(guardians.parentId, parent)}`)
    .where(eq(students.id, input.studentId), isNull(students.deletedAt))
    .first();
  if (!row) return { allowed: false, reason: m`not a student of this school`.render() };
  if (row.guardianId === null) return pickUpDecision(undefined, input.date);
  return pickUpDecision(
    {
      canPickUp: Boolean(row.canPickUp),
      restricted: Boolean(row.restricted),
      restrictionFrom: row.restrictionFrom,
      restrictionUntil: row.restrictionUntil,
    },
    input.date,
  );
}
