/**
 * unicode-properties' data (the Unicode category, script and combining class of every code point,
 * which fontkit's shapers read) without its 16 KiB base64 copy in the Worker's script: wrangler.toml's
 * [alias] (and vitest.config.ts) puts this module in place of `#binary-trie`, the package's own
 * import of its data. The trie's 12 KiB of binary (incompressible: ~12 KiB of the gzip size) is a
 * static asset instead (scripts/docs-assets.mjs copies the package's `data.trie`), read with the
 * first PDF of an isolate by `loadPdfData`, before the PDF writer's modules are evaluated:
 * unicode-properties builds its trie when it is evaluated, and the writer is loaded by a dynamic
 * `import()` (src/modules/route-availability/list-routes.ts).
 */
import { assetFile, oncePerIsolate } from "../isolate-data";

/** Where the trie is among the static assets. */
export const TRIE_PATH = "/data/unicode-properties.trie";

let bytes: Uint8Array | undefined;

/** The trie, read from the static assets once per isolate; resolved at once after the first time. */
export const loadPdfData = oncePerIsolate(async (assets) => {
  bytes = new Uint8Array(await (await assetFile(assets, TRIE_PATH)).arrayBuffer());
});

/** What unicode-properties asks for when it is evaluated. */
export function getBinaryTrie(): Uint8Array {
  if (!bytes) throw new Error("unicode-properties' trie not loaded: await loadPdfData before the PDF writer loads");
  return bytes;
}
