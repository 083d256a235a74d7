/**
 * The rows an invitation's children make: one answer row per invited family (a child of no family
 * answers alone) and one per child, written set-based (two statements over JSON parameters, and
 * their audit rows) whatever the number of children.
 */
import {
  InvitationResponses,
  InvitationStudentResponses,
  invitationResponses,
  invitationStudentResponses,
} from "../../db/schema/invitation";
import { type SQL, sql } from "../../db/sql";
import { insertedId, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";

/** Invited children, and the family answer row they join when it already exists. */
export interface Invited {
  studentId: number;
  familyId: number | null;
  responseId?: number;
}

/**
 * The statements inviting `children` to invitation `invitationId` (a number, or the id a create
 * just wrote): the families' answer rows they need, then theirs, each with its audit rows.
 */
export function inviteStatements(
  ctx: SchoolCtx,
  invitationId: number | SQL<number>,
  children: readonly Invited[],
): Statement[] {
  const at = ctx.deps.clock.now().toISOString();
  // New family rows, in order: a child's `g` is the index of its family's new row.
  const families: (number | null)[] = [];
  const keys = new Map<string, number>();
  const rows = children.map((c) => {
    if (c.responseId !== undefined) return { s: c.studentId, r: c.responseId, g: null };
    const key = c.familyId === null ? `s${c.studentId}` : `f${c.familyId}`;
    let g = keys.get(key);
    if (g === undefined) {
      g = families.push(c.familyId) - 1;
      keys.set(key, g);
    }
    return { s: c.studentId, r: null, g };
  });
  const statements: Statement[] = [];
  if (families.length) {
    statements.push(
      ...InvitationResponses.insertMany(
        ctx,
        InvitationResponses.insertFrom(
          ctx,
          (row) =>
            sql`SELECT ${row({ invitationId: sql`${invitationId}`, familyId: sql`j.value`, status: sql`'pending'` })} FROM json_each(${JSON.stringify(families)}) j ORDER BY j.key`,
          at,
        ),
        // The rows the insert just wrote take the last ids (AUTOINCREMENT), in the order of the list.
        sql`${invitationResponses.id} > ${insertedId(invitationResponses)} - changes()`,
        ["invitationId", "familyId", "status"],
      ),
    );
  }
  const last = families.length - 1;
  statements.push(
    ...InvitationStudentResponses.insertMany(
      ctx,
      InvitationStudentResponses.insertFrom(
        ctx,
        (row) =>
          sql`SELECT ${row({
            invitationId: sql`${invitationId}`,
            responseId: sql`coalesce(j.value->>'r', ${insertedId(invitationResponses)} - (${last} - (j.value->>'g')))`,
            studentId: sql`j.value->>'s'`,
            answer: sql`'pending'`,
          })} FROM json_each(${JSON.stringify(rows)}) j ORDER BY j.key`,
        at,
      ),
      sql`${invitationStudentResponses.id} > ${insertedId(invitationStudentResponses)} - changes()`,
      ["invitationId", "responseId", "studentId", "answer"],
    ),
  );
  return statements;
}
