/**
 * The dates and date-times the API takes, in one place. Every date in a body, a query or a path
 * (a school day, a range's ends, a birth date) is a `schoolDate`; every instant (`expiresAt`, a
 * reminder's `sendAt`, the audit trail's `from`) is a `dateTime`; a school-local date and time
 * without an offset (an event's start) is a `schoolDateTime`. Each refuses a value outside the
 * range below with a 400 naming the field, before any handler runs, and says the range in the
 * OpenAPI document (`format: date` / `date-time`, and its description).
 *
 * Why a range (docs/decisions.md, "Dates have a range"): the calendar arithmetic goes past the date
 * it is given (the next local midnight, a day's deadline, weeks in advance), and past 9999-12-31
 * neither `YYYY-MM-DD` nor `toISOString()` can write the answer (a day's end threw, an event was
 * stored as `+010000-...`). No school plans a day in year 9999 nor records one in year 1. The years
 * 2000 to 2099 hold every date a school of this service has or will have (a pupil's birth date too:
 * one born before 2000 is past school age), keep every date computed from them four-digit, and keep
 * text order equal to time order, which the stored dates and instants rely on.
 */
import { z } from "@hono/zod-openapi";
import { addIssue, m } from "./message";
import { calendarDate } from "./zoned-time";

/** The first and the last year a date or an instant may fall in (inclusive). */
export const FIRST_YEAR = 2000;
export const LAST_YEAR = 2099;
/** The first and the last school date taken (inclusive). */
export const FIRST_DATE = `${FIRST_YEAR}-01-01`;
export const LAST_DATE = `${LAST_YEAR}-12-31`;
/** The instants taken: from the first year's start to the last year's end, in UTC (end exclusive). */
const FIRST_INSTANT = Date.UTC(FIRST_YEAR, 0, 1);
const END_INSTANT = Date.UTC(LAST_YEAR + 1, 0, 1);

/** What the document says of the range, after a field's own description. */
const DATE_RANGE = `YYYY-MM-DD, ${FIRST_DATE} to ${LAST_DATE}`;
const INSTANT_RANGE = `ISO 8601 with Z or an offset, an instant of the years ${FIRST_YEAR} to ${LAST_YEAR} in UTC; returned in UTC`;
const LOCAL_RANGE = `YYYY-MM-DDTHH:mm on the school's clocks, the date ${FIRST_DATE} to ${LAST_DATE}`;

/** Whether `date` is a calendar date `YYYY-MM-DD` in the range. */
export function isSchoolDate(date: string): boolean {
  return calendarDate(date) !== undefined && date >= FIRST_DATE && date <= LAST_DATE;
}

/** The refusal of a calendar date outside the range (also for dates read from files: an import's). */
export const dateOutOfRange = () => m`Must be a date from ${FIRST_DATE} to ${LAST_DATE}`;

function checkDate(value: string, ctx: z.RefinementCtx) {
  if (calendarDate(value) === undefined) addIssue(ctx, m`Must be a calendar date, YYYY-MM-DD`);
  else if (value < FIRST_DATE || value > LAST_DATE) addIssue(ctx, dateOutOfRange());
}

/**
 * A calendar date `YYYY-MM-DD` from FIRST_DATE to LAST_DATE (a school day is the school's own: no
 * zone in it). `description` says what it is; the document adds the format and the range.
 * @example
 * date: schoolDate("The day to look at"),
 * from: schoolDate("Only days on or after this one").optional(),
 */
export function schoolDate(description: string, example = "2026-12-01") {
  return z
    .string()
    .superRefine(checkDate)
    .openapi({ format: "date", example, description: `${description} (${DATE_RANGE})` });
}

/**
 * An instant: ISO 8601 with `Z` or an offset, in the years FIRST_YEAR to LAST_YEAR in UTC,
 * answered as UTC `toISOString()` (so stored values sort and compare as text).
 * @example
 * expiresAt: dateTime("No answer is taken after it", "2026-12-03T22:00:00.000Z").optional(),
 */
export function dateTime(description: string, example = "2026-12-01T15:00:00Z") {
  return z.iso
    .datetime({ offset: true })
    .transform((value, ctx) => {
      const at = Date.parse(value);
      if (!(at >= FIRST_INSTANT && at < END_INSTANT)) {
        addIssue(ctx, m`Must be an instant in the years ${FIRST_YEAR} to ${LAST_YEAR} (UTC)`);
        return z.NEVER;
      }
      return new Date(at).toISOString();
    })
    .openapi({ format: "date-time", example, description: `${description} (${INSTANT_RANGE})` });
}

const LOCAL = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * A school-local date and time `YYYY-MM-DDTHH:mm`, without an offset (the school's zone says when
 * it is), its date a school date. The document's format is `local-date-time`: no offset, so not an
 * RFC 3339 `date-time`.
 */
export function schoolDateTime(description: string, example = "2026-12-05T10:00") {
  return z
    .string()
    .superRefine((value, ctx) => {
      const parts = LOCAL.exec(value);
      if (!parts) addIssue(ctx, m`Expected a school-local date and time like 2026-12-05T10:00`);
      else checkDate(parts[1] ?? "", ctx);
    })
    .openapi({ format: "local-date-time", example, description: `${description} (${LOCAL_RANGE})` });
}
