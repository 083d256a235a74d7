/**
 * A family's members: the parents (`parent.family_id`) and students (`student.family_id`) of this
 * school in it. A student and a parent are each in at most one family; a family has at most the
 * school's parent limit (`school_configuration.max_parents_per_family` of the school year in effect).
 *
 * Membership writes are conditional statements in the family's batch: a student or parent joins
 * only while in no other family, and parents join only while the family's count plus the newcomers
 * stays within the limit (the count is inside the UPDATE's WHERE), each followed by a guard that
 * aborts the batch unless every one of them joined. A read first tells the caller which rule
 * refuses (404 / 409 / 422); a write that loses a race to a concurrent one is diagnosed again.
 */
import type { z } from "@hono/zod-openapi";
import { Batch, type Results } from "../../db/batch";
import { Families, families } from "../../db/schema/family";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import { and, eq, isNull, not, type SQL, sql } from "../../db/sql";
import { GuardFailed, guardCount, inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { DEFAULT_PARENT_LIMIT, parentCount, parentLimit, familyResource as resource } from "./record";

type Members = { parentIds?: number[]; studentIds?: number[] };
type Plan = {
  /** Listed parents and students not yet in the family: the ones that join. */
  newParents: number[];
  newStudents: number[];
};

/**
 * Reads what a membership change needs in one D1 call and refuses it as the caller would want to
 * hear: the family (404), an id not of this school (404, as if absent), a member of another
 * family (409), the parent limit (422). `familyId` null: a family being created.
 */
async function plan(ctx: SchoolCtx, familyId: number | null, input: Members, replace: boolean): Promise<Plan> {
  const parentIds = input.parentIds ?? [];
  const studentIds = input.studentIds ?? [];
  const batch = new Batch(ctx);
  const family = batch.read(
    Families.select(ctx, { id: families.id, parents: parentCount }).where(eq(families.id, familyId ?? 0)),
  );
  const foundParents = batch.read(
    Parents.select(ctx, { id: parents.id, familyId: parents.familyId }).where(inList(parents.id, parentIds)),
  );
  const foundStudents = batch.read(
    Students.select(ctx, { id: students.id, familyId: students.familyId }).where(
      isNull(students.deletedAt),
      inList(students.id, studentIds),
    ),
  );
  const limits = batch.result(ctx.deps.db.select({ limit: parentLimit(ctx) }).from(sql`(SELECT 1)`));
  const results = await batch.commit();
  const [found] = results.get(family);
  if (familyId !== null && !found) throw notFound(m`Family ${familyId} not found`);
  const current = found?.parents ?? 0;
  const refuse = (who: "parent" | "student", ids: number[], rows: { id: number; familyId: number | null }[]) => {
    const missing = ids.find((id) => !rows.some((f) => f.id === id));
    if (missing !== undefined) {
      throw notFound(who === "parent" ? m`Parent ${missing} not found` : m`Student ${missing} not found`);
    }
    const taken = rows.find((f) => f.familyId !== null && f.familyId !== familyId);
    if (taken) {
      throw conflict(
        who === "parent"
          ? m`Parent ${taken.id} is already in another family (${taken.familyId}); a parent in two families is not allowed: take them out of it first`
          : m`Student ${taken.id} is already in another family (${taken.familyId}); a student in two families is not allowed: take them out of it first`,
      );
    }
    return rows.filter((f) => f.familyId === null).map((f) => f.id);
  };
  const newParents = refuse("parent", parentIds, results.get(foundParents));
  const newStudents = refuse("student", studentIds, results.get(foundStudents));
  const limit = results.get(limits)[0]?.limit ?? DEFAULT_PARENT_LIMIT;
  const after = replace && input.parentIds ? parentIds.length : current + newParents.length;
  if (newParents.length && after > limit) {
    throw unprocessable(m`This school allows at most ${limit} parents per family; the family would have ${after}`);
  }
  return { newParents, newStudents };
}

/**
 * The membership statements of a family's batch. With `replace`, members not listed (of a list
 * that was given) leave first. Newcomers join with one conditional UPDATE each kind: only rows
 * still in no family, and for parents only while the family's count plus the newcomers stays
 * within the limit; a guard aborts the batch unless all of them joined.
 */
function membershipStatements(
  ctx: SchoolCtx,
  familyId: number | SQL<number>,
  input: Members,
  planned: Plan,
  replace: boolean,
): Statement[] {
  const out: Statement[] = [];
  const parentsJoin = (joining: number[]) =>
    and(
      isNull(parents.familyId),
      inList(parents.id, joining),
      sql`(SELECT count(*) FROM parent AS others WHERE others.family_id = ${familyId}) + ${joining.length} <= ${parentLimit(ctx)}`,
    );
  if (input.parentIds) {
    if (replace) {
      out.push(
        ...Parents.update(ctx, and(eq(parents.familyId, familyId), not(inList(parents.id, input.parentIds))), {
          familyId: null,
        }),
      );
    }
    if (planned.newParents.length) {
      out.push(
        ...Parents.update(ctx, parentsJoin(planned.newParents), { familyId }),
        guardCount(ctx.deps.db, planned.newParents.length),
      );
    }
  }
  if (input.studentIds) {
    if (replace) {
      out.push(
        ...Students.update(ctx, and(eq(students.familyId, familyId), not(inList(students.id, input.studentIds))), {
          familyId: null,
        }),
      );
    }
    if (planned.newStudents.length) {
      const joining = and(
        isNull(students.familyId),
        inList(students.id, planned.newStudents),
        isNull(students.deletedAt),
      );
      out.push(...Students.update(ctx, joining, { familyId }), guardCount(ctx.deps.db, planned.newStudents.length));
    }
  }
  return out;
}

/** Commits a family's batch; a membership guard that failed is diagnosed again (a concurrent change won). */
async function commitFamily(
  ctx: SchoolCtx,
  familyId: number | null,
  input: Members,
  replace: boolean,
  batch: Batch,
): Promise<Results> {
  try {
    return await batch.commit({ conflict: resource.messages.conflict });
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    await plan(ctx, familyId, input, replace);
    throw conflict(m`The family's members changed while it was being written; try again`);
  }
}

const noneJoin: Plan = { newParents: [], newStudents: [] };

/** Creates a family with its first members, in one batch with the audit rows and the record read back. */
export async function createFamily(
  ctx: SchoolCtx,
  input: { familyNumber: string; name: string } & Members,
): Promise<z.output<typeof resource.record>> {
  const members = { parentIds: input.parentIds, studentIds: input.studentIds };
  const planned =
    input.parentIds?.length || input.studentIds?.length ? await plan(ctx, null, members, false) : noneJoin;
  const id = Families.insertedId();
  const batch = new Batch(ctx)
    .add(...resource.writes.insert(ctx, { familyNumber: input.familyNumber, name: input.name }))
    .add(...membershipStatements(ctx, id, members, planned, false));
  const created = batch.read(resource.readOne(ctx, id));
  const [row] = (await commitFamily(ctx, null, members, false, batch)).get(created);
  if (!row) throw new Error("family: the created family was not read back");
  return resource.toRecord(ctx, row);
}

/**
 * Renames or renumbers a family and replaces the lists given (members not listed leave), in one
 * batch: the family's guarded update first (a family gone meanwhile is a 404 and changes nothing).
 */
export async function updateFamily(
  ctx: SchoolCtx,
  id: number,
  input: { familyNumber?: string; name?: string } & Members,
): Promise<void> {
  const { parentIds, studentIds, ...own } = input;
  const members = { parentIds, studentIds };
  const changesMembers = parentIds !== undefined || studentIds !== undefined;
  const planned = changesMembers ? await plan(ctx, id, members, true) : noneJoin;
  // A family gone meanwhile fails the family's own guard: `commitFamily` diagnoses it again (404).
  const batch = new Batch(ctx)
    .add(...resource.writes.update(ctx, id, own))
    .add(...membershipStatements(ctx, id, members, planned, true));
  await commitFamily(ctx, id, members, true, batch);
}

/**
 * Deletes a family; its members stay, in no family (their `family_id` set to null, audited as
 * parent and student updates), in one batch whose family delete is guarded (absent: 404).
 */
export async function removeFamily(ctx: SchoolCtx, id: number): Promise<void> {
  const batch = new Batch(ctx)
    .add(...Parents.update(ctx, eq(parents.familyId, id), { familyId: null }))
    .add(...Students.update(ctx, eq(students.familyId, id), { familyId: null }))
    .add(...resource.writes.delete(ctx, id));
  await resource.commit(ctx, id, batch);
}

/**
 * Adds parents to a family without touching the others (for imports): one conditional UPDATE whose
 * WHERE holds the family's count against the limit, so concurrent additions never exceed it.
 */
export async function addFamilyParents(ctx: SchoolCtx, familyId: number, parentIds: number[]): Promise<void> {
  const members = { parentIds };
  const planned = await plan(ctx, familyId, members, false);
  const batch = new Batch(ctx)
    .add(...resource.writes.update(ctx, familyId, {}, "add-parents"))
    .add(...membershipStatements(ctx, familyId, members, { ...planned, newStudents: [] }, false));
  await commitFamily(ctx, familyId, members, false, batch);
}
