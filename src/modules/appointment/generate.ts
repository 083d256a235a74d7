/**
 * Time slots from a session's days (pure): each window of a day is cut into slots of the session's
 * length with its break after each, in real elapsed time from the window's start to its end, both
 * read on the school's wall clocks that day. On the day the clocks go forward a 01:00-04:00 window
 * holds two hours of slots (01:00, 01:30, 03:00, 03:30 with 30 minutes), and on the day they go back
 * it holds four; each slot keeps its instants and the local times its wall clocks show.
 */
import type { Window } from "../../db/schema/appointment";
import { type Message, m } from "../../lib/message";
import { timeIn, zonedInstant } from "../../lib/zoned-time";

export interface PlannedSlot {
  dayId: number;
  teacherId: number | null;
  date: string;
  start: string;
  end: string;
  startsAt: string;
  endsAt: string;
}

export interface Plan {
  slotMinutes: number;
  breakMinutes: number;
}

/** The slots of one window on `date`. */
export function windowSlots(dayId: number, date: string, w: Window, plan: Plan, timeZone: string): PlannedSlot[] {
  const from = zonedInstant(date, w.start, timeZone).getTime();
  const to = zonedInstant(date, w.end, timeZone).getTime();
  const length = plan.slotMinutes * 60_000;
  const step = (plan.slotMinutes + plan.breakMinutes) * 60_000;
  const out: PlannedSlot[] = [];
  for (let t = from; t + length <= to; t += step) {
    const start = new Date(t);
    const end = new Date(t + length);
    out.push({
      dayId,
      teacherId: w.teacherId,
      date,
      start: timeIn(timeZone, start),
      end: timeIn(timeZone, end),
      startsAt: start.toISOString(),
      endsAt: end.toISOString(),
    });
  }
  return out;
}

/** The slots of every day's windows, in time order (then by teacher). */
export function plannedSlots(
  days: readonly { id: number; date: string; windows: readonly Window[] }[],
  plan: Plan,
  timeZone: string,
): PlannedSlot[] {
  return days
    .flatMap((d) => d.windows.flatMap((w) => windowSlots(d.id, d.date, w, plan, timeZone)))
    .sort((a, b) => a.startsAt.localeCompare(b.startsAt) || (a.teacherId ?? 0) - (b.teacherId ?? 0));
}

/** What identifies a slot across generations: its day, teacher and instants. */
export const slotKey = (s: { dayId: number; teacherId: number | null; startsAt: string; endsAt: string }) =>
  `${s.dayId}/${s.teacherId ?? "-"}/${s.startsAt}/${s.endsAt}`;

/** Minutes since midnight of `HH:mm`. */
export const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/**
 * Why a day's windows are not valid, as field errors: a window that does not end after it starts,
 * two windows of the same teacher (or both of nobody) that overlap.
 */
export function windowProblems(windows: readonly Window[]): { path: (string | number)[]; message: Message }[] {
  const problems: { path: (string | number)[]; message: Message }[] = [];
  windows.forEach((w, i) => {
    if (minutesOf(w.end) <= minutesOf(w.start)) {
      problems.push({ path: [i, "end"], message: m`Window ${i + 1} ends (${w.end}) before it starts (${w.start})` });
    }
  });
  for (let i = 0; i < windows.length; i++) {
    for (let j = i + 1; j < windows.length; j++) {
      const a = windows[i];
      const b = windows[j];
      if (!a || !b || (a.teacherId ?? null) !== (b.teacherId ?? null)) continue;
      if (minutesOf(a.start) < minutesOf(b.end) && minutesOf(b.start) < minutesOf(a.end)) {
        problems.push({
          path: [j, "start"],
          message:
            a.teacherId === null
              ? m`Windows ${i + 1} (${a.start}-${a.end}) and ${j + 1} (${b.start}-${b.end}) without a teacher overlap`
              : m`Windows ${i + 1} (${a.start}-${a.end}) and ${j + 1} (${b.start}-${b.end}) of teacher ${a.teacherId} overlap`,
        });
      }
    }
  }
  return problems;
}
