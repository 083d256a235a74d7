/**
 * pako's `deflate`, the one function pdf-lib calls (content streams, embedded fonts and images), by
 * fflate, which the Worker already carries for .xlsx files. wrangler.toml's [alias] (and
 * vitest.config.ts) puts this module in place of pako: one deflate in the bundle, not two (pako is
 * ~15 KiB gzip). Both write the same zlib format.
 */
import { zlibSync } from "fflate";

export default { deflate: (data: Uint8Array) => zlibSync(data) };
