/**
 * School-local dates and times: every school has an IANA time zone, and "today", "dismissal"
 * and cut-offs are computed in it, with nothing but `Intl.DateTimeFormat`: workerd ships full ICU
 * time-zone data, so no date library is bundled.
 *
 * A local time that a daylight-saving change skips (02:30 on a spring-forward night) or repeats
 * (01:30 on a fall-back night) is resolved as Temporal's "compatible" disambiguation does: a
 * skipped time moves forward by the gap, a repeated one takes the earlier instant.
 */

const DAY_MS = 24 * 3600 * 1000;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (built on first use, kept for the isolate: building one costs ~0.1 ms). */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * Whether the runtime can compute in `timeZone` (it accepts aliases and any letter case: a school's
 * time zone is validated more strictly, by its exact IANA name, in src/modules/school/fields.ts).
 */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The UTC milliseconds of a wall-clock reading taken as if it were UTC (any year 0000-9999). */
function wallAsUtc(year: number, month: number, day: number, hour: number, minute: number, second = 0): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  d.setUTCFullYear(year, month - 1, day); // Date.UTC reads years 0-99 as 1900-1999
  return d.getTime();
}

/**
 * The zone's offset from UTC at `instant` (milliseconds, east positive: New York in winter is -5 h).
 * The zone's clocks read whole seconds, so the offset is the same for every instant of a second:
 * kept per zone and second (a deadline asked again and again reads the zone once).
 */
export function offsetAt(timeZone: string, instant: number): number {
  const whole = instant - (((instant % 1000) + 1000) % 1000);
  return kept(offsets, `${timeZone} ${whole}`, () => {
    const parts = formatter(timeZone).formatToParts(new Date(whole));
    const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? Number.NaN);
    return wallAsUtc(get("year"), get("month"), get("day"), get("hour") % 24, get("minute"), get("second")) - whole;
  });
}

