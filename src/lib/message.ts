/**
 * Messages: every text the service writes for people (problem titles and details, field messages,
 * SMS texts, file headers and names) is written once, in English, where it is raised, as a tagged
 * template that keeps its values apart:
 *
 *   throw notFound(m`Route ${name} does not run on ${date}`);
 *
 * Its key is the English template with numbered placeholders ("Route {0} does not run on {1}");
 * the one catalogue of each other language (src/lib/messages/es.json) maps that key to the
 * translation, placeholders in any order. The catalogue is not in the Worker's script: it is read
 * from the static assets once per isolate (src/lib/isolate-data.ts) and set here; until then (and
 * for a key it lacks) a message is written in English. A message is rendered in the current language
 * (src/lib/language.ts) when it is answered: the error path renders a problem's title, detail and
 * field messages; `JSON.stringify` renders a message inside a body. test/messages.test.ts fails on a
 * message without its Spanish and on a Spanish entry whose English no longer exists.
 *
 * Values are data (names, dates, ids, codes) and stay as they are; a value may be a message itself
 * (a label, a weekday's name, a list joined with "or"), rendered in the same language.
 */
import { z } from "zod";
import en from "zod/v4/locales/en.js";
import es from "zod/v4/locales/es.js";
import { currentLanguage, type Language } from "./language";

export type Value = string | number | boolean | null | undefined | Message;

/** The catalogue of each language but English, keyed by the English template (empty until set). */
const CATALOGUES: Record<Exclude<Language, "en">, Readonly<Record<string, string>>> = { es: {} };

/** Sets a language's catalogue (src/lib/isolate-data.ts reads it from the static assets). */
export function setCatalogue(language: Exclude<Language, "en">, catalogue: Readonly<Record<string, string>>): void {
  CATALOGUES[language] = catalogue;
}

const PLACEHOLDER = /\{(\d+)\}/g;

export class Message {
  #key: string | undefined;

  constructor(
    /** The English text around the values (a template's strings). */
    readonly parts: readonly string[],
    readonly values: readonly Value[],
  ) {}

  /** The catalogue key: the English with `{0}`, `{1}`... in place of the values. */
  get key(): string {
    this.#key ??= this.parts.reduce((key, part, i) => `${key}{${i - 1}}${part}`);
    return this.#key;
  }

  /** The text in `language` (the current language by default); English when a translation is missing. */
  render(language: Language = currentLanguage()): string {
    const show = (v: Value) => (v instanceof Message ? v.render(language) : String(v));
    const translated = language === "en" ? undefined : CATALOGUES[language][this.key];
    if (translated === undefined) {
      return this.parts.reduce((text, part, i) => `${text}${show(this.values[i - 1])}${part}`);
    }
    return translated.replace(PLACEHOLDER, (_, i: string) => show(this.values[Number(i)]));
  }

  /** English, for logs and for an error's `message`. */
  toString(): string {
    return this.render("en");
  }

  /** A message inside a JSON body is written in the current language. */
  toJSON(): string {
    return this.render();
  }
}

/** A message: `` m`Student ${id} not found` ``. */
export function m(strings: TemplateStringsArray, ...values: Value[]): Message {
  return new Message(strings, values);
}

/** How each language writes numbers (grouping): Mexico's Spanish, like the school's dates and levels. */
const NUMBER_LOCALES: Record<Language, string> = { en: "en", es: "es-MX" };

/** A large number written the way the language writes it (4,194,304); ids and codes stay plain values. */
class Amount extends Message {
  constructor(readonly amount: number) {
    super(["", ""], [String(amount)]);
  }
  override render(language: Language = currentLanguage()): string {
    return this.amount.toLocaleString(NUMBER_LOCALES[language]);
  }
}
export const amount = (n: number): Message => new Amount(n);

/** A text that is data, not a sentence of ours (a zod message already in the current language, a name). */
export const verbatim = (text: string): Message => new Message(["", ""], [text]);

/** Renders a message in `language`, by default the current one. */
export const render = (message: Message, language?: Language): string => message.render(language);

/** Messages (or values) one after the other with `separator` (punctuation: "; "), each in the language of the whole. */
export function joinMessages(items: readonly Value[], separator: string): Message {
  return new Message(["", ...items.slice(1).map(() => separator), ""], items);
}

