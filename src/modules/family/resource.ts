/**
 * Families: a family number unique in the school, a name, and its members — the parents
 * (`parent.family_id`) and students (`student.family_id`) of this school in it. A student and a
 * parent are each in at most one family; a family has at most the school's parent limit
 * (`school_configuration.max_parents_per_family` of the school year in effect).
 *
 * Membership writes are conditional statements in the family's batch: a student or parent joins
 * only while in no other family, and parents join only while the family's count plus the newcomers
 * stays within the limit (the count is inside the UPDATE's WHERE), each followed by a guard that
 * aborts the batch unless every one of them joined. A read first tells the caller which rule
 * refuses (404 / 409 / 422); a write that loses a race to a concurrent one is diagnosed again.
 *
 * Visibility: `family.read` opens the reads (403 without); holders of `family.read-all` (school
 * admins, staff) see the school's families, everyone else only the family of the parents they act
 * for (`actingFor`: themself and the parents whose valid delegate they are). Writes need
 * `family.write`.
 */

import { z } from "@hono/zod-openapi";
import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { auditUpdate } from "../../db/audit";
import { families } from "../../db/schema/family";
import { parents } from "../../db/schema/parent";
import { schoolConfigurations } from "../../db/schema/school-configuration";
import { students } from "../../db/schema/student";
import { commit, GuardFailed, guardCount, inList, insertedId, jsonValues, type Statement } from "../../db/write";
import { type Ctx, ctxOf, schoolOf, tenant } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { fold } from "../../lib/fold";
import { LEVELS } from "../../lib/levels";
import { idList } from "../../lib/params";
import { defineResource, type Filter, IdParams, nonEmpty, RecordBase } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody, noContent } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { SAFE_TEXT, text, UNSAFE_TEXT_MESSAGE } from "../../lib/text";
import { actingFor } from "../delegate/api";
import { columnsAs, copyJoin, identity } from "../user/api";
import { permissions } from "./permissions";

/** When the school has no configuration at all: the column's default. */
export const DEFAULT_PARENT_LIMIT = 2;
/** At most this many ids in one membership list or one validation. */
const MAX_IDS = 50;

const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
const STUDENT_STATUSES = ["active", "inactive", "graduated"] as const;

const FamilyParent = z
  .object({
    id: z.number().int().openapi({ example: 1, description: "The parent profile's id" }),
    userId: z.number().int().openapi({ example: 4 }),
    firstName: z.string().openapi({ example: "Paula" }),
    lastName: z.string().openapi({ example: "Parent" }),
    relationship: z.enum(RELATIONSHIPS),
  })
  .openapi("FamilyParent");

const FamilyStudent = z
  .object({
    id: z.number().int().openapi({ example: 1 }),
    firstName: z.string().openapi({ example: "Pablo" }),
    lastName: z.string().openapi({ example: "Parent" }),
    level: z.enum(LEVELS).nullable(),
    status: z.enum(STUDENT_STATUSES),
  })
  .openapi("FamilyStudent");

const Record = RecordBase.extend({
  familyNumber: z.string().openapi({ example: "F-0001" }),
  name: z.string().openapi({ example: "Parent family" }),
  parents: z.array(FamilyParent).openapi({ description: "The family's parents, by id" }),
  students: z.array(FamilyStudent).openapi({ description: "The family's students (not deleted ones), by id" }),
  parentCount: z.number().int().openapi({ example: 1 }),
  studentCount: z.number().int().openapi({ example: 1 }),
});

/**
 * The outer family row, always qualified: drizzle writes a column of a one-table select unqualified
 * (`"id"`), which inside a sub-select would name the sub-select's own table.
 */
const FAMILY_ID = sql.raw(`"family"."id"`);

/**
 * The family's parents as JSON (their names as this school knows them: src/modules/user/identity.ts), in id order: the index `parent_family_idx (family_id)` holds them so
 * (an ORDER BY inside the aggregate would sort in a temporary B-tree).
 */
