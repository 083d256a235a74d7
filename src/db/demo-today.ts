/**
 * The demo data for a given day. seed/demo.sql is written for one week (its anchor: the demo's day
 * is Wednesday 25 November 2026, `DEMO_ANCHOR`); `demoSeedFor(seed, now)` rewrites its dates so the
 * demo lives in the week of `now`, in each school's own time zone. `npm run dev` / `db:setup` /
 * `db:reset` load it for the machine's today (scripts/dev.ts); the tests keep the anchor unless
 * `DEMO_TODAY` is set (test/setup.ts), and test/demo-today.test.ts walks the demo on several days.
 * Pure string work, no clock: what "today" is comes from the caller (docs/decisions.md, "The demo
 * lives in the current week").
 *
 * For each school, from its zone's today:
 * - the demo's day: today if it is a school day (Monday to Friday, not in one of the school's
 *   holiday cycles), else the next school day;
 * - every date of the school's rows moves by the whole weeks from the anchor's week to the week of
 *   the demo's day, so every weekday stays (schedules, routes, the fixed Tuesday/Thursday pickup,
 *   Friday's early release); local date-times (`YYYY-MM-DDTHH:mm`) keep their wall-clock time, and
 *   instants (`...Z`) keep the wall-clock time they show in the school's zone (across a daylight-
 *   saving change the UTC instant moves by the hour: 08:00 in New York stays 08:00);
 * - the afternoon block (`-- >>> Afternoon`: the exit permissions, invitations and route days of
 *   the days around the demo's day) is laid around the demo's day instead: a date of the anchor's
 *   school week that was k school days from the anchor's day goes to k school days from the demo's
 *   day, so "this afternoon" always has its pending asks and its refusal for being too late, and
 *   the invitations of the next days are open. The rows a fixed (weekly) permission made keep their
 *   weekdays (whole weeks). An instant there moves with the day its UTC date names (the seed asks
 *   "the evening before" at 19:00 in Mexico City, 01:00Z of the day).
 * Rows of no school (users, legal documents) move by the first school's weeks, in UTC. A school
 * year's name (`'2026-2027'`) follows its dates when they move by a year or more; other text (the
 * festival's slug, "el viernes" in an invitation) stays as written.
 */
import { addDays, dateIn, isoWeekday, timeIn, zonedInstant } from "../lib/zoned-time";

/** The demo's day as seed/demo.sql is written: a Wednesday. */
export const DEMO_ANCHOR = "2026-11-25";
const ANCHOR_MONDAY = addDays(DEMO_ANCHOR, 1 - isoWeekday(DEMO_ANCHOR));
const AFTERNOON_BEGIN = "-- >>> Afternoon";
const AFTERNOON_END = "-- <<< Afternoon";
/** The school whose weeks the rows of no school follow. */
const MAIN_SCHOOL = 1;

/** Where one school's demo lands. */
export interface DemoDay {
  school: number;
  timeZone: string;
  /** Today in the school's zone. */
  today: string;
  /** The demo's day: today if a school day, else the next school day. */
  day: string;
  /** Whole weeks every date of the school moves (negative before the anchor). */
  weeks: number;
}

/** A school year's name. */
const YEARS = /^(\d{4})-(\d{4})$/;
const LITERAL = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::(\d{2}(?:\.\d{3})?)Z)?)?$/;

/** Days from `a` to `b` (`YYYY-MM-DD`). */
function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

const mondayOf = (date: string) => addDays(date, 1 - isoWeekday(date));

/** A row of an `INSERT ... VALUES` (or a whole other statement) and where its text lies. */
export interface Part {
  start: number;
  end: number;
  table: string;
  /** The statement's columns and where the row's values lie (start, end of each), for a VALUES row. */
  columns: string[];
  bounds: number[];
  /** The school named in the statement's text (`school_id = N`), for other shapes. */
  statementSchool?: number;
  afternoon: boolean;
}

/** The text of a row's value (as written, trimmed), read when asked. */
export const cell = (sql: string, part: Part | undefined, column: string) => {
  const k = part?.columns.indexOf(column) ?? -1;
  if (part === undefined || k < 0 || 2 * k + 1 >= part.bounds.length) return undefined;
  return sql.slice(part.bounds[2 * k], part.bounds[2 * k + 1]).trim();
};

const QUOTE = 39; // '
const DASH = 45; // -
const NEWLINE = 10;
const OPEN = 40; // (
const CLOSE = 41; // )
const COMMA = 44;
const SEMICOLON = 59;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * The quoted literals of `sql` that may be dates (start, end of each, quotes included) and its
 * statements' rows: one pass over the text (~0.6 MB), by character codes.
 */
