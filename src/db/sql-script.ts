/**
 * Splitting the project's SQL files into statements, for every place that applies them outside
 * wrangler (the libSQL test, the benchmark, the seed in tests). Pure string work: no file access.
 */

/** A drizzle migration file: statements separated by `--> statement-breakpoint`. */
export function migrationStatements(script: string): string[] {
  return (
    script
      .split("--> statement-breakpoint")
      // Comment lines dropped: D1 refuses a chunk of only comments, and its parser read an
      // apostrophe in a comment line before a statement as the start of a string.
      .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
      .filter((s) => s !== "")
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