const parentName = identity(columnsAs("u"), columnsAs("pc"));
const parentsJson = sql<string>`(SELECT json_group_array(json_object('id', p.id, 'userId', p.user_id, 'firstName', ${parentName.firstName}, 'lastName', ${parentName.lastName}, 'relationship', p.relationship)) FROM parent AS p INNER JOIN "user" AS u ON u.id = p.user_id ${copyJoin("pc", sql.raw("p.user_id"), sql.raw("p.school_id"))} WHERE p.family_id = ${FAMILY_ID})`;

/** The family's students as JSON, in id order (`student_family_idx`), leaving out deleted ones. */
const studentsJson = sql<string>`(SELECT json_group_array(json_object('id', s.id, 'firstName', s.first_name, 'lastName', s.last_name, 'level', s.level, 'status', s.status)) FROM student AS s WHERE s.family_id = ${FAMILY_ID} AND s.deleted_at IS NULL)`;

const fields = {
  id: families.id,
  createdAt: families.createdAt,
  updatedAt: families.updatedAt,
  familyNumber: families.familyNumber,
  name: families.name,
  parents: parentsJson,
  students: studentsJson,
};

/** The user ids each request's caller acts for, read once by the handlers of callers who need it. */
const acting = new WeakMap<Ctx, number[]>();

/** Reads who the caller acts for when their visibility depends on it (not for holders of read-all). */
async function withActing(ctx: Ctx): Promise<Ctx> {
  if (!ctx.can(permissions.readAll)) acting.set(ctx, await actingFor(ctx));
  return ctx;
}

/** The families of the parents the caller acts for (in the current school). */
function ownFamilies(ctx: Ctx): SQL {
  const users = acting.get(ctx) ?? (ctx.userId !== null ? [ctx.userId] : []);
  if (!users.length) return sql`0`;
  return inList(
    families.id,
    ctx.deps.db
      .select({ id: parents.familyId })
      .from(parents)
      .where(and(tenant(ctx, parents), inList(parents.userId, users))),
  );
}

const visibleTo = (ctx: Ctx, access: "read" | "write"): SQL | undefined =>
  access === "write" || ctx.can(permissions.readAll) ? undefined : ownFamilies(ctx);

export const familyResource = defineResource({
  name: "family",
  plural: "families",
  label: "Family",
  entity: "family",
  path: "/api/v1/family",
  tag: "People",
  scope: "school",
  table: families,
  record: Record,
  view: { fields },
  toRecord: (row) => {
    const members = JSON.parse(row.parents) as z.infer<typeof FamilyParent>[];
    const children = JSON.parse(row.students) as z.infer<typeof FamilyStudent>[];
    return {
      id: row.id,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      familyNumber: row.familyNumber,
      name: row.name,
      parents: members,
      students: children,
      parentCount: members.length,
      studentCount: children.length,
    };
  },
  visibleTo,
  conflictMessage:
    "A family with this family number already exists in this school (numbers that differ only in case or accents are the same)",
});

const resource = familyResource;

const FamilyNumber = text({ max: 50 }).openapi({ example: "F-0042", description: "Unique in the school" });
const Name = text({ max: 200 }).openapi({ example: "García López" });
const Ids = (what: string) => idList({ min: 0, max: MAX_IDS, what });

const filters = {
  familyNumber: {
    schema: text({ max: 50 })
      .optional()
      .openapi({ description: "The family number, whatever its case or accents (f-0001 is F-0001)" }),
    where: (v: string) => eq(families.familyNumberSearch, fold(v)),
    example: "F-0001",
  } satisfies Filter<string>,
  name: {
    schema: searchTerm("Part of the family's name"),
    where: (v: string) => contains(families.nameSearch, v),
    example: "Parent",
  } satisfies Filter<string>,
};

const list = resource.list({
  access: permissions.read,
  filters,
  sort: { familyNumber: families.familyNumber, name: families.name, createdAt: families.createdAt },
  summary: "List the current school's families (paginated), oldest first",
  description:
    "With family.read-all, every family of the school; otherwise only the family of the parents the caller " +
    "acts for (themself, and parents whose valid delegate they are). Each family carries its parents and students.",
});

