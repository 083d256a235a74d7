/**
 * A school's IANA time zone, kept for a minute per isolate. Requests that name no date ("today's
 * list") need the school's today, and reading the zone first would double their round trips. A
 * school changes its zone about once in its life: a change made through this isolate forgets the
 * kept zone at once; other isolates pick it up within the minute.
 */
import { Schools, schools } from "../../db/schema/core";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";

const KEEP_MS = 60_000;
const kept = new Map<number, { zone: string; until: number }>();

export async function schoolZone(ctx: SchoolCtx): Promise<string> {
  const id = ctx.schoolId;
  const now = ctx.deps.clock.now().getTime();
  const hit = kept.get(id);
  if (hit && hit.until > now) return hit.zone;
  const row = await Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, id)).first();
  if (!row) throw notFound(m`School ${id} not found`);
  kept.set(id, { zone: row.timeZone, until: now + KEEP_MS });
  return row.timeZone;
}

/** Forgets a school's kept zone: its zone is being changed. */
export function forgetZone(schoolId: number): void {
  kept.delete(schoolId);
}
