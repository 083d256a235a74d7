/** The deadline of a day's changes: the calendar's, read by the afternoon's rules and the school day. */
import { addDays, isoWithOffset, zonedInstant } from "../../lib/zoned-time";

/**
 * The last moment a change for `date` may arrive: `hours` before the dismissal, counted on the
 * school's wall clocks (a 15:00 dismissal with a 2-hour limit closes at 13:00 local, also on the day
 * a daylight-saving change happens), as an instant written with the school's offset.
 */
export function changeDeadline(date: string, dismissal: string, timeZone: string, hours: number): string {
  const [h = 0, m = 0] = dismissal.split(":").map(Number);
  const total = h * 60 + m - hours * 60;
  const dayShift = Math.floor(total / 1440);
  const minutes = total - dayShift * 1440;
  const local = `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
  return isoWithOffset(zonedInstant(addDays(date, dayShift), local, timeZone), timeZone);
}