export const listFamilies = handled(list.route, async (c) =>
  c.json(await list.run(await withActing(ctxOf(c)), c.req.valid("query"), c.req.url), 200),
);

const get = resource.get({
  access: permissions.read,
  description: "Another school's family, or (without family.read-all) a family not the caller's own, is a 404.",
});

export const getFamily = handled(get.route, async (c) =>
  c.json(await resource.find(await withActing(ctxOf(c)), c.req.valid("param").id), 200),
);

/** The parent limit of the school year in effect today: the latest begun, else the first to come, else 2. */
export function parentLimit(ctx: Ctx): SQL<number> {
  const school = schoolOf(ctx);
  const today = ctx.deps.clock.now().toISOString().slice(0, 10);
  const c = schoolConfigurations;
  return sql<number>`COALESCE(
    (SELECT ${c.maxParentsPerFamily} FROM ${c} WHERE ${c.schoolId} = ${school} AND ${c.startDate} <= ${today} ORDER BY ${c.startDate} DESC LIMIT 1),
    (SELECT ${c.maxParentsPerFamily} FROM ${c} WHERE ${c.schoolId} = ${school} ORDER BY ${c.startDate} ASC LIMIT 1),
    ${DEFAULT_PARENT_LIMIT})`;
}

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
async function plan(ctx: Ctx, familyId: number | null, input: Members, replace: boolean): Promise<Plan> {
  const { db } = ctx.deps;
  const parentIds = input.parentIds ?? [];
  const studentIds = input.studentIds ?? [];
  const [family, foundParents, foundStudents, limits] = await db.batch([
    db
      .select({
        id: families.id,
        parents: sql<number>`(SELECT count(*) FROM parent AS p WHERE p.family_id = ${FAMILY_ID})`,
      })
      .from(families)
      .where(and(tenant(ctx, families), eq(families.id, familyId ?? 0))),
    db
      .select({ id: parents.id, familyId: parents.familyId })
      .from(parents)
      .where(and(tenant(ctx, parents), sql`${parents.id} IN ${jsonValues(parentIds)}`)),
    db
      .select({ id: students.id, familyId: students.familyId })
      .from(students)
      .where(and(tenant(ctx, students), isNull(students.deletedAt), sql`${students.id} IN ${jsonValues(studentIds)}`)),
    db.select({ limit: parentLimit(ctx) }).from(sql`(SELECT 1)`),
  ]);
  if (familyId !== null && !family[0]) throw notFound("Family", familyId);
  const current = family[0]?.parents ?? 0;
  const refuse = (what: string, ids: number[], found: { id: number; familyId: number | null }[]) => {
    const missing = ids.find((id) => !found.some((f) => f.id === id));
    if (missing !== undefined) throw notFound(what, missing);
    const taken = found.find((f) => f.familyId !== null && f.familyId !== familyId);
    if (taken) {
      throw conflict(
        `${what} ${taken.id} is already in another family (${taken.familyId}); ` +
          `a ${what.toLowerCase()} in two families is not allowed: take them out of it first`,
      );
    }
    return found.filter((f) => f.familyId === null).map((f) => f.id);
  };
  const newParents = refuse("Parent", parentIds, foundParents);
  const newStudents = refuse("Student", studentIds, foundStudents);
  const limit = limits[0]?.limit ?? DEFAULT_PARENT_LIMIT;
  const after = replace && input.parentIds ? parentIds.length : current + newParents.length;
  if (newParents.length && after > limit) {
    throw unprocessable(`This school allows at most ${limit} parents per family; the family would have ${after}`);
  }
  return { newParents, newStudents };
}

const parentAudit = { entity: "parent", table: parents };
const studentAudit = { entity: "student", table: students };

/**
 * The membership statements of a family's batch. With `replace`, members not listed (of a list
 * that was given) leave first. Newcomers join with one conditional UPDATE each kind: only rows
 * still in no family, and for parents only while the family's count plus the newcomers stays
 * within the limit; a guard aborts the batch unless all of them joined.
 */
