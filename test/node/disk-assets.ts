/**
 * The Worker's static assets as the build leaves them in public/ (the PDF fonts, the data read
 * once per isolate), read from disk: the `AssetStore` of the app when it runs in Node.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AssetStore } from "../../src/deps";

const root = new URL("../../", import.meta.url).pathname;

export const diskAssets: AssetStore = {
  fetch: async (url) => {
    try {
      return new Response(await readFile(join(root, "public", new URL(url).pathname)));
    } catch {
      return new Response(null, { status: 404 });
    }
  },
};