const offsets = new Map<string, number>();

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** The parts of a real calendar date `YYYY-MM-DD`, or undefined (`2027-02-30` is not one). */
export function calendarDate(date: string): { year: number; month: number; day: number } | undefined {
  const m = DATE.exec(date);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(wallAsUtc(year, month, day, 0, 0));
  if (d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  return { year, month, day };
}

/**
 * The functions below are pure functions of their arguments, asked again and again within and
 * across requests (each ride's school day, each student's dismissal, every list's "today"): each
 * answer is kept for the isolate, in a bounded map per function (cleared when full: a school's
 * days, times and zones are few).
 */
function kept<V>(answers: Map<string, V>, key: string, compute: () => V): V {
  const known = answers.get(key);
  if (known !== undefined) return known;
  const value = compute();
  if (answers.size >= MAX_KEPT) answers.clear();
  answers.set(key, value);
  return value;
}

const MAX_KEPT = 10_000;

/**
 * `date` plus `days` calendar days (`YYYY-MM-DD`). A RangeError for a date that is not one, or an
 * answer outside years 0000-9999 (`YYYY-MM-DD` cannot write it): the API takes dates of
 * 2000-2099 only (src/lib/dates.ts), so what it computes from them (a day after, weeks ahead)
 * never comes near.
 */
export function addDays(date: string, days: number): string {
  return kept(shifted, `${date} ${days}`, () => {
    const parts = calendarDate(date);
    if (!parts) throw new RangeError(`not a calendar date: ${date}`);
    const d = new Date(wallAsUtc(parts.year, parts.month, parts.day, 0, 0));
    d.setUTCDate(d.getUTCDate() + days);
    const year = d.getUTCFullYear();
    if (!(year >= 0 && year <= 9999)) throw new RangeError(`${date} plus ${days} days is past year 9999`);
    return `${String(year).padStart(4, "0")}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")}`;
  });
}

const shifted = new Map<string, string>();

/** The ISO weekday of a calendar date: 1 Monday .. 7 Sunday (the same in every time zone). */
export function isoWeekday(date: string): number {
  return kept(weekdays, date, () => {
    const parts = calendarDate(date);
    if (!parts) throw new RangeError(`not a calendar date: ${date}`);
    const sunday0 = new Date(wallAsUtc(parts.year, parts.month, parts.day, 0, 0)).getUTCDay();
    return sunday0 === 0 ? 7 : sunday0;
  });
}

const weekdays = new Map<string, number>();

/**
 * The instant at which the wall clocks of `timeZone` read `time` (`HH:mm`) on `date` (`YYYY-MM-DD`).
 * @example
 * zonedInstant("2026-11-02", "15:00", "America/New_York").toISOString(); // "2026-11-02T20:00:00.000Z" (EST)
 */
export function zonedInstant(date: string, time: string, timeZone: string): Date {
  // Four zone readings (~40 µs) per answer; a Date is mutable, so each caller gets its own.
  return new Date(
    kept(instants, `${timeZone} ${date} ${time}`, () => computeZonedInstant(date, time, timeZone).getTime()),
  );
}

const instants = new Map<string, number>();

function computeZonedInstant(date: string, time: string, timeZone: string): Date {
  const d = calendarDate(date);
  const t = TIME.exec(time);
  if (!d || !t) throw new RangeError(`not a local date and time: ${date} ${time}`);
  const wall = wallAsUtc(d.year, d.month, d.day, Number(t[1]), Number(t[2]));
  // The offsets a day either side: equal on all but the days of a change.
  const before = offsetAt(timeZone, wall - DAY_MS);
  const after = offsetAt(timeZone, wall + DAY_MS);
  const fits = [...new Set([before, after])]
    .map((offset) => wall - offset)
    .filter((instant) => offsetAt(timeZone, instant) === wall - instant);
  // Repeated: the earlier instant. Skipped: read with the offset before the change (moves forward).
  return new Date(fits.length > 0 ? Math.min(...fits) : wall - before);
}

/** The calendar date (`YYYY-MM-DD`) the wall clocks of `timeZone` show at `instant`: a school's "today". */
export function dateIn(timeZone: string, instant: Date): string {
  return wallClock(timeZone, instant).date;
}

/** The wall-clock time (`HH:mm`) of `timeZone` at `instant`. */
export function timeIn(timeZone: string, instant: Date): string {
  return wallClock(timeZone, instant).time;
}

/**
 * What the wall clocks of `timeZone` show during the minute of `instant`. Every zone's offset is a
 * whole number of minutes today, so its wall clocks turn a minute (and a day) with UTC's: the date
 * and `HH:mm` are the same for every instant of a UTC minute, kept per zone and minute.
 */
function wallClock(timeZone: string, instant: Date): { date: string; time: string } {
  const minute = Math.floor(instant.getTime() / 60_000);
  return kept(clocks, `${timeZone} ${minute}`, () => {
    const parts = formatter(timeZone).formatToParts(new Date(minute * 60_000));
    const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
    return {
      date: `${get("year").padStart(4, "0")}-${get("month").padStart(2, "0")}-${get("day").padStart(2, "0")}`,
      time: `${get("hour").padStart(2, "0")}:${get("minute").padStart(2, "0")}`,
    };
  });
}

const clocks = new Map<string, { date: string; time: string }>();

/** The first instant after `instant` at which the wall clocks of `timeZone` read `time` (`HH:mm`). */
export function nextInstant(timeZone: string, instant: Date, time: string): Date {
  const today = dateIn(timeZone, instant);
  const at = zonedInstant(today, time, timeZone);
  if (at.getTime() > instant.getTime()) return at;
  return zonedInstant(addDays(today, 1), time, timeZone);
}

/**
 * The end of the school-local day `date` in `timeZone`: the instant the next day starts (its local
 * midnight, or the first instant after it when a daylight-saving change skips midnight).
 */
export function endOfDay(date: string, timeZone: string): Date {
  return zonedInstant(addDays(date, 1), "00:00", timeZone);
}

/** An instant written with the zone's offset at that instant: `2026-11-25T13:00:00-06:00`. */
export function isoWithOffset(instant: Date, timeZone: string): string {
  const offset = offsetAt(timeZone, instant.getTime());
  const wall = new Date(instant.getTime() + offset).toISOString().slice(0, 19);
  const minutes = Math.round(Math.abs(offset) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  return `${wall}${sign}${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

/** Whether a delegation is valid at `now` in its school's time zone. */
export function validToday(row: { timeZone: string; validFrom: string; validUntil: string }, now: Date): boolean {
  const today = dateIn(row.timeZone, now);
  return row.validFrom <= today && today <= row.validUntil;
}