function membershipStatements(
  ctx: Ctx,
  familyId: number | SQL<number>,
  input: Members,
  planned: Plan,
  replace: boolean,
): Statement[] {
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const out: Statement[] = [];
  const kinds = [
    { table: parents, audit: parentAudit, ids: input.parentIds, joining: planned.newParents, limited: true },
    { table: students, audit: studentAudit, ids: input.studentIds, joining: planned.newStudents, limited: false },
  ] as const;
  for (const kind of kinds) {
    const { table } = kind;
    if (!kind.ids) continue;
    if (replace) {
      const leaving = and(
        tenant(ctx, table),
        eq(table.familyId, familyId),
        sql`${table.id} NOT IN ${jsonValues(kind.ids)}`,
      );
      out.push(
        auditUpdate(ctx, kind.audit, leaving, { familyId: null }),
        db.update(table).set({ familyId: null, updatedAt: at }).where(leaving),
      );
    }
    if (!kind.joining.length) continue;
    const n = kind.joining.length;
    const joining = and(
      tenant(ctx, table),
      isNull(table.familyId),
      sql`${table.id} IN ${jsonValues(kind.joining)}`,
      table === students ? isNull(students.deletedAt) : undefined,
      kind.limited
        ? sql`(SELECT count(*) FROM parent AS others WHERE others.family_id = ${familyId}) + ${n} <= ${parentLimit(ctx)}`
        : undefined,
    );
    out.push(
      auditUpdate(ctx, kind.audit, joining, { familyId }),
      db.update(table).set({ familyId, updatedAt: at }).where(joining),
      guardCount(db, n),
    );
  }
  return out;
}

/** Runs a family's batch; a membership guard that failed is diagnosed again (a concurrent change won). */
async function run<S extends readonly [Statement, ...Statement[]]>(
  ctx: Ctx,
  familyId: number | null,
  input: Members,
  replace: boolean,
  statements: S,
) {
  try {
    return await commit(ctx, statements, { conflict: resource.config.conflictMessage });
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    await plan(ctx, familyId, input, replace);
    throw conflict("The family's members changed while it was being written; try again");
  }
}

const CreateBody = z.strictObject({
  familyNumber: FamilyNumber,
  name: Name,
  parentIds: Ids("Parent (profile)").optional(),
  studentIds: Ids("Student").optional(),
});

/** Creates a family with its first members, in one batch with the audit rows and the record read back. */
export async function createFamily(ctx: Ctx, input: z.infer<typeof CreateBody>) {
  const members = { parentIds: input.parentIds, studentIds: input.studentIds };
  const planned =
    input.parentIds?.length || input.studentIds?.length
      ? await plan(ctx, null, members, false)
      : { newParents: [], newStudents: [] };
  const id = insertedId(families);
  const results = await run(ctx, null, members, false, [
    ...resource.writes.insert(ctx, { familyNumber: input.familyNumber, name: input.name }),
    ...membershipStatements(ctx, id, members, planned, false),
    resource.readOne(ctx, id),
  ]);
  const [row] = results.at(-1) as unknown[];
  if (!row) throw new Error("family: the created family was not read back");
  return resource.toRecord(row, ctx);
}

export const createFamilyOperation = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/family",
    tag: "People",
    operationId: "createFamily",
    summary: "Create a family, optionally with its parents and students",
    description:
      "409 for a family number the school already has, or a parent or student already in another family; " +
      "422 when the parents would exceed the school's parent limit; an id not of this school is a 404.",
    access: permissions.write,
    audit: "family",
    errors: [409, 422],
    request: { body: jsonBody(CreateBody, "FamilyCreate") },
    responses: { 201: json(resource.record, "The new family") },
  }),
  async (c) => c.json(await createFamily(ctxOf(c), c.req.valid("json")), 201),
);

const UpdateBody = nonEmpty(
  z.strictObject({
    familyNumber: FamilyNumber.optional(),
    name: Name.optional(),
    parentIds: Ids("Parent (profile)").optional().openapi({ description: "Replaces the family's parents" }),
    studentIds: Ids("Student").optional().openapi({ description: "Replaces the family's students" }),
  }),
);

