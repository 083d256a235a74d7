/**
 * Where a new school goes (docs/scaling.md "Shards"): its row of the shard map, written in the
 * batch that creates the school, on the least-loaded database that takes new schools.
 */
import type { Db } from "./client";
import { schoolShards } from "./schema/core";
import { OPEN_FOR_NEW_SCHOOLS, PLATFORM } from "./shards";
import { type SQL, sql } from "./sql";
import { columnList, type Statement } from "./write";

/**
 * The map row of a new school, in the batch that creates it: on the least-loaded database of
 * `open` (the count of schools each holds; the first listed on a tie). `school` is the new
 * school's id (an SQL expression in its batch).
 */
export function placeSchool(db: Db, school: number | SQL, at: string, open = OPEN_FOR_NEW_SCHOOLS) {
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
