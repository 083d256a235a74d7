/**
 * What a school is made of, as inputs: its levels (the four the product knows, stored as a JSON
 * array in canonical order), an IANA time zone (the runtime's own list, plus "UTC"), contact
 * details and the key of its logo.
 */
import { z } from "@hono/zod-openapi";
import { Schools, schools } from "../../db/schema/core";
import type { SchoolCtx } from "../../lib/context";
import { unprocessable } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { LEVELS, type Level } from "../../lib/levels";
import { type Message, m, zodMessage } from "../../lib/message";
import { isTimeZone as computable } from "../../lib/zoned-time";

export { LEVELS, type Level };

export const LEVEL_LABELS: Record<Level, Message> = {
  preschool: m`Preschool`,
  elementary: m`Elementary school`,
  middle: m`Middle school`,
  high: m`High school`,
};

export const LevelSchema = z.enum(LEVELS).openapi({ description: "A school level", example: "elementary" });

export const LevelsInput = z
  .array(LevelSchema)
  .min(1)
  .max(LEVELS.length)
  .refine((v) => new Set(v).size === v.length, zodMessage(m`Each level at most once`))
  .openapi({
    uniqueItems: true,
    description: "The levels the school offers (at least one)",
    example: ["elementary", "middle"],
  });

/** The stored form: the levels in canonical order, whatever order the client sent. */
export const storeLevels = (levels: readonly Level[]): Level[] => LEVELS.filter((l) => levels.includes(l));

/**
 * The levels a stored value holds: the column's array, or its JSON text as a raw SQL read gives it
 * (unknown or malformed entries are dropped, never thrown).
 */
export function readLevels(stored: unknown): Level[] {
  const parsed = parseJson(z.array(z.unknown()), stored, []);
  return LEVELS.filter((l) => parsed.includes(l));
}

export const LevelInfo = z
  .object({
    key: LevelSchema,
    label: z.string().openapi({ example: "Elementary school", description: "The level's name" }),
  })
  .openapi("SchoolLevel");

/** The levels with their names, in the request's language. */
export const levelInfo = (levels: readonly Level[]) =>
  levels.map((key) => ({ key, label: LEVEL_LABELS[key].render() }));

/**
 * Current IANA names that V8's list (CLDR's identifiers) still spells the old way (it has
 * Asia/Calcutta, not Asia/Kolkata): the zones of IANA's zone.tab (2025b) missing from Node 20's
 * list. Accepted when the runtime can compute with them.
 */
const RENAMED = [
  "Africa/Asmara",
  "America/Argentina/Buenos_Aires",
  "America/Argentina/Catamarca",
  "America/Argentina/Cordoba",
  "America/Argentina/Jujuy",
  "America/Argentina/Mendoza",
  "America/Atikokan",
  "America/Indiana/Indianapolis",
  "America/Kentucky/Louisville",
  "America/Nuuk",
  "Asia/Ho_Chi_Minh",
  "Asia/Kathmandu",
  "Asia/Kolkata",
  "Asia/Yangon",
  "Atlantic/Faroe",
  "Europe/Kyiv",
  "Pacific/Chuuk",
  "Pacific/Kanton",
  "Pacific/Pohnpei",
];

let zones: Set<string> | undefined;
/**
 * The runtime's time zones (`Intl.supportedValuesOf`), "UTC", and the renamed IANA zones above;
 * built on first use rather than at start-up. Exact spelling: `america/new_york` is refused.
 */
const isTimeZone = (tz: string) => {
  zones ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC", ...RENAMED.filter(computable)]);
  return zones.has(tz);
};

export const TimeZone = z
  .string()
  .max(64)
  .refine(isTimeZone, zodMessage(m`Expected an IANA time zone like America/Mexico_City (or UTC)`))
  .openapi({ example: "America/Mexico_City", description: "IANA time zone: today, dismissal and cut-offs use it" });

export const Email = z.email().max(254).openapi({ example: "office@school.example" });

/** `{schoolId}/logo/{file}`: the file one segment of letters, digits, `.`, `_`, `-`. */
const LOGO_KEY = /^([1-9]\d{0,9})\/logo\/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const LogoKey = z
  .string()
  .max(120)
  .regex(LOGO_KEY, zodMessage(m`Expected {schoolId}/logo/{file name}`))
  .openapi({ example: "1/logo/logo-2f1c.png", description: "Object key of the logo, under `{schoolId}/logo/`" });

/** Whether a logo key lies under this school's prefix. */
export const logoOf = (key: string, schoolId: number) => LOGO_KEY.exec(key)?.[1] === String(schoolId);

/** The image types a logo may be. */
export const LOGO_CONTENT_TYPES = ["image/png", "image/jpeg", "image/webp", "image/svg+xml"] as const;
export type LogoType = (typeof LOGO_CONTENT_TYPES)[number];

/** The file extension each logo type is stored with. */
export const LOGO_TYPES: Record<LogoType, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/svg+xml": "svg",
};

/** The refusal of a level the school does not offer (API 422s and import row errors say the same). */
export const notOfferedMessage = (level: Level, offered: readonly Level[]) =>
  offered.length
    ? m`The school does not offer the level ${level}; it offers ${offered.join(", ")}`
    : m`The school does not offer the level ${level}; it offers none yet`;

/** The level is one the current school offers, else 422 (one indexed read of the school). */
export async function assertOffered(ctx: SchoolCtx, level: Level) {
  const row = await Schools.find(ctx, ctx.schoolId, { levels: schools.levels });
  const levels = readLevels(row?.levels ?? []);
  if (!levels.includes(level)) throw unprocessable(notOfferedMessage(level, levels));
}
