/**
 * Prints the SQL that fills search copies (src/db/search.ts) of rows that already exist, for a
 * migration that adds copies: `<column>_search` = fold(`<column>`) for each `table.column` named.
 *
 *   npx tsx scripts/search-fill.ts user.first_name student.last_name ... >> migrations/<file>.sql
 *
 * SQLite cannot decompose Unicode, so the fold is written into the migration as data: a table of
 * every character (below U+10000) whose fold differs from itself, mapped to its fold, computed by
 * src/lib/fold.ts. Each copy is then built character by character (a recursive CTE: each character
 * looked up, or kept when it folds to itself) and the table dropped. Folding character by
 * character is the app's fold for every text in the Basic Multilingual Plane except the rare ones
 * the recomposition joins (loose Korean jamo); characters beyond it are kept as they are.
 * test/node/search-fill.test.ts checks the result against `fold` on a migrated database.
 */
import { fold } from "../src/lib/fold";

const MAP = "search_fold";
const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

/** Every BMP character whose fold differs from itself, with its fold. */
export function foldPairs(): [string, string][] {
  const pairs: [string, string][] = [];
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue; // surrogates are halves, not characters
    const ch = String.fromCharCode(code);
    const folded = fold(ch);
    if (folded !== ch) pairs.push([ch, folded]);
  }
  return pairs;
}

/** The fill of `table.column`'s copy from the map table. */
export function fillStatement(table: string, column: string): string {
  const source = `${ident(table)}.${ident(column)}`;
  return [
    `UPDATE ${ident(table)} SET ${ident(`${column}_search`)} = (`,
    `  WITH RECURSIVE f(i, folded) AS (`,
    `    SELECT 1, ''`,
    `    UNION ALL`,
    `    SELECT i + 1, folded || coalesce((SELECT m.folded FROM ${MAP} m WHERE m.ch = substr(${source}, i, 1)), substr(${source}, i, 1))`,
    `    FROM f WHERE i <= length(${source})`,
    `  )`,
    `  SELECT folded FROM f ORDER BY i DESC LIMIT 1`,
    `) WHERE ${source} IS NOT NULL;`,
  ].join("\n");
}

/** The statements: the map table, its rows (in statements of at most 500), each fill, the drop. */
export function fillSql(columns: readonly string[]): string[] {
  const pairs = foldPairs();
  const statements = [`CREATE TABLE ${MAP} (ch TEXT PRIMARY KEY NOT NULL, folded TEXT NOT NULL) WITHOUT ROWID;`];
  for (let i = 0; i < pairs.length; i += 500) {
    const rows = pairs.slice(i, i + 500).map(([ch, folded]) => `(${q(ch)}, ${q(folded)})`);
    statements.push(`INSERT INTO ${MAP} (ch, folded) VALUES ${rows.join(", ")};`);
  }
  for (const name of columns) {
    const [table, column] = name.split(".");
    if (!table || !column) throw new Error(`expected table.column, got ${name}`);
    statements.push(fillStatement(table, column));
  }
  statements.push(`DROP TABLE ${MAP};`);
  return statements;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const columns = process.argv.slice(2);
  if (columns.length === 0) {
    console.error("usage: npx tsx scripts/search-fill.ts table.column ...");
    process.exit(2);
  }
  console.log(
    [
      `-- Search copies of existing rows: fold(column) by a character map (scripts/search-fill.ts).`,
      ...fillSql(columns),
    ].join("\n--> statement-breakpoint\n"),
  );
}
