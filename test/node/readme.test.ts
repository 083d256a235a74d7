/**
 * The README tells the truth: its sample outputs are what the project prints today (the migrations
 * `npm run dev` applies to a new database, the demo data's statements and its day, as scripts/dev.ts
 * says them; the health report's and `npm run deploy:libsql`'s migration level), its demo data names
 * no fixed day but the seed's anchor (the demo moves to today: src/db/demo-today.ts), and its commands that
 * call the dev server follow its port: `${API_URL:-http://localhost:8787}` (as `npm run token`
 * does), never a fixed `localhost:8787`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../bench/bundle";
import { demoDayLine, demoLine, migrationsLine } from "../../scripts/dev";
import { DEMO_ANCHOR } from "../../src/db/demo-today";
import { scriptStatements } from "../../src/db/sql-script";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const migrations = readdirSync(join(ROOT, "migrations"))
  .filter((f) => f.endsWith(".sql"))
  .sort();
const last = migrations.at(-1) ?? "";
/** The shell's "API_URL, else the dev server's usual address" (a shell expansion, not a template). */
const API_URL_OR_DEFAULT = ["$", "{API_URL:-http://localhost:8787}"].join("");
const statements = scriptStatements(readFileSync(join(ROOT, "seed/demo.sql"), "utf8")).length;

/** The README's fenced code blocks of a language, each as its text. */
const blocks = (language: string) =>
  [...readme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, "gm"))].map((m) => m[1] ?? "");

describe("the README's sample outputs", () => {
  it("npm run dev on a new database: every migration applied, the demo data's statements", () => {
    expect(migrations.length).toBeGreaterThan(50);
    expect(readme).toContain(migrationsLine(migrations.length));
    expect(readme).toContain(demoLine(statements));
  });

  it("npm run dev's demo day: the line scripts/dev.ts prints, a weekday that is the date's", () => {
    const shown = /^Demo day: \w+ (\d{4}-\d{2}-\d{2}) .*$/m.exec(readme);
    expect(shown).not.toBeNull();
    const day = shown?.[1] ?? "";
    const days = [1, 2].map((school) => ({ school, timeZone: "UTC", today: day, day, weeks: 0 }));
    expect(shown?.[0]).toBe(demoDayLine(days, days));
  });

  it("the demo data names no fixed day but the seed's anchor: the demo lives in the current week", () => {
    const start = readme.indexOf("## Demo data");
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    expect(section).toContain(`Wednesday 25 November 2026`);
    expect(DEMO_ANCHOR).toBe("2026-11-25");
    const rest = section.replace("Wednesday 25 November 2026", "");
    const months = "January|February|March|April|May|June|July|August|September|October|November|December";
    expect(rest.match(new RegExp(`\\b\\d{1,2} (${months})\\b|\\b(${months}) \\d{1,2}\\b`, "g")) ?? []).toEqual([]);
    expect(rest.match(/\b20\d\d-\d\d-\d\d\b/g) ?? []).toEqual([]);
  });

  it("the health report and deploy:libsql: the migration level of a database that has them all", () => {
    const applied = [...readme.matchAll(/"applied":(\d+)/g)].map((m) => Number(m[1]));
    expect(applied.length).toBeGreaterThan(0);
    for (const n of applied) expect(n).toBe(migrations.length);
    const latest = [...readme.matchAll(/"(?:latest|expected)":"(\d{4})_/g)].map((m) => m[1]);
    expect(latest.length).toBeGreaterThan(0);
    for (const prefix of latest) expect(prefix).toBe(last.slice(0, 4));
    expect(readme).toContain(
      `Migrations: ${migrations.length} applied; the database has all ${migrations.length} (last ${last})`,
    );
  });
});

describe("the README's commands", () => {
  it("call the dev server at API_URL, defaulting to its usual port", () => {
    const shell = blocks("sh");
    // Inline commands in the text: `curl ...`.
    const inline = [...readme.matchAll(/`(curl [^`]+)`/g)].map((m) => m[1] ?? "");
    const fixed = [...shell, ...inline].flatMap((text) =>
      text.split("\n").filter((line) => {
        // What a comment says is not called (`# serve on http://localhost:8787`).
        const code = line.replace(/(^|\s)#.*$/, "").replaceAll(API_URL_OR_DEFAULT, "$API");
        return /localhost:\d+|127\.0\.0\.1:\d+/.test(code);
      }),
    );
    expect(fixed).toEqual([]);
    // A block that says $API sets it first.
    for (const block of shell.filter((b) => /\$API\b/.test(b))) {
      const set = block.indexOf(`API=${API_URL_OR_DEFAULT}`);
      expect(set, block).toBeGreaterThanOrEqual(0);
      expect(set, block).toBeLessThan(block.search(/\$API\b/));
    }
    expect(readme).toMatch(/npm run dev -- --port \d+/);
  });
});
