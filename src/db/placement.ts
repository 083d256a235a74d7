/**
 * Where a new school goes (docs/scaling.md "Shards"): its row of the shard map, written in the
 * batch that creates the school, on the least-loaded database that takes new schools.
 */
import type { Deps } from "../deps";
import type { Db } from "./client";
import { bulkProcesses } from "./schema/bulk-process";
import { schoolShards, schools } from "./schema/core";
import { databaseNamed, PLATFORM } from "./shards";
import { type SQL, sql } from "./sql";
import { columnList, inList, type Statement } from "./write";

/**
 * The map row of a new school, in the batch that creates it: on the least-loaded database of
 * `open` (src/db/shards.ts `openForNewSchools`; by the count of schools each holds, the first
 * listed on a tie). `school` is the new school's id (an SQL expression in its batch).
 */
export function placeSchool(db: Db, school: number | SQL, at: string, open: readonly string[]) {
  // A school with no map row is on the platform database.
  const load = sql`CASE WHEN b.value = ${PLATFORM}
      THEN (SELECT count(*) FROM school s WHERE s.id <> ${school} AND NOT EXISTS (SELECT 1 FROM school_shard m WHERE m.school_id = s.id AND m.binding <> ${PLATFORM}))
      ELSE (SELECT count(*) FROM school_shard m WHERE m.binding = b.value) END`;
  return db
    .insert(schoolShards)
    .select(
      sql`SELECT ${columnList(schoolShards, { schoolId: school, binding: sql`b.value`, createdAt: at, updatedAt: at })} FROM json_each(${JSON.stringify(open)}) b ORDER BY ${load}, b.key LIMIT 1`,
    ) satisfies Statement;
}

/** The shard map's rows of `ids`: read in the batch that deletes those schools (before the cascade takes them). */
export const mapRowsOf = (db: Db, ids: readonly number[]) =>
  db
    .select({ schoolId: schoolShards.schoolId, binding: schoolShards.binding })
    .from(schoolShards)
    .where(inList(schoolShards.schoolId, ids));

/**
 * After the platform's rows of deleted schools: each one's anchor in its shard (`map`: their map
 * rows, read before), which takes the school's rows there with it (their foreign keys cascade; bulk
 * processes first, whose RESTRICT on their documents would refuse it: src/modules/school/service.ts).
 * One batch per shard, in parallel; schools on `DB` went with the platform's batch.
 */
export async function dropFromShards(
  deps: Deps,
  deleted: readonly number[],
  map: readonly { schoolId: number; binding: string }[],
) {
  const held = new Map(map.map((r) => [r.schoolId, r.binding]));
  const byShard = new Map<string, number[]>();
  for (const id of deleted) {
    const name = held.get(id) ?? PLATFORM;
    if (name !== PLATFORM) byShard.set(name, [...(byShard.get(name) ?? []), id]);
  }
  await Promise.all(
    [...byShard].map(([name, ids]) => {
      const db = databaseNamed(deps, name);
      return db.batch([
        db.delete(bulkProcesses).where(inList(bulkProcesses.schoolId, ids)),
        db.delete(schools).where(inList(schools.id, ids)),
      ]);
    }),
  );
}