export function scan(sql: string): { literals: number[]; parts: Part[] } {
  const literals: number[] = [];
  const parts: Part[] = [];
  let afternoon = false;
  let statementStart = -1;
  let depth = 0;
  let table = "";
  let columns: string[] = [];
  let rowStart = -1;
  let valueStart = -1;
  let bounds: number[] = [];
  let inValues = false;
  const closeStatement = (end: number) => {
    if (statementStart >= 0 && !inValues) {
      const text = sql.slice(statementStart, end);
      const name = /^(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE)\s+(\w+)/i.exec(text)?.[1] ?? "";
      const named =
        /\b(?:\w+\.)?school_id\s*=\s*(\d+)/.exec(text) ?? (name === "school" ? /\bid\s*=\s*(\d+)/.exec(text) : null);
      parts.push({
        start: statementStart,
        end,
        table: name,
        columns: [],
        bounds: [],
        ...(named ? { statementSchool: Number(named[1]) } : {}),
        afternoon,
      });
    }
    statementStart = -1;
    depth = 0;
    inValues = false;
  };
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === QUOTE) {
      const from = i;
      i++;
      for (;;) {
        const q = sql.indexOf("'", i);
        if (q < 0) {
          i = n;
          break;
        }
        if (sql.charCodeAt(q + 1) === QUOTE) i = q + 2;
        else {
          i = q + 1;
          break;
        }
      }
      if (isDigit(sql.charCodeAt(from + 1)) && i - from <= 26) literals.push(from, i);
      continue;
    }
    if (statementStart < 0) {
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (c === DASH && sql.charCodeAt(i + 1) === DASH) {
        // A comment line (src/db/sql-script.ts drops them): the afternoon block's markers are some.
        const eol = sql.indexOf("\n", i);
        const line = sql.slice(i, eol < 0 ? n : eol);
        if (line.startsWith(AFTERNOON_BEGIN)) afternoon = true;
        else if (line.startsWith(AFTERNOON_END)) afternoon = false;
        i = eol < 0 ? n : eol + 1;
        continue;
      }
      statementStart = i;
      const header = /^INSERT(?:\s+OR\s+\w+)?\s+INTO\s+(\w+)\s*\(([^)]*)\)\s*VALUES\b/iy;
      header.lastIndex = 0;
      const m = header.exec(sql.slice(i, i + 2000));
      if (m) {
        inValues = true;
        table = m[1] ?? "";
        columns = (m[2] ?? "").split(",").map((x) => x.trim());
        i += m[0].length;
        continue;
      }
    }
    if (c === NEWLINE) {
      // A comment line inside a statement (indented or not).
      let j = i + 1;
      while (sql.charCodeAt(j) === 32 || sql.charCodeAt(j) === 9) j++;
      if (sql.charCodeAt(j) === DASH && sql.charCodeAt(j + 1) === DASH) {
        const eol = sql.indexOf("\n", j);
        i = eol < 0 ? n : eol;
        continue;
      }
    }
    if (c === SEMICOLON && depth === 0) {
      closeStatement(i);
      i++;
      continue;
    }
    if (c === OPEN) {
      depth++;
      if (inValues && depth === 1) {
        rowStart = i;
        valueStart = i + 1;
        bounds = [];
      }
    } else if (c === CLOSE) {
      if (inValues && depth === 1) {
        bounds.push(valueStart, i);
        parts.push({ start: rowStart, end: i + 1, table, columns, bounds, afternoon });
      }
      depth--;
    } else if (c === COMMA && inValues && depth === 1) {
      bounds.push(valueStart, i);
      valueStart = i + 1;
    }
    i++;
  }
  closeStatement(n);
  return { literals, parts };
}

const unquote = (text: string) => (text.startsWith("'") ? text.slice(1, -1).replaceAll("''", "'") : text);

/** Each school's zone and its holiday cycles, read from the seed. */
function calendars(sql: string, parts: Part[]) {
  const zones = new Map<number, string>();
  const holidays = new Map<number, [string, string][]>();
  for (const p of parts) {
    const zone = p.table === "school" ? cell(sql, p, "time_zone") : undefined;
    if (zone !== undefined) zones.set(Number(cell(sql, p, "id")), unquote(zone));
    const from = p.table === "school_holiday_cycle" ? cell(sql, p, "start_holidays") : undefined;
    if (from !== undefined) {
      const school = Number(cell(sql, p, "school_id"));
      const list = holidays.get(school) ?? [];
      list.push([unquote(from), unquote(cell(sql, p, "end_holidays") ?? "")]);
      holidays.set(school, list);
    }
  }
  return { zones, holidays };
}

/** Whether `date` is a school day of a calendar whose (anchor) holidays moved by `weeks`. */
function schoolDay(date: string, holidays: [string, string][], weeks: number): boolean {
  if (isoWeekday(date) > 5) return false;
  const anchorDate = addDays(date, -7 * weeks);
  return !holidays.some(([from, to]) => anchorDate >= from && anchorDate <= to);
}

/** `date` moved `k` school days (k < 0: back); k = 0 is `date` itself. */
function schoolDaysFrom(date: string, k: number, holidays: [string, string][], weeks: number): string {
  let d = date;
  for (let left = Math.abs(k); left > 0; ) {
    d = addDays(d, Math.sign(k));
    if (schoolDay(d, holidays, weeks)) left--;
  }
  return d;
}

