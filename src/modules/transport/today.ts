/** The school's today, in its time zone: a read of its own, for requests that name no date. */
import { eq } from "drizzle-orm";
import { Schools, schools } from "../../db/schema/core";
import { type Ctx, schoolOf } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { dateIn } from "../../lib/zoned-time";

export async function schoolToday(ctx: Ctx): Promise<string> {
  const row = await Schools.select(ctx, { timeZone: schools.timeZone })
    .where(eq(schools.id, schoolOf(ctx)))
    .first();
  if (!row) throw notFound("School", schoolOf(ctx));
  return dateIn(row.timeZone, ctx.deps.clock.now());
}
