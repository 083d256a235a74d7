/**
 * @pdf-lib/upng left out: wrangler.toml's [alias] (and vitest.config.ts) puts this module in place
 * of it. pdf-lib decodes PNGs with it for `embedPng`, which our PDFs do not call: src/lib/pdf.ts
 * embeds logos as src/lib/pdf-image.ts reads them, without decoding a PNG that has no alpha
 * channel (UPNG is ~9 KiB of the Worker's gzip size).
 */
const unavailable = (): never => {
  throw new Error("PNG decoding is not bundled: embed images through src/lib/pdf.ts");
};

export default { decode: unavailable, toRGBA8: unavailable };
