/**
 * Text typed by people (names, descriptions) and shown to other people. Control characters
 * (C0, DEL, C1: a NUL truncates C strings and LIKE patterns, a newline breaks a one-line label) and
 * bidirectional formatting characters (a right-to-left override makes `gpj.exe` read `exe.jpg`)
 * have no place in it.
 */
import { z } from "@hono/zod-openapi";
import { m, zodMessage } from "./message";

/** C0 controls, DEL, C1 controls. */
const CONTROL = "\\u0000-\\u001f\\u007f-\\u009f";
/** Bidi embeddings and overrides (LRE..RLO), isolates (LRI..PDI), LRM, RLM and ALM. */
const BIDI = "\\u202a-\\u202e\\u2066-\\u2069\\u200e\\u200f\\u061c";

/** Matches a string free of control and bidi formatting characters (also an OpenAPI `pattern`). */
export const SAFE_TEXT = new RegExp(`^[^${CONTROL}${BIDI}]*$`);
const UNSAFE = new RegExp(`[${CONTROL}${BIDI}]`);

/** zod's refusal of unsafe text (`.regex(SAFE_TEXT, UNSAFE_TEXT)`), in the language of the parse. */
export const UNSAFE_TEXT = zodMessage(m`Must not contain control characters or bidirectional formatting characters`);

/** The first control or bidi formatting character of `value`, as `U+202E at 4`, or undefined. */
export function unsafeCharacter(value: string): string | undefined {
  const match = UNSAFE.exec(value);
  if (!match) return undefined;
  const code = match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return `U+${code} at ${match.index}`;
}

/**
 * Human text: trimmed, NFC-normalised, at most `max` characters (at least `min`, default 1), with no control or bidi
 * formatting characters.
 * @example
 * name: text({ max: 100 }).openapi({ example: "2026-2027" }),
 * description: text({ max: 500, min: 0 }).default(""),
 */
export function text({ max, min = 1 }: { max: number; min?: number }) {
  return (
    z
      .string()
      .trim()
      // One spelling per letter: "é" typed as e + combining accent is stored as "é" (search folds it).
      .normalize("NFC")
      .min(min)
      .max(max)
      .regex(SAFE_TEXT, {
        error: (issue) =>
          m`Must not contain control characters or bidirectional formatting characters (${unsafeCharacter(String(issue.input))})`.render(),
      })
      .openapi({ description: `Text of ${min} to ${max} characters, without control or bidi formatting characters` })
  );
}

/** C0 controls but tab, line feed and carriage return; DEL; C1; bidi formatting. */
const PARAGRAPH_REFUSED = `\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI}`;
const PARAGRAPHS = new RegExp(`^[^${PARAGRAPH_REFUSED}]*$`);

/**
 * Human text of several lines (a description, a reason): `text` with line breaks and tabs allowed.
 * @example description: paragraphs({ max: 4000 }).optional(),
 */
export function paragraphs({ max, min = 1 }: { max: number; min?: number }) {
  return z
    .string()
    .trim()
    .normalize("NFC")
    .min(min)
    .max(max)
    .regex(
      PARAGRAPHS,
      zodMessage(
        m`Must not contain control characters or bidirectional formatting characters (line breaks and tabs are fine)`,
      ),
    )
    .openapi({ description: `Text of ${min} to ${max} characters; line breaks allowed` });
}

let collator: Intl.Collator | undefined;

/**
 * Orders people's text as `a.localeCompare(b)` does (the runtime's locale), through one collator
 * built on first use: `localeCompare` sets one up per call, which a sort of a few hundred names
 * pays thousands of times.
 */
export const compareText = (a: string, b: string): number => {
  collator ??= new Intl.Collator();
  return collator.compare(a, b);
};