/** "a", "a or b", "a, b or c": a list of codes or names, joined in the message's language. */
export function anyOf(items: readonly Value[]): Message {
  if (items.length <= 1) return new Message(["", ""], [items[0] ?? ""]);
  return m`${joined(items.slice(0, -1))} or ${items.at(-1)}`;
}

/** "a", "a and b", "a, b and c". */
export function allOf(items: readonly Value[]): Message {
  if (items.length <= 1) return new Message(["", ""], [items[0] ?? ""]);
  return m`${joined(items.slice(0, -1))} and ${items.at(-1)}`;
}

/** Items joined with commas (each rendered in the language of the message that shows them). */
const joined = (items: readonly Value[]): Message => joinMessages(items, ", ");

/**
 * A zod message of ours, rendered when an input is parsed (so in that request's language):
 * `.refine(check, { path: ["until"], ...zodMessage(m`Must not be before from`) })`,
 * `z.string().min(1, zodMessage(m`Required`))`.
 */
export const zodMessage = (message: Message) => ({ error: () => message.render() });

/** A custom issue of a zod refinement or transform, written in the language of the parse. */
export function addIssue(ctx: z.RefinementCtx, message: Message, path?: (string | number)[]) {
  ctx.addIssue({ code: "custom", message: message.render(), ...(path ? { path } : {}) });
}

// zod's own messages, per parse: the locale of the language current when an input is parsed (the
// request's), not a global switch. Only the es and en locales are in the bundle (src/lib/zod-locales.ts).
// Each locale is built on the first message it writes.
const ZOD_LOCALES = { en, es };
const zodLocales: Partial<Record<Language, ReturnType<typeof en>>> = {};
z.config({
  localeError: (issue) => {
    const language = currentLanguage();
    const ours = ourZodMessage(issue, language);
    if (ours) return ours.render(language);
    zodLocales[language] ??= ZOD_LOCALES[language]();
    return zodLocales[language].localeError(issue);
  },
});

type ZodIssue = z.core.$ZodRawIssue;

/**
 * Where zod's own words do not read as a person writes: a value that is missing is "Required"
 * (zod: "expected string, received undefined"), in every language; and in Spanish, where the locale
 * translates word for word ("se esperaba que texto tuviera >=1 caracteres"), the common cases are
 * our sentences. Anything else is zod's locale.
 */
function ourZodMessage(issue: ZodIssue, language: Language): Message | undefined {
  if (issue.code === "invalid_type" && issue.input === undefined) return m`Required`;
  if (language !== "es") return undefined;
  const n = (v: number | bigint) => Number(v);
  switch (issue.code) {
    case "invalid_type":
      if (issue.expected === "number" || issue.expected === "int") return m`Expected a number`;
      if (issue.expected === "string") return m`Expected text`;
      if (issue.expected === "boolean") return m`Expected true or false`;
      if (issue.expected === "array") return m`Expected a list`;
      if (issue.expected === "object") return m`Expected an object`;
      return undefined;
    case "too_small": {
      const min = n(issue.minimum);
      if (issue.origin === "string") {
        return min === 1 ? m`Must not be empty` : m`Must have at least ${min} characters`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return min === 1 ? m`Must have at least one item` : m`Must have at least ${min} items`;
      }
      if (issue.origin === "number" || issue.origin === "int") {
        return issue.inclusive ? m`Must be ${min} or more` : m`Must be more than ${min}`;
      }
      return undefined;
    }
    case "too_big": {
      const max = n(issue.maximum);
      if (issue.origin === "string") return m`Must have at most ${max} characters`;
      if (issue.origin === "array" || issue.origin === "set") return m`Must have at most ${max} items`;
      if (issue.origin === "number" || issue.origin === "int") {
        return issue.inclusive ? m`Must be ${max} or less` : m`Must be less than ${max}`;
      }
      return undefined;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? m`Must be ${JSON.stringify(issue.values[0])}`
        : m`Must be one of ${anyOf(issue.values.map((v: unknown) => JSON.stringify(v)))}`;
    default:
      return undefined;
  }
}
