/**
 * The caller's language for messages that explain a business decision (an exit permission's failed
 * rules): the first of the languages we speak in the request's `Accept-Language` header, else the
 * user's own `language`, else English. Validation and other problems stay English for now.
 */
import type { Ctx } from "./context";
import { currentRequest } from "./metrics";

export const LANGUAGES = ["es", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

const isLanguage = (v: string): v is Language => LANGUAGES.some((l) => l === v);

/** The first supported language of an `Accept-Language` value, by its q-values ("es-MX,en;q=0.5" -> es). */
export function fromAcceptLanguage(header: string | undefined | null): Language | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(",")
    .map((part, i) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim().toLowerCase().split("-")[0] ?? "", weight: Number.isFinite(weight) ? weight : 0, i };
    })
    .filter((l) => l.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.i - b.i);
  return ranked.map((l) => l.tag).find(isLanguage);
}

/**
 * The caller's language: the request's header first, then `userLanguage` (the user's stored
 * `language`, when the caller read it), then "en". Outside a request (a job) the header is absent.
 */
export function languageOf(_ctx: Ctx, userLanguage?: string | null): Language {
  const header = fromAcceptLanguage(currentRequest()?.acceptLanguage);
  if (header) return header;
  const stored = userLanguage?.toLowerCase().split("-")[0];
  return stored && isLanguage(stored) ? stored : "en";
}
