/**
 * Every message exists in every language (scripts/messages.ts reads them from the TypeScript AST of
 * src): a message without its Spanish fails naming where it is written and its key; a Spanish entry
 * whose English no longer exists fails naming it; so does a translation that loses or invents a
 * placeholder. `npm run -s messages -- --write` adds the missing keys to fill in.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CATALOGUES, type CatalogueLanguage, check, sourceMessages, translatable } from "../../scripts/messages";
import { loadIsolateData } from "../../src/lib/isolate-data";
import { Message, m } from "../../src/lib/message";
import { diskAssets } from "./disk-assets";

// The catalogue as the Worker reads it: from the static assets (public/data/, filled from the source's).
beforeAll(() => loadIsolateData(diskAssets));

const found = sourceMessages();

describe.each(Object.keys(CATALOGUES) as CatalogueLanguage[])("the %s catalogue", (language) => {
  const report = check(language, found);

  it("translates every message of the source", () => {
    expect(
      report.missing.map((f) => `${f.file}:${f.line}  ${JSON.stringify(f.key)}`),
      `Messages without their ${language}: add each to src/lib/messages/${language}.json (npm run -s messages -- --write adds them empty)`,
    ).toEqual([]);
  });

  it("has no entry whose English no longer exists", () => {
    expect(report.stale, `Remove these from src/lib/messages/${language}.json, or fix their English key`).toEqual([]);
  });

  it("keeps each message's placeholders, and no empty translation", () => {
    expect(report.placeholders).toEqual([]);
    expect(report.empty).toEqual([]);
  });

  it("keeps its keys sorted (merges of other branches' messages stay small)", () => {
    expect(report.sorted).toBe(true);
  });
});

describe("reading the source", () => {
  it("finds the messages, with keys as Message builds them at run time", () => {
    // A walk that found nothing would pass every check above.
    expect(found.length).toBeGreaterThan(500);
    const route = "3";
    const sample = m`Route ${route} does not run on ${"2026-11-28"}`;
    expect(found.map((f) => f.key)).toContain(sample.key);
    expect(sample.key).toBe("Route {0} does not run on {1}");
    expect(translatable("{0} ({1})")).toBe(false);
    expect(translatable("route-{0}.pdf")).toBe(true);
  });

  it("renders a translation with its values in any order, and English when one is missing", () => {
    const id = 42;
    expect(m`Student ${id} not found`.render("es")).toBe("No se encontró al alumno 42");
    expect(m`Student ${id} not found`.render("en")).toBe("Student 42 not found");
    expect(new Message(["No such key ", ""], [1]).render("es")).toBe("No such key 1");
  });
});
