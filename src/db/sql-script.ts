/**
 * Splitting the project's SQL files into statements, for every place that applies them outside
 * wrangler (the libSQL test, the benchmark, the seed in tests). Pure string work: no file access.
 */

/** A drizzle migration file: statements separated by `--> statement-breakpoint`. */
export function migrationStatements(script: string): string[] {
  return (
    script
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      // A chunk of only comments is no statement (D1 refuses it).
      .filter((s) => s.replace(/^--.*$/gm, "").trim() !== "")
  );
}

/** A plain SQL script (seed/demo.sql): `;`-terminated statements, `--` comment lines. */
export function scriptStatements(script: string): string[] {
  return script
    .split("\n")
    .filter((line) => !line.trim().startsWith("--"))
    .join("\n")
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}
