/**
 * Weekdays as people write them in a spreadsheet: "Mon, Wed", "1,3", "Monday-Friday", "1-5", and in
 * Spanish "lun, mié", "lunes a viernes". Case, accents and spaces do not matter.
 */
import { fold } from "../../lib/fold";
import { type Message, m } from "../../lib/message";
import { dayList, daysOf, maskOf, WEEKDAY_NAMES, weekdayShort } from "../../lib/weekdays";

export { dayList, daysOf, maskOf, WEEKDAY_NAMES, weekdayShort };

/** The first three letters of each weekday's name, English then Spanish (ISO order). */
const NAMES: Record<string, number> = {
  mon: 1,
  tue: 2,
  wed: 3,
  thu: 4,
  fri: 5,
  sat: 6,
  sun: 7,
  lun: 1,
  mar: 2,
  mie: 3,
  jue: 4,
  vie: 5,
  sab: 6,
  dom: 7,
};

/** One weekday: its number (1..7) or a name or an abbreviation of at least two letters. */
function weekday(token: string): number | undefined {
  if (/^[1-7]$/.test(token)) return Number(token);
  if (!/^[a-z]{2,}$/.test(token)) return undefined;
  if (token.length < 3) {
    // Two letters: "mo", "tu", "we", "th", "fr", "sa", "su" (unambiguous in English).
    return { mo: 1, tu: 2, we: 3, th: 4, fr: 5, sa: 6, su: 7 }[token];
  }
  return NAMES[token.slice(0, 3)];
}

/** The weekdays a cell names, in order and each once; or the part it could not read. */
export function parseWeekdays(cell: string): { days: number[] } | { error: Message } {
  const text = fold(cell)
    .replace(/\s+(a|to|al|hasta)\s+/g, "-")
    .replace(/\s*-\s*/g, "-")
    .trim();
  const days = new Set<number>();
  const parts = text.split(/[,;/&\s]+/).filter((p) => p && p !== "y" && p !== "and" && p !== "e");
  if (parts.length === 0) return { error: m`Required` };
  for (const part of parts) {
    const range = part.split("-").filter(Boolean);
    const [from, to] = range.map((p) => weekday(p));
    if (range.length === 1 && from !== undefined) days.add(from);
    else if (range.length === 2 && from !== undefined && to !== undefined && from <= to) {
      for (let d = from; d <= to; d++) days.add(d);
    } else return { error: m`Cannot read '${part}' as a weekday: write Mon, Tue (or 1, 2; or lun, mar)` };
  }
  return { days: [...days].sort((a, b) => a - b) };
}