function demoDayOf(school: number, timeZone: string, now: Date, holidays: [string, string][]): DemoDay {
  const today = dateIn(timeZone, now);
  // The weeks follow the demo's day, whose school days follow the weeks' holidays: settle both.
  let weeks = Math.round(daysBetween(ANCHOR_MONDAY, mondayOf(today)) / 7);
  let day = today;
  for (let tries = 0; tries < 10; tries++) {
    day = today;
    while (!schoolDay(day, holidays, weeks)) day = addDays(day, 1);
    const settled = Math.round(daysBetween(ANCHOR_MONDAY, mondayOf(day)) / 7);
    if (settled === weeks) break;
    weeks = settled;
  }
  return { school, timeZone, today, day, weeks };
}

/** Where each school's demo lands for `now` (the schools and zones of `seed`). */
export function demoDays(seed: string, now: Date): DemoDay[] {
  const { zones, holidays } = calendars(seed, scan(seed).parts);
  return [...zones].map(([school, zone]) => demoDayOf(school, zone, now, holidays.get(school) ?? []));
}

/** `seed` (seed/demo.sql as written) with its dates moved so the demo lives in the week of `now`. */
export function demoSeedFor(seed: string, now: Date): string {
  const { literals, parts } = scan(seed);
  const { zones, holidays } = calendars(seed, parts);
  const days = new Map<number, DemoDay>();
  for (const [school, zone] of zones) days.set(school, demoDayOf(school, zone, now, holidays.get(school) ?? []));
  const main = days.get(MAIN_SCHOOL) ?? days.values().next().value;
  const anchorWeek = [0, 1, 2, 3, 4].map((d) => addDays(ANCHOR_MONDAY, d));

  /** How a row's dates move: its school's zone and weeks, and (afternoon rows) the days around its demo day. */
  const ruleOf = (part: Part | undefined) => {
    const named = cell(seed, part, "school_id");
    const school =
      part === undefined
        ? undefined
        : named !== undefined && /^\d+$/.test(named)
          ? Number(named)
          : part.table === "school" && cell(seed, part, "id") !== undefined
            ? Number(cell(seed, part, "id"))
            : part.statementSchool;
    const day = school === undefined ? undefined : days.get(school);
    const fixed = part?.table === "fixed_exit_permission" || (cell(seed, part, "fixed_id") ?? "NULL") !== "NULL";
    const around = day !== undefined && part?.afternoon === true && !fixed;
    return {
      timeZone: day?.timeZone ?? "UTC",
      weeks: (day ?? main)?.weeks ?? 0,
      /** Extra days for an anchor-week date of an afternoon row: to its school day around the demo's day. */
      extra: (date: string) => {
        if (!around || !anchorWeek.includes(date)) return 0;
        const k = isoWeekday(date) - isoWeekday(DEMO_ANCHOR);
        const to = schoolDaysFrom(day.day, k, holidays.get(day.school) ?? [], day.weeks);
        return daysBetween(addDays(date, 7 * day.weeks), to);
      },
    };
  };

  const moved = new Map<string, string>();
  const out: string[] = [];
  let at = 0;
  let p = 0;
  let rulePart: Part | undefined;
  let rule = ruleOf(undefined);
  for (let l = 0; l < literals.length; l += 2) {
    const start = literals[l] ?? 0;
    const end = literals[l + 1] ?? 0;
    const content = seed.slice(start + 1, end - 1);
    const m = LITERAL.exec(content);
    const years = m ? null : YEARS.exec(content);
    if (!m && !years) continue;
    while (p < parts.length && (parts[p]?.end ?? 0) <= start) p++;
    const part = parts[p] && (parts[p]?.start ?? 0) <= start ? parts[p] : undefined;
    if (part !== rulePart || l === 0) {
      rulePart = part;
      rule = ruleOf(part);
    }
    if (!m) {
      // A school year's name ('2026-2027') follows the year its dates moved to.
      const by = Math.round((7 * rule.weeks) / 365.2425);
      const [first, second] = [Number(years?.[1]), Number(years?.[2])];
      if (by !== 0 && second === first + 1) {
        out.push(seed.slice(at, start + 1), `${first + by}-${second + by}`);
        at = end - 1;
      }
      continue;
    }
    const [, date = "", time, seconds] = m;
    const shift = 7 * rule.weeks + rule.extra(date);
    const key = `${rule.timeZone} ${shift} ${m[0]}`;
    let text = moved.get(key);
    if (text === undefined) {
      if (time === undefined) text = addDays(date, shift);
      else if (seconds === undefined) text = `${addDays(date, shift)}T${time}`;
      else {
        // The wall-clock reading of the school's zone, moved by whole days, read back as an instant.
        const instant = new Date(m[0]);
        const local = dateIn(rule.timeZone, instant);
        const wall = timeIn(rule.timeZone, instant);
        const within = instant.getTime() % 60_000;
        text = new Date(zonedInstant(addDays(local, shift), wall, rule.timeZone).getTime() + within).toISOString();
      }
      moved.set(key, text);
    }
    out.push(seed.slice(at, start + 1), text);
    at = end - 1;
  }
  out.push(seed.slice(at));
  return out.join("");
}
