/**
 * ISO weekdays (1 Monday .. 7 Sunday) and the bit mask routes and riders keep them in (bit d-1 for
 * weekday d, src/db/schema/transport.ts).
 */

import { allOf, type Message, m, verbatim } from "./message";

export const WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;

/** Each weekday's name in messages (1 Monday .. 7 Sunday), and its short form (files: "Mon, Tue"). */
const NAMES: readonly Message[] = [m`Monday`, m`Tuesday`, m`Wednesday`, m`Thursday`, m`Friday`, m`Saturday`, m`Sunday`];
const SHORT: readonly Message[] = [m`Mon`, m`Tue`, m`Wed`, m`Thu`, m`Fri`, m`Sat`, m`Sun`];

/** The name of ISO weekday `d`, in the language of the message that shows it. */
export const weekdayName = (d: number): Message => NAMES[d - 1] ?? verbatim(String(d));

/** The short name of ISO weekday `d` ("Mon", "lun"). */
export const weekdayShort = (d: number): Message => SHORT[d - 1] ?? verbatim(String(d));

/** The bit mask of weekdays. */
export const maskOf = (days: readonly number[]) => days.reduce((mask, d) => mask | (1 << (d - 1)), 0);

/** The weekdays of a mask, in order. */
export const daysOf = (mask: number) => [1, 2, 3, 4, 5, 6, 7].filter((d) => (mask & (1 << (d - 1))) !== 0);

/** "Monday", "Monday and Tuesday", "Monday, Tuesday and Friday"; "no day" for none. */
export function dayList(days: readonly number[]): Message {
  return days.length === 0 ? m`no day` : allOf(days.map(weekdayName));
}
