/**
 * The language a request is answered in, chosen once per request (docs/architecture.md, "Messages
 * in two languages"):
 *
 * 1. the request's `Accept-Language` (q-values; es or en), set by the access log;
 * 2. else the signed-in user's own language (the access token's `lng` claim), then the current
 *    school's language (the token's `sl` claim per school; a school the token does not list is read
 *    with its lookup), set by `authorize`: no D1 round trip. A token minted before the claims
 *    existed has neither, and falls through;
 * 3. else English.
 *
 * Outside a request (a queue consumer, a job) the language is the one a caller put in scope with
 * `withLanguage` (an import is reported in the language of whoever started it), else English.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { currentRequest } from "./metrics";

export const LANGUAGES = ["es", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

export const isLanguage = (v: unknown): v is Language => LANGUAGES.some((l) => l === v);

/** A stored language ("es", "es-MX", "EN") as one we speak, or undefined. */
export function languageFrom(value: string | null | undefined): Language | undefined {
  const primary = value?.trim().toLowerCase().split("-")[0];
  return isLanguage(primary) ? primary : undefined;
}

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
 * The language of a request whose caller is known: its header's, else the user's, else the school's
 * (`authorize` calls it once, with what the token says).
 */
export function chooseLanguage(
  header: Language | undefined,
  user: string | null | undefined,
  school: string | null | undefined,
): Language | undefined {
  return header ?? languageFrom(user) ?? languageFrom(school);
}

const scope = new AsyncLocalStorage<Language>();

/** Runs `fn` with `language` as the current language (a consumer, a job, a text for someone else). */
export function withLanguage<T>(language: Language, fn: () => T): T {
  return scope.run(language, fn);
}

/** The language messages are written in right now: see the top of this file. */
export function currentLanguage(): Language {
  const scoped = scope.getStore();
  if (scoped) return scoped;
  const request = currentRequest();
  return request?.language ?? "en";
}

/**
 * The language of a text for the caller themself when the request's caller is not signed in (a
 * sign-in code): the request's header, else `user`'s stored language, else the school's, else English.
 */
export function languageFor(user?: string | null, school?: string | null): Language {
  return chooseLanguage(scope.getStore() ?? currentRequest()?.language, user, school) ?? "en";
}

/**
 * The language of the current request, or of `userLanguage` when the request names none (kept for
 * code written before `currentLanguage`, which already counts the user's and the school's).
 */
export function languageOf(_ctx: unknown, userLanguage?: string | null): Language {
  return chooseLanguage(scope.getStore() ?? currentRequest()?.language, userLanguage, undefined) ?? "en";
}

/** The current school's language as `authorize` found it (null outside a school-scoped request). */
export function currentSchoolLanguage(): Language | null {
  return currentRequest()?.schoolLanguage ?? null;
}
