/**
 * What every importer's batch writes alike (people-import, family-import, group-import): the
 * import actor of its audit rows, the audit `change` pairs of a created row, the new people with
 * their role, and the process's progress. Each is one statement over the batch's rows as JSON
 * (`json_each`), never one per row.
 */

import { holdsAnchors, resolveUsers, userAnchors } from "../../db/anchors";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { RoleUsers, Users } from "../../db/schema/core";
import { SchoolPeople, SchoolUsers } from "../../db/schema/user";
import { eq, sql } from "../../db/sql";
import type { Changes } from "../../db/table";
import type { Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { fold } from "../../lib/fold";

/** A new person of an import: phone, first and last name, then optionally email and language. */
export type NewPerson = readonly [string, string, string, (string | null)?, (string | null)?, ...unknown[]];

/** The tables under the names the statements give them, each with its own tenant condition. */
const m = SchoolUsers.alias("m");
const c = SchoolPeople.alias("c");
const ru = RoleUsers.alias("ru");
const u = Users.alias("u");

/** A created row's audit changes: each key from nothing to the value of its SQL expression. */
export const created = (values: Record<string, string>): Changes =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, { old: null, new: sql.raw(value) }]));

export function batchWrites(ctx: SchoolCtx, processId: number, now: string) {
  const { db } = ctx.deps;
  return {
    /**
     * `rows` (`[phone, firstName, lastName, email?, language?, ...]`, every person of the batch):
     * unknown numbers become new people, invited, with the search copies of their names; a known
     * number this school does not know yet (no live membership here) gets the school's own copy of
     * the row's name and email (src/modules/user/identity.ts: the user row is not this school's to
     * see), before the role makes them a member. `grant` (JSON phones): people given `roleId` here
     * (their profile and membership follow by trigger). Each written row audited; a row someone
     * else wrote meanwhile is left alone.
     */
    people: async (
      rows: readonly NewPerson[],
      grant: string,
      roleId: number,
      known: ReadonlySet<string>,
    ): Promise<Statement[]> => {
      // Two steps (docs/scaling.md "Shards", group B): the unknown numbers become users in the
      // platform database first (one batch answering every number's user), then this batch
      // anchors them (on a shard) and audits the ones made. `known`: the numbers the batch's read
      // found (nothing to make for them).
      const create = rows
        .filter(([phone]) => !known.has(phone))
        .map(([phone, first, last, email, language]) => ({
          phone,
          firstName: first,
          lastName: last,
          email: email ?? null,
          language: language ?? "es",
        }));
      const resolved =
        create.length || (await holdsAnchors(ctx))
          ? await resolveUsers(
              ctx,
              rows.map(([phone]) => phone),
              create,
            )
          : { rows: [], created: new Set<number>() };
      const made = JSON.stringify([...resolved.created]);
      const fresh = JSON.stringify(
        rows.map(([phone, first, last, email]) => [phone, first, last, email ?? null, null, fold(first), fold(last)]),
      );
      const known_ = sql`FROM json_each(${fresh}) j CROSS JOIN user u ON u.phone = j.value->>0 WHERE u.deleted_at IS NULL
        AND u.id NOT IN (SELECT value FROM json_each(${made}))`;
      return [
        ...(await userAnchors(ctx, resolved.rows)),
        SchoolPeople.insertFrom(
          ctx,
          (row) =>
            sql`SELECT ${row({ userId: sql`u.id`, firstName: sql`j.value->>1`, lastName: sql`j.value->>2`, email: sql`j.value->>3`, firstNameSearch: sql`j.value->>5`, lastNameSearch: sql`j.value->>6` })}
              ${known_} AND NOT EXISTS (SELECT 1 FROM ${m.from}
                WHERE ${m.where(ctx, sql`m.user_id = u.id AND m.deleted_at IS NULL`)})`,
          now,
        ).onConflictDoNothing(),
        u.auditRows(
          ctx,
          sql`FROM json_each(${fresh}) j CROSS JOIN user u ON u.phone = j.value->>0
            ${c.joinOn(ctx, sql`c.user_id = u.id`, "CROSS JOIN")} WHERE c.created_at = ${now}`,
          {
            action: "copy",
            changes: created({ firstName: "c.first_name", lastName: "c.last_name", email: "c.email" }),
          },
          now,
        ),
        // The users the platform step made, audited in the school's trail.
        u.auditRows(
          ctx,
          sql`FROM ${u.from} WHERE u.id IN (SELECT value FROM json_each(${made}))`,
          { created: ["phone", "firstName", "lastName", "email", "language", "status"] },
          now,
        ),
        RoleUsers.insertFrom(
          ctx,
          (row) => sql`SELECT ${row({ userId: sql`u.id`, roleId })}
            FROM json_each(${grant}) j CROSS JOIN user u ON u.phone = j.value WHERE u.deleted_at IS NULL`,
          now,
        ).onConflictDoNothing(),
        ru.auditRows(
          ctx,
          sql`FROM json_each(${grant}) j CROSS JOIN user u ON u.phone = j.value
            ${ru.joinOn(ctx, sql`ru.user_id = u.id AND ru.role_id = ${roleId}`, "CROSS JOIN")}
            WHERE ru.created_at = ${now}`,
          { created: ["userId", "roleId"] },
          now,
        ),
      ];
    },
    /** The batch's rows counted as processed, while the process is still processing. */
    progress: (rows: number): Statement =>
      db
        .update(bulkProcesses)
        .set({ processedRows: sql`${bulkProcesses.processedRows} + ${rows}`, updatedAt: now })
        .where(BulkProcesses.where(ctx, eq(bulkProcesses.id, processId), eq(bulkProcesses.status, "processing"))),
  };
}
