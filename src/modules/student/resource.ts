/**
 * Students: the school's children. The list (filters: group, level, family, status, name), the
 * record, its detail (family, guardians, groups: one D1 round trip of JSON sub-selects), create,
 * update, soft delete (one or many), restore, the list of deleted students (`deleted=true`) and the
 * Excel export. Who sees which students: ./visibility.ts. Guardians (the parent links):
 * ./guardian-routes.ts.
 */
import { z } from "@hono/zod-openapi";
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { auditUpdate } from "../../db/audit";
import { families } from "../../db/schema/family";
import { groupStudents } from "../../db/schema/group";
import { students } from "../../db/schema/student";
import { commit, GuardFailed, guard, inList, type Statement } from "../../db/write";
import { type Ctx, ctxOf, tenant } from "../../lib/context";
import { ApiError, conflict, notFound, unprocessable } from "../../lib/errors";
import { LEVELS } from "../../lib/levels";
import { Deleted, DeleteMany, recordId } from "../../lib/params";
import { defineResource, type Filter, IdParams, RecordBase } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody } from "../../lib/route";
import { containsName, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { assertOffered } from "../school/api";
import { type ApprovedTrustedPerson, trustedAddressesJson, trustedPeopleJson } from "../trusted-person/api";
import { columnsAs, contactOf, copyJoin, identity } from "../user/api";
import { permissions } from "./permissions";
import { listingDeleted, ownChildField, readerCtx, visibleTo } from "./visibility";

const STATUSES = ["active", "inactive", "graduated"] as const;
const Level = z.enum(LEVELS).openapi({ example: "elementary" });
const Status = z.enum(STATUSES).openapi({ example: "active" });
const Day = z.iso.date().openapi({ example: "2018-05-14", description: "YYYY-MM-DD" });

const Record = RecordBase.extend({
  firstName: z.string().openapi({ example: "Pablo" }),
  lastName: z.string().openapi({ example: "Parent" }),
  idNumber: z.string().nullable().openapi({ example: "S-0042", description: "The school's enrolment number" }),
  level: Level.nullable(),
  birthDate: Day.nullable(),
  status: Status,
  photo: z.string().nullable().openapi({ description: "Object key of the photo under {schoolId}/students/" }),
  familyId: z.number().int().nullable().openapi({ example: 1 }),
  deletedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When the student was deleted (only `deleted=true` lists them); null otherwise" }),
});

const fields = {
  id: students.id,
  createdAt: students.createdAt,
  updatedAt: students.updatedAt,
  firstName: students.firstName,
  lastName: students.lastName,
  idNumber: students.idNumber,
  level: students.level,
  birthDate: students.birthDate,
  status: students.status,
  photo: students.photo,
  familyId: students.familyId,
  deletedAt: students.deletedAt,
};

type Row = {
  id: number;
  createdAt: string;
  updatedAt: string;
  firstName: string;
  lastName: string;
  idNumber: string | null;
  level: (typeof LEVELS)[number] | null;
  birthDate: string | null;
  status: (typeof STATUSES)[number];
  photo: string | null;
  familyId: number | null;
  deletedAt: string | null;
};

const toStudent = (row: Row) => ({
  id: row.id,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  firstName: row.firstName,
  lastName: row.lastName,
  idNumber: row.idNumber,
  level: row.level,
  birthDate: row.birthDate,
  status: row.status,
  photo: row.photo,
  familyId: row.familyId,
  deletedAt: row.deletedAt,
});

export const studentResource = defineResource({
  name: "student",
  plural: "students",
  label: "Student",
  entity: "student",
  path: "/api/v1/student",
  tag: "People",
  scope: "school",
  table: students,
  record: Record,
  view: { fields },
  toRecord: (row) => toStudent(row),
  visibleTo,
  conflictMessage: "Another student of this school has this id number",
});
const resource = studentResource;

/** An id filter in plain digits ("1e3", "0x10", "1.0" are 400s, as for path ids). */
const Id = recordId();

export const filters = {
  group: {
    schema: Id.optional().openapi({ description: "A group id: its students" }),
    where: (v: number) =>
      sql`EXISTS (SELECT 1 FROM ${groupStudents} WHERE ${groupStudents.groupId} = ${v} AND ${groupStudents.studentId} = ${students.id})`,
    example: "1",
  } satisfies Filter<number>,
  level: {
    schema: Level.optional(),
    where: (v: (typeof LEVELS)[number]) => eq(students.level, v),
    example: "elementary",
  } satisfies Filter<(typeof LEVELS)[number]>,
  family: {
    schema: Id.optional().openapi({ description: "A family id" }),
    where: (v: number) => eq(students.familyId, v),
    example: "1",
  } satisfies Filter<number>,
  status: {
    schema: Status.optional(),
    where: (v: (typeof STATUSES)[number]) => eq(students.status, v),
    example: "active",
  } satisfies Filter<(typeof STATUSES)[number]>,
  name: {
    schema: searchTerm("Part of the first or last name"),
    where: (term: string) => containsName(students.firstNameSearch, students.lastNameSearch, term),
    example: "Pablo",
  } satisfies Filter<string>,
  deleted: {
    schema: z
      .enum(["true", "false"])
      .optional()
      .openapi({
        description:
          "true: the school's deleted students instead (holders of student.read; to find whom to restore); " +
          "false (the default): the students not deleted",
      }),
    where: (v: "true" | "false") => (v === "true" ? isNotNull(students.deletedAt) : isNull(students.deletedAt)),
    example: "true",
  } satisfies Filter<"true" | "false">,
};

const READ_DESCRIPTION =
  "Holders of student.read see the school's students; a parent (or their delegate today) the children they are " +
  "a guardian of or whose family they belong to; a teacher the students of their groups. Deleted students are not listed " +
  "or read; holders of student.read find them with the list's `deleted=true`.";

const list = resource.list({
  access: "member",
  filters,
  sort: { lastName: students.lastName, createdAt: students.createdAt },
  summary: "List the current school's students (paginated), with filters",
  description: READ_DESCRIPTION,
});
export const listStudents = {
  ...list,
  handler: async (c: any): Promise<Response> =>
    c.json(
      await list.run(listingDeleted(await readerCtx(c), c.req.valid("query")), c.req.valid("query"), c.req.url),
      200,
    ),
};

const get = resource.get({ access: "member", description: READ_DESCRIPTION });
export const getStudent = {
  ...get,
  handler: async (c: any): Promise<Response> => c.json(await get.run(await readerCtx(c), c.req.valid("param").id), 200),
};

const FirstName = text({ max: 100 }).openapi({ example: "Pablo" });
const LastName = text({ max: 100 }).openapi({ example: "Parent" });
const IdNumber = text({ max: 50 }).openapi({ example: "S-0042", description: "Unique in the school (409 if taken)" });

/** A family of this school, else 404 (another school's family does not exist here). */
async function checkFamily(ctx: Ctx, familyId: number | null | undefined) {
  if (familyId === null || familyId === undefined) return;
  const [found] = await ctx.deps.db
    .select({ id: families.id })
    .from(families)
    .where(and(eq(families.id, familyId), tenant(ctx, families)))
    .limit(1);
  if (!found) throw notFound("Family", familyId);
}

export const createStudent = resource.create({
  access: permissions.write,
  input: z.object({
    firstName: FirstName,
    lastName: LastName,
    level: Level.optional(),
    idNumber: IdNumber.optional(),
    birthDate: Day.optional(),
    familyId: recordId().optional().openapi({ description: "A family of this school (404 otherwise)" }),
    status: Status.optional(),
  }),
  values: async (input, ctx) => {
    await checkInput(ctx, input);
    return input;
  },
  description:
    "A student belongs to at most one family (familyId). 409 when the id number is taken in the school; 422 for " +
    "a level the school does not offer or a birth date after today.",
  errors: [422],
});

export const updateStudent = resource.update({
  access: permissions.write,
  input: z.object({
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    level: Level.nullable().optional(),
    idNumber: IdNumber.nullable().optional(),
    birthDate: Day.nullable().optional(),
    familyId: recordId().nullable().optional().openapi({ description: "A family of this school, or null" }),
    status: Status.optional(),
  }),
  values: async (input, ctx, id) => {
    await checkInput(ctx, input);
    if (typeof input.familyId === "number") await notInAnotherFamily(ctx, id, input.familyId);
    return input;
  },
  description:
    "`familyId` puts the student in a family of this school (404 otherwise); a student already in another family " +
    "is a 409 (a student is in one family: set `familyId` to null first, so a move is never silent). 422 for a " +
    "level the school does not offer or a birth date after today.",
  errors: [422],
});

const DAY_MS = 24 * 3600 * 1000;

/**
 * What the schema cannot tell: the family is this school's (404), the level one it offers (422),
 * the birth date not after today (422; a day's grace for the time zones ahead of UTC).
 */
async function checkInput(
  ctx: Ctx,
  input: { familyId?: number | null; level?: (typeof LEVELS)[number] | null; birthDate?: string | null },
) {
  const latest = new Date(ctx.deps.clock.now().getTime() + DAY_MS).toISOString().slice(0, 10);
  if (input.birthDate && input.birthDate > latest) {
    throw unprocessable(`The birth date ${input.birthDate} is after today`);
  }
  await Promise.all([checkFamily(ctx, input.familyId), input.level ? assertOffered(ctx, input.level) : undefined]);
}

/** A student joining `familyId` must be in no family (or already in that one), else 409 as the families module says. */
async function notInAnotherFamily(ctx: Ctx, id: number, familyId: number) {
  const [row] = await ctx.deps.db
    .select({ familyId: students.familyId })
    .from(students)
    .where(resource.scoped(ctx, eq(students.id, id), "write"))
    .limit(1);
  if (!row) throw notFound("Student", id);
  if (row.familyId !== null && row.familyId !== familyId) {
    throw conflict(
      `Student ${id} is already in another family (${row.familyId}); a student in two families is not allowed: ` +
        "take them out of it first",
    );
  }
}

/** The soft delete of one student: `deleted_at` set (audited as a delete); records naming them keep it. */
const softDelete = (ctx: Ctx, id: number) =>
  resource.writes.update(ctx, id, { deletedAt: ctx.deps.clock.now().toISOString() }, "delete");

export const deleteStudent = handled(
  defineRoute({
    method: "delete",
    path: "/api/v1/student/{id}",
    tag: "People",
    operationId: "deleteStudent",
    summary: "Delete a student (soft: kept for the records that name them)",
    access: permissions.write,
    audit: "student",
    request: { params: IdParams },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const id = c.req.valid("param").id;
    const ctx = ctxOf(c);
    await resource.commit(ctx, id, softDelete(ctx, id));
    return c.body(null, 204);
  },
);

/**
 * Soft-deletes the students all at once, or none: ids that are not (or no longer) students of
 * this school are a 404 naming them. One read, then one batch whose guards abort it if any of
 * them was deleted meanwhile (then the read again names them).
 */
export async function deleteMany(ctx: Ctx, ids: number[]): Promise<number[]> {
  const missing = async () => {
    const rows = await ctx.deps.db
      .select({ id: students.id })
      .from(students)
      .where(resource.scoped(ctx, inList(students.id, ids), "write"));
    const here = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !here.has(id));
  };
  const refuse = (gone: number[]) =>
    new ApiError(404, `Student${gone.length > 1 ? "s" : ""} ${gone.join(", ")} not found; nothing was deleted`);
  const before = await missing();
  if (before.length) throw refuse(before);
  const statements = ids.flatMap((id) => softDelete(ctx, id)) as unknown as [Statement, ...Statement[]];
  try {
    await commit(ctx, statements);
  } catch (err) {
    const gone = await missing();
    if (gone.length) throw refuse(gone);
    throw err;
  }
  return ids;
}

/** "Delete multiple students": POST and DELETE on the same path are the same operation, as for groups. */
const deleteSeveral = (method: "post" | "delete", operationId: string) =>
  handled(
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
    async (c) => c.json({ deleted: await deleteMany(ctxOf(c), c.req.valid("json").ids) }, 200),
  );

export const deleteStudents = deleteSeveral("post", "deleteStudents");
export const deleteMultipleStudents = deleteSeveral("delete", "deleteMultipleStudents");

/**
 * Why student `id` cannot be restored, or nothing when it can: not a student of this school (404),
 * not deleted (409), or its id number now held by a student not deleted (409 naming them: two live
 * students never share one).
 */
async function restoreRefusal(ctx: Ctx, id: number): Promise<ApiError | undefined> {
  const [row] = await ctx.deps.db
    .select({
      deletedAt: students.deletedAt,
      idNumber: students.idNumber,
      // Qualified by hand: drizzle prints a lone table's columns unqualified, which here would bind to `o`.
      holder: sql<
        number | null
      >`(SELECT o.id FROM student o WHERE o.school_id = "student"."school_id" AND o.id_number = "student"."id_number" AND o.deleted_at IS NULL LIMIT 1)`,
    })
    .from(students)
    .where(and(eq(students.id, id), tenant(ctx, students)))
    .limit(1);
  if (!row) return notFound("Student", id);
  if (row.deletedAt === null) return conflict(`Student ${id} is not deleted`);
  if (row.holder !== null) {
    return conflict(
      `Student ${row.holder} now has the id number ${row.idNumber}; change or delete that student's id number first`,
    );
  }
  return undefined;
}

/**
 * Restores a deleted student: `deleted_at` cleared (audited as `restore`). Delete removed nothing
 * else, so what it hid comes back with them: family, guardians, groups, trusted people.
 */
export async function restoreStudent(ctx: Ctx, id: number): Promise<z.output<typeof Record>> {
  const refused = await restoreRefusal(ctx, id);
  if (refused) throw refused;
  const { db } = ctx.deps;
  const where = and(eq(students.id, id), tenant(ctx, students), isNotNull(students.deletedAt));
  const set = { deletedAt: null, updatedAt: ctx.deps.clock.now().toISOString() };
  try {
    const results = await commit(ctx, [
      auditUpdate(ctx, resource.audit, where, set, "restore"),
      db.update(students).set(set).where(where),
      guard(db),
      resource.readOne(ctx, id),
    ]);
    const row = (results.at(-1) as unknown[])[0];
    return resource.toRecord(row, ctx);
  } catch (err) {
    // Changed since the read (restored meanwhile, or its number taken): the read again says how.
    if (err instanceof GuardFailed || (err instanceof ApiError && err.status === 409)) {
      throw (await restoreRefusal(ctx, id)) ?? err;
    }
    throw err;
  }
}

export const restoreStudentOperation = handled(
  defineRoute({
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
    request: { params: IdParams },
    responses: { 200: json(resource.record, "The student, restored") },
  }),
  async (c) => c.json(await restoreStudent(ctxOf(c), c.req.valid("param").id), 200),
);

// ------------------------------------------------------------------------------------ the detail

const Guardian = z
  .object({
    id: z.number().int().openapi({ example: 1, description: "The guardian link's id" }),
    parentId: z.number().int().openapi({ example: 1 }),
    userId: z.number().int().openapi({ example: 4 }),
    firstName: z.string(),
    lastName: z.string(),
    relationship: z.enum(["mother", "father", "guardian", "grandparent", "other"]),
    canPickUp: z.boolean(),
    canRequestChanges: z.boolean(),
    receivesNotifications: z.boolean(),
    restricted: z.boolean().openapi({ description: "The school restricted this guardian (see restriction)" }),
    restriction: z
      .object({
        reason: z.string().nullable(),
        documentId: z.number().int().nullable(),
        from: Day.nullable(),
        until: Day.nullable(),
      })
      .nullable()
      .openapi({ description: "Shown to holders of student.read; null to others or when not restricted" }),
  })
  .openapi("StudentGuardian");

const Detail = Record.extend({
  family: z
    .object({ id: z.number().int(), familyNumber: z.string(), name: z.string() })
    .nullable()
    .openapi({ description: "The student's family" }),
  guardians: z.array(Guardian),
  groups: z.array(
    z.object({ id: z.number().int(), name: z.string(), level: Level, schoolYear: z.string() }).openapi("StudentGroup"),
  ),
  trustedPeople: z
    .array(
      z
        .object({
          id: z.number().int(),
          name: z.string(),
          relationship: z.string(),
          phone: z.string().nullable().openapi({
            description: "Masked without user.contact, except for the student's own parents (and their delegates)",
          }),
        })
        .openapi("StudentTrustedPerson"),
    )
    .openapi({ description: "Approved trusted people (who may pick the student up besides guardians)" }),
  trustedAddresses: z
    .array(
      z
        .object({
          id: z.number().int(),
          street: z.string(),
          number: z.string().nullable(),
          city: z.string(),
          country: z.string(),
          routeStopId: z.number().int().nullable(),
        })
        .openapi("StudentTrustedAddress"),
    )
    .openapi({ description: "Approved trusted addresses (where the bus may drop the student)" }),
}).openapi("StudentDetail");

/** Guardians' names as this school knows them (src/modules/user/identity.ts). */
const guardianName = identity(columnsAs("u"), columnsAs("gc"));

// The sub-selects name their tables explicitly (drizzle prints a lone table's columns unqualified,
// which inside a correlated sub-select would bind to the inner table).
const detailFields = {
  ...Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, sql`${f}`.mapWith(f).as(k)])),
  family: sql<
    string | null
  >`(SELECT json_object('id', f.id, 'familyNumber', f.family_number, 'name', f.name) FROM family f WHERE f.id = "student"."family_id")`.as(
    "family",
  ),
  guardians:
    sql<string>`(SELECT json_group_array(json_object('id', g.id, 'parentId', g.parent_id, 'userId', p.user_id, 'firstName', ${guardianName.firstName}, 'lastName', ${guardianName.lastName}, 'relationship', g.relationship, 'canPickUp', g.can_pick_up, 'canRequestChanges', g.can_request_changes, 'receivesNotifications', g.receives_notifications, 'restricted', g.restricted, 'reason', g.restriction_reason, 'documentId', g.restriction_document_id, 'from', g.restriction_from, 'until', g.restriction_until)) FROM guardian g INNER JOIN parent p ON p.id = g.parent_id INNER JOIN user u ON u.id = p.user_id ${copyJoin("gc", sql.raw("p.user_id"), sql.raw("g.school_id"))} WHERE g.student_id = "student"."id")`.as(
      "guardians",
    ),
  groups:
    sql<string>`(SELECT json_group_array(json_object('id', sg.id, 'name', sg.name, 'level', sg.level, 'schoolYear', sg.school_year)) FROM group_student gs INNER JOIN school_group sg ON sg.id = gs.group_id WHERE gs.student_id = "student"."id")`.as(
      "groups",
    ),
  trustedPeople: trustedPeopleJson(students.id).as("trusted_people"),
  trustedAddresses: trustedAddressesJson(students.id).as("trusted_addresses"),
};

