/**
 * Data the Worker reads once per isolate from its static assets instead of carrying it in its
 * script: the Spanish catalogue of messages (src/lib/messages/es.json) and libphonenumber-js's
 * "min" metadata. Together 163 KiB raw, ~41 KiB gzip that every isolate would otherwise compile
 * and evaluate at start-up, used only by a Spanish answer or a phone number (docs/decisions.md).
 * scripts/docs-assets.mjs copies both into public/data/ (with the fonts); they deploy with the
 * Worker's version, so a script and its data never disagree.
 *
 * Everything that runs a request or a job awaits `loadIsolateData` before its work: the app's
 * dependencies middleware (every request, the tests' included), and the Worker's cron, queue and
 * Durable Object handlers through their dependencies (src/index.ts). The first caller of an isolate
 * fetches both files; the others await the same promise; a failure is forgotten, so the next
 * request tries again.
 */
import { z } from "zod";
import { ConfigError } from "../config";
import type { AssetStore } from "../deps";
import { setCatalogue } from "./message";
import { PhoneMetadata, setPhoneMetadata } from "./phone";

/** Where the files are among the static assets (scripts/docs-assets.mjs copies them there). */
export const DATA_PATH = "/data/";
export const DATA_FILES = { catalogueEs: "messages.es.json", phoneMetadata: "phone-metadata.min.json" } as const;

const Catalogue = z.record(z.string(), z.string());

/**
 * `load` run once per isolate: its callers await the same promise, resolved at once after it
 * succeeded; a failure is forgotten, so the next caller tries again. (The PDF writer's Unicode data
 * loads through it too, src/lib/pdf-lib/binary-trie.ts.)
 */
export function oncePerIsolate(load: (assets: AssetStore | undefined) => Promise<void>) {
  let loaded = false;
  let loading: Promise<void> | undefined;
  return (assets: AssetStore | undefined): Promise<void> => {
    if (loaded) return Promise.resolve();
    loading ??= load(assets).then(
      () => {
        loaded = true;
      },
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
}

/** A file of the static assets (under `/data/` and the like), or a configuration error naming it. */
export async function assetFile(assets: AssetStore | undefined, path: string): Promise<Response> {
  if (!assets) throw new ConfigError("invalid configuration: no ASSETS binding (wrangler.toml [assets])", ["ASSETS"]);
  const res = await assets.fetch(`https://assets.invalid${path}`);
  if (!res.ok) {
    throw new ConfigError(
      `invalid configuration: ${path} is not among the static assets (${res.status}); the build copies it (scripts/docs-assets.mjs)`,
      ["ASSETS"],
    );
  }
  return res;
}

const read = async <T>(assets: AssetStore | undefined, file: string, schema: z.ZodType<T>): Promise<T> =>
  schema.parse(await (await assetFile(assets, `${DATA_PATH}${file}`)).json());

/** Reads the isolate's data from the static assets, once; resolved at once after the first time. */
export const loadIsolateData = oncePerIsolate(async (assets) => {
  const [catalogue, phone] = await Promise.all([
    read(assets, DATA_FILES.catalogueEs, Catalogue),
    read(assets, DATA_FILES.phoneMetadata, PhoneMetadata),
  ]);
  setCatalogue("es", catalogue);
  setPhoneMetadata(phone);
});
