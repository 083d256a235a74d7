/**
 * The address record and its input fields, shared by the address resource and by the school's
 * record (which embeds its address). No routes here: importing it costs a few schemas.
 */
import { z } from "@hono/zod-openapi";
import type { addresses } from "../../db/schema/address";
import { m, zodMessage } from "../../lib/message";
import { RecordBase, timestamps } from "../../lib/resource";
import { text } from "../../lib/text";

/** ISO 3166-1 alpha-2 codes officially assigned (249), two letters each. */
const ISO_3166_1 =
  "ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZCACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZDEDJDKDMDODZECEEEGEHERESETFIFJFKFMFOFRGAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHMHNHRHTHUIDIEILIMINIOIQIRISITJEJMJOJPKEKGKHKIKMKNKPKRKWKYKZLALBLCLILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZNANCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURWSASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZUAUGUMUSUYUZVAVCVEVGVIVNVUWFWSYEYTZAZMZW";

let countries: Set<string> | undefined;
const isCountry = (code: string) => {
  countries ??= new Set(ISO_3166_1.match(/../g));
  return countries.has(code);
};

export const Country = z
  .string()
  .regex(/^[A-Z]{2}$/, zodMessage(m`Expected an ISO 3166-1 alpha-2 country code in capitals, like MX`))
  .refine(isCountry, zodMessage(m`Not an ISO 3166-1 alpha-2 country code`))
  .openapi({ example: "MX", description: "ISO 3166-1 alpha-2 country code" });

const optionalText = (max: number, example: string) => text({ max }).nullable().optional().openapi({ example });

/** The address fields a client sends (all of them on create; any of them on update). */
export const addressFields = {
  street: text({ max: 200 }).openapi({ example: "Avenida Insurgentes Sur" }),
  number: optionalText(20, "1602"),
  neighborhood: optionalText(100, "Credito Constructor"),
  city: text({ max: 100 }).openapi({ example: "Ciudad de Mexico" }),
  state: optionalText(100, "CDMX"),
  postalCode: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9 -]{0,14}$/,
      zodMessage(m`Expected a postal code of letters, digits, spaces and dashes`),
    )
    .nullable()
    .optional()
    .openapi({ example: "03940" }),
  country: Country,
  latitude: z.number().min(-90).max(90).nullable().optional().openapi({ example: 19.3638 }),
  longitude: z.number().min(-180).max(180).nullable().optional().openapi({ example: -99.1801 }),
};

export const AddressRecord = RecordBase.extend({
  street: z.string(),
  number: z.string().nullable(),
  neighborhood: z.string().nullable(),
  city: z.string(),
  state: z.string().nullable(),
  postalCode: z.string().nullable(),
  country: z.string().openapi({ example: "MX" }),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
}).openapi("Address", { description: "A postal address of the school (its own, a trusted address, a stop)" });

export type Address = z.infer<typeof AddressRecord>;

export const toAddress = (row: Omit<typeof addresses.$inferSelect, "citySearch">): Address => ({
  ...timestamps(row),
  street: row.street,
  number: row.number,
  neighborhood: row.neighborhood,
  city: row.city,
  state: row.state,
  postalCode: row.postalCode,
  country: row.country,
  latitude: row.latitude,
  longitude: row.longitude,
});
