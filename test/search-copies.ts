/**
 * Every stored search copy is the fold of its column (src/db/search.ts): test/setup.ts runs this
 * after each test file, so a write path that sets a searched column without its copy (a route, an
 * import, a job, the seed, a test's own insert) fails the file that exercised it.
 */
import { env } from "cloudflare:test";
import { getTableName } from "drizzle-orm";
import { searchedTables } from "../src/db/search";
import { fold } from "../src/lib/fold";

// Every table's schema, so each declares its copies before the check walks them.
import.meta.glob("../src/db/schema/*.ts", { eager: true });

import "../src/db/schema/core";

/** The copies that are not the fold of their column, as `table.copy #id: "stored" should be "fold"`. */
export async function staleSearchCopies(): Promise<string[]> {
  const stale: string[] = [];
  for (const [table, pairs] of searchedTables()) {
    const name = getTableName(table);
    for (const [column, copy] of pairs) {
      const { results } = await env.DB.prepare(
        `SELECT id, "${column.name}" AS value, "${copy.name}" AS copy FROM "${name}"`,
      ).all<{ id: number; value: string | null; copy: string | null }>();
      for (const row of results) {
        const expected = row.value === null ? null : fold(row.value);
        if (row.copy !== expected) {
          stale.push(
            `${name}.${copy.name} #${row.id}: ${JSON.stringify(row.copy)} should be ${JSON.stringify(expected)}`,
          );
        }
      }
    }
  }
  return stale;
}