type GuardianJson = Omit<
  z.infer<typeof Guardian>,
  "restriction" | "canPickUp" | "canRequestChanges" | "receivesNotifications" | "restricted"
> & {
  canPickUp: number;
  canRequestChanges: number;
  receivesNotifications: number;
  restricted: number;
  reason: string | null;
  documentId: number | null;
  from: string | null;
  until: string | null;
};

/** The detail of a student this caller may see (404 otherwise): one query, so one D1 round trip. */
export async function studentDetail(ctx: Ctx, id: number): Promise<z.infer<typeof Detail>> {
  const [row] = (await ctx.deps.db
    .select({ ...detailFields, ownChild: ownChildField(ctx).as("own_child") })
    .from(students)
    .where(resource.scoped(ctx, eq(students.id, id), "read"))
    .limit(1)) as (Row & {
    family: string | null;
    guardians: string;
    groups: string;
    trustedPeople: string;
    trustedAddresses: string;
    ownChild: number;
  })[];
  if (!row) throw notFound("Student", id);
  const staff = ctx.can(permissions.read);
  const guardianList = (JSON.parse(row.guardians) as GuardianJson[]).map((g) => ({
    id: g.id,
    parentId: g.parentId,
    userId: g.userId,
    firstName: g.firstName,
    lastName: g.lastName,
    relationship: g.relationship,
    canPickUp: Boolean(g.canPickUp),
    canRequestChanges: Boolean(g.canRequestChanges),
    receivesNotifications: Boolean(g.receivesNotifications),
    restricted: Boolean(g.restricted),
    restriction:
      staff && g.restricted ? { reason: g.reason, documentId: g.documentId, from: g.from, until: g.until } : null,
  }));
  return {
    ...toStudent(row),
    family: row.family ? JSON.parse(row.family) : null,
    guardians: guardianList.sort((a, b) => a.id - b.id),
    groups: (JSON.parse(row.groups) as z.infer<typeof Detail>["groups"]).sort((a, b) => a.id - b.id),
    // Their own parents call them; anyone else sees the phones with user.contact only.
    trustedPeople: (JSON.parse(row.trustedPeople) as ApprovedTrustedPerson[]).map((p) => ({
      ...p,
      ...contactOf(ctx, null, { phone: p.phone }, row.ownChild === 1),
    })),
    trustedAddresses: JSON.parse(row.trustedAddresses),
  };
}

