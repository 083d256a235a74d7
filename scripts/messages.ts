/**
 * The messages of the source and the catalogues that translate them (src/lib/message.ts), read with
 * the TypeScript 5 parser: every `` m`...` `` template in src, its key (the English with `{0}`,
 * `{1}`... in place of its values, exactly as `Message.key` builds it at run time), and where it is.
 *
 *   npm run -s messages            # what is missing or stale in each catalogue (exit 1 if anything)
 *   npm run -s messages -- --write # adds each missing key to the catalogue with an empty translation, sorted
 *
 * test/node/messages.test.ts holds the catalogues to the source: a message without its Spanish, a
 * Spanish entry whose English no longer exists, a translation that drops or invents a placeholder.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "school-api-typegen/typescript";

export const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

/** Each language but English, and its catalogue file. */
export const CATALOGUES = { es: join(SRC, "lib/messages/es.json") } as const;
export type CatalogueLanguage = keyof typeof CATALOGUES;

export interface Found {
  key: string;
  file: string;
  line: number;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** A template's key: its cooked strings joined by numbered placeholders (as `Message.key`). */
function keyOf(template: ts.TemplateLiteral): string {
  if (ts.isNoSubstitutionTemplateLiteral(template)) return template.text;
  return template.templateSpans.reduce((key, span, i) => `${key}{${i}}${span.literal.text}`, template.head.text);
}

/** Whether a key needs a translation: text of its own, not only values and punctuation. */
export const translatable = (key: string) => /\p{L}/u.test(key.replace(/\{\d+\}/g, ""));

/** Every message template of src (the tag `m`), with where it is written. */
export function sourceMessages(): Found[] {
  const found: Found[] = [];
  for (const file of walk(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === "m") {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push({ key: keyOf(node.template), file: relative(ROOT, file), line });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

export function readCatalogue(language: CatalogueLanguage): Record<string, string> {
  return JSON.parse(readFileSync(CATALOGUES[language], "utf8"));
}

const placeholders = (text: string) => [...new Set(text.match(/\{\d+\}/g) ?? [])].sort();

export interface Report {
  /** Messages of the source without a translation (each place it is written). */
  missing: Found[];
  /** Catalogue keys no message of the source has. */
  stale: string[];
  /** Translations whose placeholders are not the key's. */
  placeholders: { key: string; translation: string }[];
  /** Keys with an empty translation. */
  empty: string[];
  /** Whether the catalogue's keys are in order (merges stay small). */
  sorted: boolean;
}

/** How a catalogue stands against the source. */
export function check(language: CatalogueLanguage, found = sourceMessages()): Report {
  const catalogue = readCatalogue(language);
  const keys = new Set(found.map((f) => f.key).filter(translatable));
  const entries = Object.entries(catalogue);
  return {
    missing: found.filter((f) => translatable(f.key) && !Object.hasOwn(catalogue, f.key)),
    stale: Object.keys(catalogue).filter((k) => !keys.has(k)),
    placeholders: entries
      .filter(([key, translation]) => placeholders(key).join() !== placeholders(translation).join())
      .map(([key, translation]) => ({ key, translation })),
    empty: entries.filter(([, translation]) => translation.trim() === "").map(([key]) => key),
    sorted: Object.keys(catalogue).join("\n") === Object.keys(catalogue).sort().join("\n"),
  };
}

/** The catalogue as its file keeps it: keys sorted, two-space JSON, a final newline. */
export function writeCatalogue(language: CatalogueLanguage, catalogue: Record<string, string>) {
  const sorted = Object.fromEntries(Object.entries(catalogue).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(CATALOGUES[language], `${JSON.stringify(sorted, null, 2)}\n`);
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const found = sourceMessages();
  let failed = false;
  for (const language of Object.keys(CATALOGUES) as CatalogueLanguage[]) {
    const r = check(language, found);
    console.log(`${language}: ${found.length} message templates, ${r.missing.length} missing, ${r.stale.length} stale`);
    for (const f of r.missing) console.log(`  missing  ${f.file}:${f.line}  ${JSON.stringify(f.key)}`);
    for (const k of r.stale) console.log(`  stale    ${JSON.stringify(k)}`);
    for (const p of r.placeholders)
      console.log(`  placeholders differ  ${JSON.stringify(p.key)} -> ${JSON.stringify(p.translation)}`);
    for (const k of r.empty) console.log(`  empty    ${JSON.stringify(k)}`);
    if (process.argv.includes("--write")) {
      const catalogue = readCatalogue(language);
      for (const f of r.missing) catalogue[f.key] ??= "";
      writeCatalogue(language, catalogue);
    }
    failed ||= r.missing.length + r.stale.length + r.placeholders.length + r.empty.length > 0 || !r.sorted;
  }
  process.exitCode = failed ? 1 : 0;
}