/**
 * Renames or renumbers a family and replaces the lists given (members not listed leave), in one
 * batch: the family's guarded update first (a family gone meanwhile is a 404 and changes nothing).
 */
export async function updateFamily(ctx: Ctx, id: number, input: z.infer<typeof UpdateBody>) {
  const { parentIds, studentIds, ...own } = input;
  const members = { parentIds, studentIds };
  const changesMembers = parentIds !== undefined || studentIds !== undefined;
  const planned = changesMembers ? await plan(ctx, id, members, true) : { newParents: [], newStudents: [] };
  // A family gone meanwhile fails the family's own guard: `run` diagnoses it again (404).
  await run(ctx, id, members, true, [
    ...resource.writes.update(ctx, id, own),
    ...membershipStatements(ctx, id, members, planned, true),
  ]);
}

export const updateFamilyOperation = handled(
  defineRoute({
    method: "put",
    path: "/api/v1/family/{id}",
    tag: "People",
    operationId: "updateFamily",
    summary: "Update a family: its number, name, and (replacing them) its parents and students",
    description:
      "A list given replaces the family's members of that kind (`[]` empties it); the rules of create apply.",
    access: permissions.write,
    audit: "family",
    errors: [409, 422],
    request: { params: IdParams, body: jsonBody(UpdateBody, "FamilyUpdate") },
    responses: { 204: noContent },
  }),
  async (c) => {
    await updateFamily(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
    return c.body(null, 204);
  },
);

/**
 * Deletes a family; its members stay, in no family (their `family_id` set to null, audited as
 * parent and student updates), in one batch whose family delete is guarded (absent: 404).
 */
export async function removeFamily(ctx: Ctx, id: number) {
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const statements: Statement[] = [];
  for (const [table, audit] of [
    [parents, parentAudit],
    [students, studentAudit],
  ] as const) {
    const members = and(tenant(ctx, table), eq(table.familyId, id));
    statements.push(
      auditUpdate(ctx, audit, members, { familyId: null }),
      db.update(table).set({ familyId: null, updatedAt: at }).where(members),
    );
  }
  await resource.commit(ctx, id, [...statements, ...resource.writes.delete(ctx, id)] as unknown as [
    Statement,
    ...Statement[],
  ]);
}

export const deleteFamily = handled(
  defineRoute({
    method: "delete",
    path: "/api/v1/family/{id}",
    tag: "People",
    operationId: "deleteFamily",
    summary: "Delete a family (its parents and students stay, in no family)",
    access: permissions.write,
    audit: "family",
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  async (c) => {
    await removeFamily(ctxOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  },
);

const NumberParams = z.object({
  familyNumber: z
    .string()
    .min(1)
    .max(50)
    .regex(SAFE_TEXT, UNSAFE_TEXT_MESSAGE)
    .openapi({
      param: { name: "familyNumber", in: "path" },
      example: "F-0001",
      description: "A family number, whatever its case or accents (f-0001 is F-0001)",
    }),
});

/** The family with this number (whatever its case or accents) that the caller may see, as a batch statement. */
const byNumber = (ctx: Ctx, familyNumber: string) =>
  sql<number>`(SELECT ${families.id} FROM ${families} WHERE ${resource.scoped(ctx, eq(families.familyNumberSearch, fold(familyNumber)), "read")})`;

export const familyMembers = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/family/members/{familyNumber}",
    tag: "People",
    operationId: "getFamilyMembers",
    summary: "Get a family and its members by family number",
    description: "404 when the school has no such family, or (without family.read-all) it is not the caller's.",
    access: permissions.read,
    request: { params: NumberParams },
    responses: { 200: json(resource.record, "The family with its parents and students") },
  }),
  async (c) => {
    const ctx = await withActing(ctxOf(c));
    const { familyNumber } = c.req.valid("param");
    const [row] = await resource.readOne(ctx, byNumber(ctx, familyNumber));
    if (!row) throw notFound("Family", familyNumber);
    return c.json(resource.toRecord(row, ctx), 200);
  },
);

export const familyExists = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/family/exists/{familyNumber}",
    tag: "People",
    operationId: "familyExists",
    summary: "Whether the current school has a family with this number",
    description:
      "Only the current school's families count (another school's never shows); without family.read-all, " +
      "only the caller's own family.",
    access: permissions.read,
    request: { params: NumberParams },
    responses: { 200: json(z.object({ exists: z.boolean() }).openapi("FamilyExists"), "Whether it exists") },
  }),
  async (c) => {
    const ctx = await withActing(ctxOf(c));
    const [row] = await ctx.deps.db
      .select({ exists: sql<number>`EXISTS ${byNumber(ctx, c.req.valid("param").familyNumber)}` })
      .from(sql`(SELECT 1)`);
    return c.json({ exists: row?.exists === 1 }, 200);
  },
);

