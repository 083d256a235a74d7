/**
 * A student's soft delete (one, or many all at once) and restore. Delete sets `deleted_at`
 * (audited as a delete) and removes nothing else, so records naming the student keep it, and a
 * restore brings back what it hid: family, guardians, groups, trusted people.
 */
import { Batch } from "../../db/batch";
import { Students, students } from "../../db/schema/student";
import { eq, isNotNull, sql } from "../../db/sql";
import { GuardFailed, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, conflict, notFound } from "../../lib/errors";
import { factChanged } from "../../lib/facts";
import { m } from "../../lib/message";
import { Deleted, DeleteMany } from "../../lib/params";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import { permissions } from "./permissions";
import { resource } from "./resource";

/** The soft delete of one student: `deleted_at` set (audited as a delete); records naming them keep it. */
const softDelete = (ctx: SchoolCtx, id: number) =>
  resource.writes.update(ctx, id, { deletedAt: ctx.deps.clock.now().toISOString() }, "delete");

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/student/{id}",
  tag: "People",
  operationId: "deleteStudent",
  summary: "Delete a student (soft: kept for the records that name them)",
  access: permissions.write,
  audit: "student",
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

/**
 * A removed student goes home no way the school decided: their exit permissions from today on are
 * withdrawn in the same batch (seats given back, the family and the office told).
 */
const withdrawing = (ctx: SchoolCtx, studentIds: readonly number[]) =>
  factChanged(ctx, { fact: "students", studentIds });

export const deleteStudent = operation(deleteRoute, async (ctx, { params }) => {
  const redecided = await withdrawing(ctx, [params.id]);
  await resource.commit(ctx, params.id, new Batch(ctx).add(...softDelete(ctx, params.id), ...redecided.statements));
  await redecided.dispatch();
  return undefined;
});

/**
 * Soft-deletes the students all at once, or none: ids that are not (or no longer) students of
 * this school are a 404 naming them. One read, then one batch whose guards abort it if any of
 * them was deleted meanwhile (then the read again names them).
 */
export async function deleteMany(ctx: SchoolCtx, ids: number[]): Promise<number[]> {
  const missing = async () => {
    const rows = await Students.select(ctx, { id: students.id }, "write")
      .where(resource.scoped(ctx, inList(students.id, ids), "write"))
      .all();
    const here = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !here.has(id));
  };
  const refuse = (gone: number[]) =>
    new ApiError(
      404,
      gone.length > 1
        ? m`Students ${gone.join(", ")} not found; nothing was deleted`
        : m`Student ${gone.join(", ")} not found; nothing was deleted`,
    );
  const before = await missing();
  if (before.length) throw refuse(before);
  const redecided = await withdrawing(ctx, ids);
  const batch = new Batch(ctx);
  for (const id of ids) batch.add(...softDelete(ctx, id));
  batch.add(...redecided.statements);
  try {
    await batch.commit();
  } catch (err) {
    const gone = await missing();
    if (gone.length) throw refuse(gone);
    throw err;
  }
  await redecided.dispatch();
  return ids;
}

/** "Delete multiple students": POST and DELETE on the same path are the same operation, as for groups. */
const deleteSeveral = (method: "post" | "delete", operationId: string) =>
  operation(
    defineRoute({
      method,
      path: "/api/v1/student/delete-multiple",
      tag: "People",
      operationId,
      summary:
        method === "post"
          ? "Delete several students at once (all or none)"
          : "Delete several students at once (all or none; DELETE form)",
      description:
        "Ids not of this school (or already deleted) are a 404 naming them, and nothing is deleted. " +
        "`POST` and `DELETE` on this path do the same.",
      access: permissions.write,
      audit: "student",
      request: { body: jsonBody(DeleteMany("Student"), "StudentDeleteMany") },
      responses: { 200: json(Deleted, "The ids deleted") },
    }),
    async (ctx, { body }) => ({ deleted: await deleteMany(ctx, body.ids) }),
  );

export const deleteStudents = deleteSeveral("post", "deleteStudents");
export const deleteMultipleStudents = deleteSeveral("delete", "deleteMultipleStudents");

/** Another live student of the same school holding this one's id number. */
const other = Students.alias("o");

/**
 * Why student `id` cannot be restored, or nothing when it can: not a student of this school (404),
 * not deleted (409), or its id number now held by a student not deleted (409 naming them: two live
 * students never share one).
 */
async function restoreRefusal(ctx: SchoolCtx, id: number): Promise<ApiError | undefined> {
  const o = other.table;
  const row = await Students.select(ctx, {
    deletedAt: students.deletedAt,
    idNumber: students.idNumber,
    holder: sql<number | null>`${other
      .select(ctx, { id: o.id })
      .where(eq(o.idNumber, students.idNumber), sql`${o.deletedAt} IS NULL`)
      .limit(1)}`,
  })
    .where(eq(students.id, id))
    .first();
  if (!row) return notFound(m`Student ${id} not found`);
  if (row.deletedAt === null) return conflict(m`Student ${id} is not deleted`);
  if (row.holder !== null) {
    return conflict(
      m`Student ${row.holder} now has the id number ${row.idNumber}; change or delete that student's id number first`,
    );
  }
  return undefined;
}

/** Restores a deleted student: `deleted_at` cleared (audited as `restore`). */
export async function restoreStudent(ctx: SchoolCtx, id: number) {
  const refused = await restoreRefusal(ctx, id);
  if (refused) throw refused;
  const batch = new Batch(ctx).add(
    ...Students.updateOne(ctx, id, { deletedAt: null }, { action: "restore", where: isNotNull(students.deletedAt) }),
  );
  const restored = batch.read(resource.readOne(ctx, id));
  try {
    const [row] = (await batch.commit()).get(restored);
    if (!row) throw notFound(m`Student ${id} not found`);
    return resource.toRecord(ctx, row);
  } catch (err) {
    // Changed since the read (restored meanwhile, or its number taken): the read again says how.
    if (err instanceof GuardFailed || (err instanceof ApiError && err.status === 409)) {
      throw (await restoreRefusal(ctx, id)) ?? err;
    }
    throw err;
  }
}

const restoreRoute = defineRoute({
  method: "patch",
  path: "/api/v1/student/{id}/restore",
  tag: "People",
  operationId: "restoreStudent",
  summary: "Restore a deleted student, with the family, guardians and groups they had",
  description:
    "Find deleted students with `GET /api/v1/student?deleted=true`. 404 for a student not of this school; 409 when " +
    "the student is not deleted, or when another student now has their id number (named: change that one's first).",
  access: permissions.write,
  audit: "student",
  errors: [409],
  examples: { 409: "Student 42 is not deleted" },
  request: { params: IdParams },
  responses: { 200: json(resource.record, "The student, restored") },
});

export const restoreStudentOperation = operation(restoreRoute, (ctx, { params }) => restoreStudent(ctx, params.id));
