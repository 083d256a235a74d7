/**
 * Phone numbers: parsed and normalised to E.164 with libphonenumber-js (its "min" metadata, the
 * library's smallest that still knows every country's number lengths), never by a regex.
 *
 * - Input may have spaces, dashes, dots and parentheses. Without a leading `+`, at least 11 digits
 *   are read as an international number (country code first): `5215512345678` is
 *   `+52 1 55 1234 5678`. Fewer digits without `+` (`555-0100`, `5550000002`) are refused: they are
 *   a national number whose country we would have to guess.
 * - Mexico's old mobile prefix "1" after +52 (abolished in 2019, still in many address books) is
 *   dropped, so `+52 1 55 1234 5678` and `+52 55 1234 5678` are one number and one user.
 * - A number must be *possible* for its country (a known country code and a length the country
 *   uses). Stricter validity (ranges actually assigned) is not asked: the fictional +1 555-01xx
 *   numbers used in demos are possible but not valid, and an SMS provider rejects a dead number
 *   anyway.
 *
 * The metadata (83 KiB) is not in the Worker's script: it is read from the static assets once per
 * isolate (src/lib/isolate-data.ts) and set here before any request or job runs.
 */
import { z } from "@hono/zod-openapi";
import { type MetadataJson, parsePhoneNumberFromString } from "libphonenumber-js/core";
import { m } from "./message";

/** libphonenumber-js's metadata as its JSON file holds it (the fields the parser reads checked). */
export const PhoneMetadata = z.custom<MetadataJson>(
  (value) =>
    z
      .object({
        version: z.number(),
        country_calling_codes: z.record(z.string(), z.array(z.string())),
        countries: z.record(z.string(), z.array(z.unknown())),
      })
      .safeParse(value).success,
  { message: "not libphonenumber-js metadata" },
);

let metadata: MetadataJson | undefined;

/** Sets the metadata every parse uses (src/lib/isolate-data.ts reads it from the static assets). */
export function setPhoneMetadata(json: MetadataJson): void {
  metadata = json;
}

/** The E.164 form of a phone number, or null when it is not a possible number. */
export function normalizePhone(input: string): string | null {
  const raw = input.trim();
  if (raw.length === 0 || raw.length > 32 || !/^\+?[\d\s().-]+$/.test(raw)) return null;
  const international = raw.startsWith("+");
  if (!international && raw.replace(/\D/g, "").length < 11) return null;
  if (!metadata) throw new Error("phone metadata not loaded: await loadIsolateData (src/lib/isolate-data.ts) first");
  const parsed = parsePhoneNumberFromString(international ? raw : `+${raw}`, metadata);
  if (!parsed) return null;
  let national: string = parsed.nationalNumber;
  if (parsed.countryCallingCode === "52" && national.length === 11 && national.startsWith("1")) {
    national = national.slice(1);
  }
  const number = parsePhoneNumberFromString(`+${parsed.countryCallingCode}${national}`, metadata);
  return number?.isPossible() ? number.number : null;
}

/** A phone number in a request: any common written form in, E.164 out (400 when not a possible number). */
export const Phone = z
  .string()
  .max(32)
  .transform((value, ctx) => {
    const phone = normalizePhone(value);
    if (phone === null) {
      ctx.addIssue({
        code: "custom",
        message: m`Expected a phone number with its country code, like +15550000001 or +52 55 1234 5678`.render(),
      });
      return z.NEVER;
    }
    return phone;
  })
  .openapi({
    type: "string",
    example: "+15550000001",
    description: "A phone number with its country code; stored in E.164 (+52 1 55… and +52 55… are one number)",
  });