export const getStudentDetail = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/student/{id}/detail",
    tag: "People",
    operationId: "getStudentDetail",
    summary:
      "Get a student's detail: family, guardians (capabilities, restriction), groups, approved trusted people and addresses",
    description: `${READ_DESCRIPTION} One D1 round trip for staff.`,
    access: "member",
    request: { params: IdParams },
    responses: { 200: json(Detail, "The student's detail") },
  }),
  async (c) => c.json(await studentDetail(await readerCtx(c), c.req.valid("param").id), 200),
);

// ------------------------------------------------------------------------------------ the export

const exported = resource.export({
  access: "member",
  list,
  filename: "students.xlsx",
  sheet: "Students",
  columns: [
    "Id",
    "First name",
    "Last name",
    "Id number",
    "Level",
    "Birth date",
    "Status",
    "Family number",
    "Family",
    "Created at",
  ],
  extra: {
    fields: () => ({ familyNumber: families.familyNumber, familyName: families.name }),
    join: (q) => q.leftJoin(families, eq(families.id, students.familyId)),
  },
  cells: (r) => [
    r.id,
    r.firstName,
    r.lastName,
    r.idNumber,
    r.level,
    r.birthDate,
    r.status,
    r.familyNumber,
    r.familyName,
    r.createdAt,
  ],
  description: `The list's filters, sort and visibility apply. ${READ_DESCRIPTION} The file is streamed as it is read.`,
  file: "An .xlsx workbook with one sheet, Students",
});
export const exportStudents = {
  ...exported,
  handler: async (c: any): Promise<Response> =>
    exported.respond(listingDeleted(await readerCtx(c), c.req.valid("query")), c.req.valid("query")),
};

/** A student of this school the caller may write (404 otherwise), for the guardian routes. */
export const findStudent = (ctx: Ctx, id: number) => resource.find(ctx, id);
