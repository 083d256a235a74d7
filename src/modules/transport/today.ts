/** The school's today, in its time zone (the zone is kept per isolate: no read of its own most of the time). */
import type { SchoolCtx } from "../../lib/context";
import { dateIn } from "../../lib/zoned-time";
import { schoolZone } from "../school/api";

export async function schoolToday(ctx: SchoolCtx): Promise<string> {
  return dateIn(await schoolZone(ctx), ctx.deps.clock.now());
}
