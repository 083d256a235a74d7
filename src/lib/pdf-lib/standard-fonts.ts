/**
 * @pdf-lib/standard-fonts without the fonts. wrangler.toml's [alias] (and vitest.config.ts, so the
 * tests run the same code) puts this module in place of the package. pdf-lib imports the package for
 * the 14 standard PDF fonts (Helvetica, Times, Courier, ...): their metrics and encodings are ~130 KiB
 * of compressed data (~100 KiB of the Worker's gzip size), and the encodings are decompressed when
 * the module loads. Our PDFs draw with the fonts they embed (src/lib/pdf.ts), never with a standard
 * font, which could only draw Latin-1 anyway; asking pdf-lib for one says so.
 */

/** The standard fonts' names, as pdf-lib reads them (its `StandardFonts` are these values). */
export const FontNames = {
  Courier: "Courier",
  CourierBold: "Courier-Bold",
  CourierOblique: "Courier-Oblique",
  CourierBoldOblique: "Courier-BoldOblique",
  Helvetica: "Helvetica",
  HelveticaBold: "Helvetica-Bold",
  HelveticaOblique: "Helvetica-Oblique",
  HelveticaBoldOblique: "Helvetica-BoldOblique",
  TimesRoman: "Times-Roman",
  TimesRomanBold: "Times-Bold",
  TimesRomanItalic: "Times-Italic",
  TimesRomanBoldItalic: "Times-BoldItalic",
  Symbol: "Symbol",
  ZapfDingbats: "ZapfDingbats",
} as const;

export const Font = {
  load(name: string): never {
    throw new Error(`the standard PDF font ${name} is not bundled: embed a font (src/lib/pdf.ts)`);
  },
};

export const Encodings = {};
