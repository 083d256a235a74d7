/**
 * iCalendar (RFC 5545) objects for calendar apps: events in a school's IANA time zone, with the
 * zone's VTIMEZONE computed from `Intl` (the runtime's own time-zone data: no library, no bundled
 * database), so "09:00 in Madrid" stays 09:00 in Madrid on the days the clocks change.
 *
 * What the RFC asks and this writes: CRLF line endings; content lines folded at 75 octets (UTF-8,
 * never inside a character) with a single space starting each continuation; TEXT values escaped
 * (`\\`, `\;`, `\,`, `\n`); DTSTAMP in UTC; DTSTART/DTEND as local times with a TZID whose VTIMEZONE
 * is in the object (its observances are the zone's offset changes around the events, each with its
 * onset in the local time before the change, TZOFFSETFROM and TZOFFSETTO).
 */
import { offsetAt } from "./zoned-time";

export interface CalendarEvent {
  /** Globally unique and stable: a later version of the same event (a cancellation) keeps it. */
  uid: string;
  start: Date;
  end: Date;
  summary: string;
  description?: string;
  location?: string;
  status?: "CONFIRMED" | "CANCELLED";
  /** The revision (0 first; a cancellation is 1). */
  sequence?: number;
}

export interface Calendar {
  /** `-//Company//Product//EN`. */
  prodId: string;
  timeZone: string;
  /** When the object is made (DTSTAMP of each event). */
  stamp: Date;
  events: readonly CalendarEvent[];
}

const DAY_MS = 86_400_000;
const encoder = new TextEncoder();

/** TEXT escaping (RFC 5545 3.3.11): backslash, semicolon, comma, line breaks. */
export function escapeText(value: string): string {
  return value.replace(/[\\;,]/g, (ch) => `\\${ch}`).replace(/\r\n|\r|\n/g, "\\n");
}

/** Folds a content line into lines of at most 75 octets, never splitting a UTF-8 character (RFC 5545 3.1). */
export function fold(line: string): string {
  if (encoder.encode(line).length <= 75) return line;
  const out: string[] = [];
  let current = "";
  let octets = 0;
  // The first line holds 75 octets; each continuation starts with a space, so 74 of content.
  let limit = 75;
  for (const ch of line) {
    const size = encoder.encode(ch).length;
    if (octets + size > limit) {
      out.push(current);
      current = "";
      octets = 0;
      limit = 74;
    }
    current += ch;
    octets += size;
  }
  out.push(current);
  return out.join("\r\n ");
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `YYYYMMDDTHHMMSS` of the UTC fields of `ms` (a wall clock already shifted by its offset). */
function stampOf(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

const utc = (d: Date) => `${stampOf(d.getTime())}Z`;

/** A UTC offset in ms as `+HHMM` / `-HHMM`. */
function offsetText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
}

const WEEK_MS = 7 * DAY_MS;

/**
 * The instants in [from, to) at which `timeZone`'s offset changes, to the minute: the offset read
 * once a week (zones change at most a few times a year, months apart), each change then found by
 * halving its week.
 */
export function offsetChanges(timeZone: string, from: number, to: number): { at: number; from: number; to: number }[] {
  const changes: { at: number; from: number; to: number }[] = [];
  let t = from;
  let before = offsetAt(timeZone, t);
  while (t < to) {
    const next = Math.min(t + WEEK_MS, to);
    const after = offsetAt(timeZone, next);
    if (after !== before) {
      // The change is in (t, next]: halve the interval down to a minute.
      let lo = t;
      let hi = next;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (offsetAt(timeZone, mid) === before) lo = mid;
        else hi = mid;
      }
      changes.push({ at: hi, from: before, to: after });
      before = after;
    }
    t = next;
  }
  return changes;
}

/** VTIMEZONE lines by zone and years: the same for every invite of a school, kept for the isolate. */
const zones = new Map<string, string[]>();

/**
 * The VTIMEZONE of `timeZone` for the years of the events: its offset changes from the first
 * event's year to the end of the last one's, each an observance (DAYLIGHT when it moves the clocks
 * forward), after an opening observance for the offset at the start of that range.
 */
export function vtimezone(timeZone: string, first: Date, last: Date): string[] {
  const key = `${timeZone} ${first.getUTCFullYear()} ${last.getUTCFullYear()}`;
  const known = zones.get(key);
  if (known) return known;
  const from = Date.UTC(first.getUTCFullYear(), 0, 1);
  const to = Date.UTC(last.getUTCFullYear() + 1, 0, 1);
  const changes = offsetChanges(timeZone, from, to);
  const opening = offsetAt(timeZone, from);
  const lowest = Math.min(opening, ...changes.map((c) => c.to));
  const observance = (at: number, before: number, after: number) => {
    const kind = after > lowest ? "DAYLIGHT" : "STANDARD";
    return [
      `BEGIN:${kind}`,
      // The onset as the wall clocks read it before the change.
      `DTSTART:${stampOf(at + before)}`,
      `TZOFFSETFROM:${offsetText(before)}`,
      `TZOFFSETTO:${offsetText(after)}`,
      `END:${kind}`,
    ];
  };
  const lines = [
    "BEGIN:VTIMEZONE",
    `TZID:${timeZone}`,
    ...observance(from, opening, opening),
    ...changes.flatMap((c) => observance(c.at, c.from, c.to)),
    "END:VTIMEZONE",
  ];
  zones.set(key, lines);
  return lines;
}

/** A local date-time of `timeZone` for a DTSTART/DTEND with its TZID. */
const local = (timeZone: string, d: Date) =>
  `;TZID=${timeZone}:${stampOf(d.getTime() + offsetAt(timeZone, d.getTime()))}`;

/** The iCalendar object (text/calendar) of `calendar`'s events: CRLF lines, folded. */
export function calendarText(calendar: Calendar): string {
  const { timeZone, events } = calendar;
  const starts = events.map((e) => e.start.getTime());
  const ends = events.map((e) => e.end.getTime());
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    `PRODID:${calendar.prodId}`,
    "CALSCALE:GREGORIAN",
    ...vtimezone(timeZone, new Date(Math.min(...starts)), new Date(Math.max(...ends))),
    ...events.flatMap((e) => [
      "BEGIN:VEVENT",
      `UID:${e.uid}`,
      `DTSTAMP:${utc(calendar.stamp)}`,
      `DTSTART${local(timeZone, e.start)}`,
      `DTEND${local(timeZone, e.end)}`,
      `SUMMARY:${escapeText(e.summary)}`,
      ...(e.description ? [`DESCRIPTION:${escapeText(e.description)}`] : []),
      ...(e.location ? [`LOCATION:${escapeText(e.location)}`] : []),
      `STATUS:${e.status ?? "CONFIRMED"}`,
      `SEQUENCE:${e.sequence ?? 0}`,
      "END:VEVENT",
    ]),
    "END:VCALENDAR",
  ];
  return `${lines.map(fold).join("\r\n")}\r\n`;
}
