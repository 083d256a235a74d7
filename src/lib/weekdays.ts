/**
 * ISO weekdays (1 Monday .. 7 Sunday) and the bit mask routes and riders keep them in (bit d-1 for
 * weekday d, src/db/schema/transport.ts).
 */

export const WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;

/** The bit mask of weekdays. */
export const maskOf = (days: readonly number[]) => days.reduce((mask, d) => mask | (1 << (d - 1)), 0);

/** The weekdays of a mask, in order. */
export const daysOf = (mask: number) => [1, 2, 3, 4, 5, 6, 7].filter((d) => (mask & (1 << (d - 1))) !== 0);

/** "Monday", "Monday and Tuesday", "Monday, Tuesday and Friday". */
export function dayList(days: readonly number[]): string {
  const names = days.map((d) => WEEKDAY_NAMES[d - 1] ?? String(d));
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
