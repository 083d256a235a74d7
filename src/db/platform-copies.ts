/**
 * A shard's copies of platform rows (docs/scaling.md "Anchors"): the `school` row of each school
 * it holds, custom permissions and application modules. They are real, kept copies: every write
 * of such a row writes the platform database first (its own batch, with its audit row), then the
 * same row to the copy on each shard that keeps one: one statement per shard, in parallel. On the
 * platform database (shard 0) the row is its own copy: it is written once.
 *
 * Between the two, a copy can lag (the platform's batch committed, the shard's write failed): the
 * request fails (500) and the next write of the row copies all of it again.
 */
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../lib/context";
import { databaseNamed, PLATFORM, platformDb } from "./shards";
import { eq } from "./sql";

type Keyed = SQLiteTable & { id: SQLiteColumn };

/** The shards other than the platform's (`DB_SHARD_1`, ...): where a catalogue row is copied. */
export function everyShard(ctx: Ctx): string[] {
  return Object.keys(ctx.deps.shards ?? {}).filter((name) => name !== PLATFORM);
}

/**
 * Copies row `id` of `table`, as the platform database has it now, to each of `shards` (the whole
 * row: `INSERT ... ON CONFLICT(id) DO UPDATE`); a row the platform no longer has is deleted there.
 */
export async function copyRow(ctx: Ctx, table: Keyed, id: number, shards: readonly string[]): Promise<void> {
  const targets = shards.filter((name) => name !== PLATFORM);
  if (targets.length === 0) return;
  const [row] = await platformDb(ctx.deps).select().from(table).where(eq(table.id, id)).limit(1);
  if (!row) return dropRow(ctx, table, id, targets);
  await Promise.all(
    targets.map((name) =>
      databaseNamed(ctx.deps, name).insert(table).values(row).onConflictDoUpdate({ target: table.id, set: row }),
    ),
  );
}

/** Deletes row `id` of `table` from each of `shards` (what points at it there cascades). */
export async function dropRow(ctx: Ctx, table: Keyed, id: number, shards: readonly string[]): Promise<void> {
  const targets = shards.filter((name) => name !== PLATFORM);
  await Promise.all(targets.map((name) => databaseNamed(ctx.deps, name).delete(table).where(eq(table.id, id))));
}