const ParentLimit = z
  .object({
    limit: z.number().int().openapi({ example: 2, description: "The school's parent limit per family" }),
    parents: z.number().int().openapi({ example: 1, description: "The family's parents now" }),
    canAdd: z.boolean().openapi({ description: "Whether one more parent may join" }),
  })
  .openapi("FamilyParentLimit");

export const familyParentLimit = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/family/{id}/parent-limit",
    tag: "People",
    operationId: "getFamilyParentLimit",
    summary: "The school's parent limit for a family, and how many parents it has",
    access: permissions.read,
    request: { params: IdParams },
    responses: { 200: json(ParentLimit, "The limit and the count") },
  }),
  async (c) => {
    const ctx = await withActing(ctxOf(c));
    const id = c.req.valid("param").id;
    const [row] = await ctx.deps.db
      .select({
        limit: parentLimit(ctx),
        parents: sql<number>`(SELECT count(*) FROM parent AS p WHERE p.family_id = ${FAMILY_ID})`,
      })
      .from(families)
      .where(resource.scoped(ctx, eq(families.id, id), "read"));
    if (!row) throw notFound("Family", id);
    return c.json({ limit: row.limit, parents: row.parents, canAdd: row.parents < row.limit }, 200);
  },
);

const ValidateBody = z.strictObject({
  ids: z
    .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
    .min(1)
    .max(100)
    .openapi({ example: [1, 2], description: "Family ids, at most 100" }),
});

export const validateFamilies = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/family/validate",
    tag: "People",
    operationId: "validateFamilies",
    summary: "Which of these family ids exist in the current school",
    description:
      "Reads only (a POST for the list in the body). Another school's ids, and (without family.read-all) " +
      "families not the caller's, are missing.",
    access: permissions.read,
    request: { body: jsonBody(ValidateBody, "FamilyValidate") },
    responses: {
      200: json(
        z.object({ valid: z.array(z.number().int()), missing: z.array(z.number().int()) }).openapi("FamilyValidation"),
        "The ids found and the ids missing, in the order given",
      ),
    },
    extensions: { "x-read-only": true },
  }),
  async (c) => {
    const ctx = await withActing(ctxOf(c));
    const { ids } = c.req.valid("json");
    const rows = await ctx.deps.db
      .select({ id: families.id })
      .from(families)
      .where(resource.scoped(ctx, sql`${families.id} IN ${jsonValues(ids)}`, "read"));
    const found = new Set(rows.map((r) => r.id));
    return c.json({ valid: ids.filter((i) => found.has(i)), missing: ids.filter((i) => !found.has(i)) }, 200);
  },
);

/**
 * Adds parents to a family without touching the others (for imports): one conditional UPDATE whose
 * WHERE holds the family's count against the limit, so concurrent additions never exceed it.
 */
export async function addFamilyParents(ctx: Ctx, familyId: number, parentIds: number[]) {
  const members = { parentIds };
  const planned = await plan(ctx, familyId, members, false);
  await run(ctx, familyId, members, false, [
    ...resource.writes.update(ctx, familyId, {}, "add-parents"),
    ...membershipStatements(ctx, familyId, members, { ...planned, newStudents: [] }, false),
  ]);
}
