/**
 * iCalendar (RFC 5545) objects for calendar apps: a booking's invite, a school's or a family's
 * subscribed feed. Timed events are written in a school's IANA time zone, with the zone's VTIMEZONE
 * computed from `Intl` (the runtime's own time-zone data: no library, no bundled database), so
 * "18:00 in Mexico City" stays 18:00 there whatever the phone's zone; all-day events (holidays) are
 * dates (`VALUE=DATE`, the end exclusive).
 *
 * What the RFC asks and this writes: CRLF line endings; content lines folded at 75 octets (UTF-8,
 * never inside a character) with a single space starting each continuation; TEXT values escaped
 * (`\\`, `\;`, `\,`, `\n`); DTSTAMP (and LAST-MODIFIED) in UTC; DTSTART/DTEND of timed events as
 * local times with a TZID whose VTIMEZONE is in the object (its observances are the zone's offset
 * changes around the events, each with its onset in the local time before the change,
 * TZOFFSETFROM and TZOFFSETTO); a UID per event that a later version keeps, with its SEQUENCE.
 *
 * One writer for the events' feeds and the appointments' invites (src/modules/appointment/ical.ts).
 */
import { offsetAt } from "./zoned-time";

interface EventBase {
  /** Globally unique and stable: a later version of the same event (a change, a cancellation) keeps it. */
  uid: string;
  summary: string;
  description?: string;
  location?: string;
  status?: "CONFIRMED" | "CANCELLED";
  /** The revision (0 first; each change one more). */
  sequence?: number;
  /** When the event last changed (LAST-MODIFIED). */
  lastModified?: Date;
  /** A page about the event (URL). */
  url?: string;
}

/** A timed event (instants, written in the calendar's zone), or an all-day one (dates, the end exclusive). */
export type CalendarEvent = EventBase &
  ({ start: Date; end: Date; allDay?: undefined } | { allDay: { start: string; end: string } });

export interface Calendar {
  /** `-//Company//Product//EN`. */
  prodId: string;
  timeZone: string;
  /** When the object is made (DTSTAMP of each event). */
  stamp: Date;
  events: readonly CalendarEvent[];
  /** The calendar's name as subscribing apps show it (X-WR-CALNAME). */
  name?: string;
  /** How often a subscribing app should fetch it again (REFRESH-INTERVAL, X-PUBLISHED-TTL). */
  refreshMinutes?: number;
  /** PUBLISH for a feed, REQUEST / CANCEL for an invite (iTIP, RFC 5546). */
  method?: "PUBLISH" | "REQUEST" | "CANCEL";
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

/** VTIMEZONE lines by zone and years: the same for every invite and feed of a school, kept for the isolate. */
const zones = new Map<string, string[]>();

/**
 * The VTIMEZONE of `timeZone` around `first`..`last`: its offset changes from the start of the year
 * before the first to the end of the year after the last, each an observance (DAYLIGHT when it
 * moves the clocks forward), after an opening observance for the offset at the range's start.
 */
export function vtimezone(timeZone: string, first: Date, last: Date): string[] {
  const key = `${timeZone} ${first.getUTCFullYear()} ${last.getUTCFullYear()}`;
  const known = zones.get(key);
  if (known) return known;
  const from = Date.UTC(first.getUTCFullYear() - 1, 0, 1);
  const to = Date.UTC(last.getUTCFullYear() + 2, 0, 1);
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

/** `YYYY-MM-DD` as an iCalendar DATE value. */
const date = (day: string) => `;VALUE=DATE:${day.replaceAll("-", "")}`;

function when(timeZone: string, e: CalendarEvent): string[] {
  if (e.allDay) return [`DTSTART${date(e.allDay.start)}`, `DTEND${date(e.allDay.end)}`];
  return [`DTSTART${local(timeZone, e.start)}`, `DTEND${local(timeZone, e.end)}`];
}

/** The iCalendar object (text/calendar) of `calendar`'s events: CRLF lines, folded. */
export function calendarText(calendar: Calendar): string {
  const { timeZone, events } = calendar;
  const timed = events.flatMap((e) => (e.allDay ? [] : [e]));
  // A calendar with no timed event (an empty feed) still says its zone, around the stamp.
  const first = timed.length ? Math.min(...timed.map((e) => e.start.getTime())) : calendar.stamp.getTime();
  const last = timed.length ? Math.max(...timed.map((e) => e.end.getTime())) : calendar.stamp.getTime();
  const refresh = calendar.refreshMinutes;
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    `PRODID:${calendar.prodId}`,
    "CALSCALE:GREGORIAN",
    ...(calendar.method ? [`METHOD:${calendar.method}`] : []),
    ...(calendar.name ? [`X-WR-CALNAME:${escapeText(calendar.name)}`, `X-WR-TIMEZONE:${timeZone}`] : []),
    ...(refresh ? [`REFRESH-INTERVAL;VALUE=DURATION:PT${refresh}M`, `X-PUBLISHED-TTL:PT${refresh}M`] : []),
    ...vtimezone(timeZone, new Date(first), new Date(last)),
    ...events.flatMap((e) => [
      "BEGIN:VEVENT",
      `UID:${e.uid}`,
      `DTSTAMP:${utc(calendar.stamp)}`,
      ...when(timeZone, e),
      `SUMMARY:${escapeText(e.summary)}`,
      ...(e.description ? [`DESCRIPTION:${escapeText(e.description)}`] : []),
      ...(e.location ? [`LOCATION:${escapeText(e.location)}`] : []),
      ...(e.url ? [`URL:${e.url}`] : []),
      ...(e.allDay ? ["TRANSP:TRANSPARENT"] : []),
      `STATUS:${e.status ?? "CONFIRMED"}`,
      `SEQUENCE:${e.sequence ?? 0}`,
      ...(e.lastModified ? [`LAST-MODIFIED:${utc(e.lastModified)}`] : []),
      "END:VEVENT",
    ]),
    "END:VCALENDAR",
  ];
  return `${lines.map(fold).join("\r\n")}\r\n`;
}
