/**
 * Staff profiles: what teachers (src/modules/teacher) and administrative staff
 * (src/modules/administrative-user) share. Each is a built-in role's profile row (migration 0017
 * keeps it in step with `role_user`: giving the role creates the row, taking it away deletes it),
 * read joined with the person (`user`). The resource's `id` is the profile's, `userId` the person's.
 *
 * - Create: by `userId` (one of this school's people) or by `phone` (one person, one user: a known
 *   number attaches the role to the same user, in any school; an unknown one invites a new user),
 *   via `addPerson`/`giveRoles` of src/modules/user/person.ts. One batch: the role (and the invited user),
 *   a guard that aborts when the role was already held (409, also when requests race), the profile's
 *   own fields, its audit row, and the record read back.
 * - Update: the person's name and email and the profile's fields, in one batch (two audit rows).
 * - Delete: the role's `role_user` row goes (its profile follows by trigger); the user and their
 *   membership of the school stay.
 * - People removed from the school (`school_user.deleted_at` set) are never listed or read.
 * - Giving or taking the role needs every permission it grants; editing the person, or taking the
 *   role from someone who holds more than the caller, is refused (403: src/modules/role/grants.ts).
 *
 * `staffOperations` declares the create, update, delete and export operations of such a profile
 * from its role and its one field of its own (a teacher's subjects, a staff member's position).
 */
import { z } from "@hono/zod-openapi";
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type AuditTarget, auditCreate, auditDelete } from "../../db/audit";
import { roleUsers, users } from "../../db/schema/core";
import { schoolUsers } from "../../db/schema/user";
import { withSearch } from "../../db/search";
import { commit, GuardFailed, guard, inList, insertedId, type Statement } from "../../db/write";
import { type Access, BUILTIN_ROLES } from "../../lib/access";
import { type Ctx, ctxOf, schoolOf, tenant } from "../../lib/context";
import { ApiError, conflict, notFound } from "../../lib/errors";
import { Phone } from "../../lib/phone";
import { type ExportSpec, type Filter, IdParams, type ListQuery, nonEmpty } from "../../lib/resource/old";
import { defineRoute, json, jsonBody, noContent, type Operation, type Tag } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import type { Cell } from "../../lib/xlsx";
import { mayActOn, mayAssign, mayTake } from "../role/api";
import { Email } from "../school/api";
import {
  addPerson,
  contactOf,
  copyOf,
  copyTable,
  editPerson,
  FirstName,
  giveRoles,
  identity,
  LastName,
  MASKED_CONTACT,
  nameContains,
  roleUserAudit,
  takenRoleAudits,
} from "../user/api";

type ProfileTable = SQLiteTable & {
  id: SQLiteColumn;
  schoolId: SQLiteColumn;
  userId: SQLiteColumn;
  employeeNumber: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
};

/** What the shared verbs need of a staff resource (a `defineResource` result). */
export interface StaffResource {
  audit: AuditTarget;
  config: { label: string; table: ProfileTable };
  writes: { update(ctx: Ctx, id: number, set: Record<string, unknown>): readonly Statement[] };
  readOne(ctx: Ctx, id: number | SQL<number>): Statement;
  toRecord(row: unknown, ctx: Ctx): unknown;
  scoped(ctx: Ctx, extra: SQL | undefined, access: "read" | "write"): SQL | undefined;
  find(ctx: Ctx, id: number): Promise<{ userId: number }>;
}

export const EmployeeNumber = text({ max: 50 }).openapi({
  example: "T-0042",
  description: "The school's own staff number (unique in the school when set)",
});
const UserId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const Language = z.enum(["es", "en"]);
export const UserStatus = z.enum(["invited", "active", "inactive"]);

/** The person's fields of a staff record. */
export const PersonRecord = {
  userId: z.number().int().openapi({ example: 3 }),
  firstName: z.string().openapi({ example: "Tomás" }),
  lastName: z.string().openapi({ example: "Teacher" }),
  email: z.string().nullable().openapi({ description: MASKED_CONTACT }),
  phone: z.string().openapi({ example: "+15550000003", description: MASKED_CONTACT }),
  status: UserStatus.openapi({ description: "The user's: invited (has never signed in), active, inactive" }),
  language: z.string().openapi({ example: "es" }),
};

/** A staff view's row: the person's fields (`personFields`) and the profile's. */
export interface PersonRow {
  id: number;
  createdAt: string;
  updatedAt: string;
  userId: number;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string;
  status: z.infer<typeof UserStatus>;
  language: string;
}

/**
 * The record's person part, in the record's order (the profile's fields follow); phone and email as
 * this caller may see them (src/modules/user/contact.ts).
 */
export const personRecord = (row: PersonRow, ctx: Ctx) => ({
  id: row.id,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  userId: row.userId,
  firstName: row.firstName,
  lastName: row.lastName,
  ...contactOf(ctx, row.userId, { email: row.email, phone: row.phone }),
  status: row.status,
  language: row.language,
});

/** The school's copy of the person's identity, when it has one (src/modules/user/identity.ts). */
const personCopy = copyTable("staff_copy");
const person = identity(users, personCopy);

/** The person's columns of the view (joined by `joinPerson`): name and email as this school knows them. */
export const personFields = <T extends ProfileTable>(table: T) => ({
  id: table.id as T["id"],
  createdAt: table.createdAt as T["createdAt"],
  updatedAt: table.updatedAt as T["updatedAt"],
  userId: table.userId as T["userId"],
  firstName: person.firstName,
  lastName: person.lastName,
  email: person.email,
  phone: users.phone,
  status: users.status,
  language: users.language,
});

export const joinPerson = (table: ProfileTable) => (q: any) =>
  q.innerJoin(users, eq(users.id, table.userId)).leftJoin(personCopy, copyOf(personCopy, table.userId, table.schoolId));

/**
 * Not removed from the school: people the school deleted (soft, `school_user.deleted_at`) are not
 * its staff any more. A correlated lookup by the unique (school, user) index; the count query,
 * which has no join, uses it as is.
 */
export const notRemoved = (table: ProfileTable): SQL =>
  sql`NOT EXISTS (SELECT 1 FROM ${schoolUsers} WHERE ${schoolUsers.schoolId} = ${table.schoolId} AND ${schoolUsers.userId} = ${table.userId} AND ${schoolUsers.deletedAt} IS NOT NULL)`;

/** The person's filters: part of the name, and the user's status (correlated lookups by primary key). */
export function personFilters(table: ProfileTable) {
  const person = (cond: SQL | undefined) =>
    sql`EXISTS (SELECT 1 FROM ${users} WHERE ${and(eq(users.id, table.userId), cond)})`;
  return {
    name: {
      schema: searchTerm("Part of the first or last name"),
      where: (term: string) => nameContains(table.userId, table.schoolId, term),
      example: "Ana",
    } satisfies Filter<string>,
    status: {
      schema: UserStatus.optional().openapi({ description: "The user's status" }),
      where: (status: z.infer<typeof UserStatus>) => person(eq(users.status, status)),
      example: "active",
    } satisfies Filter<z.infer<typeof UserStatus>>,
  };
}

/** A create body: `userId`, or `phone` and `firstName` (with `lastName`, `email`, `language`), plus the profile's fields. */
export function createBody<S extends z.ZodRawShape>(profile: S) {
  return z
    .strictObject({
      userId: UserId.optional().openapi({ description: "One of this school's people", example: 3 }),
      phone: Phone.optional().openapi({
        description: "Anyone's number (E.164): the same user when known (in any school), a new invited user when not",
      }),
      firstName: FirstName.optional().openapi({ description: "With phone: the new user's first name (required)" }),
      lastName: LastName.optional(),
      email: Email.nullable().optional(),
      language: Language.optional().openapi({ description: "With phone: a new user's language (default es)" }),
      ...profile,
    })
    .superRefine((v: Record<string, unknown>, issue) => {
      const add = (path: string, message: string) => issue.addIssue({ code: "custom", path: [path], message });
      if (v.userId === undefined && v.phone === undefined) add("userId", "Send userId, or phone and firstName");
      if (v.userId !== undefined) {
        for (const key of ["phone", "firstName", "lastName", "email", "language"]) {
          if (v[key] !== undefined) add(key, "Not with userId: send userId alone, or phone and a name");
        }
      } else if (v.phone !== undefined && v.firstName === undefined) {
        add("firstName", "Required with phone");
      }
    });
}

/** The person's part of an update body. */
export const personUpdate = {
  firstName: FirstName.optional(),
  lastName: LastName.optional(),
  email: Email.nullable().optional(),
};

export interface PersonInput {
  userId?: number;
  phone?: string;
  firstName?: string;
  lastName?: string;
  email?: string | null;
  language?: "es" | "en";
}

/** 409 for a taken employee number, when that is what a unique index refused. */
async function employeeNumberTaken(ctx: Ctx, resource: StaffResource, employeeNumber: string | null | undefined) {
  if (!employeeNumber) return;
  const table = resource.config.table;
  const [taken] = await ctx.deps.db
    .select({ id: table.id })
    .from(table)
    .where(and(tenant(ctx, table), eq(table.employeeNumber, employeeNumber)))
    .limit(1);
  if (taken) throw conflict(`Employee number ${employeeNumber} is already used in this school`);
}

/**
 * Gives the person the role and the profile its fields, in one batch (see the file's comment).
 * `profile` is the profile's own column values.
 */
export async function createStaff(
  ctx: Ctx,
  resource: StaffResource,
  role: "teacher" | "staff",
  input: PersonInput,
  profile: Record<string, unknown> & { employeeNumber?: string | null },
) {
  const { db } = ctx.deps;
  const table = resource.config.table;
  const already = `This person is already ${role === "teacher" ? "a teacher" : "administrative staff"} of this school`;
  let userId: number | SQL<number>;
  const statements: Statement[] = [];
  if (input.userId !== undefined) {
    await mayAssign(ctx, [BUILTIN_ROLES[role].id]);
    // One of this school's people (not removed): another school's people are not this school's to see.
    const [member] = await db
      .select({ id: schoolUsers.id })
      .from(schoolUsers)
      .where(and(tenant(ctx, schoolUsers), eq(schoolUsers.userId, input.userId), sql`${schoolUsers.deletedAt} IS NULL`))
      .limit(1);
    if (!member) throw notFound("User", input.userId);
    userId = input.userId;
    statements.push(...giveRoles(ctx, eq(users.id, userId), [role]));
  } else {
    const added = await addPerson(
      ctx,
      {
        phone: input.phone ?? "",
        firstName: input.firstName,
        lastName: input.lastName,
        email: input.email,
        language: input.language,
      },
      { roles: [role] },
    );
    userId = added.userId;
    statements.push(...added.statements);
  }
  // The role's audit row is written only when the role was: nothing written means it was held.
  statements.push(guard(db));
  const profileId = insertedId(table);
  const at = ctx.deps.clock.now().toISOString();
  const schoolId = schoolOf(ctx);
  const batch: [Statement, ...Statement[]] = [
    ...(statements as [Statement, ...Statement[]]),
    // The profile row was just inserted by the role's trigger (migration 0017): it is the table's last id.
    db
      .update(table)
      .set(withSearch(table, { ...profile, updatedAt: at }) as never)
      .where(and(eq(table.id, profileId), eq(table.schoolId, schoolId))),
    auditCreate(ctx, resource.audit, { userId, ...profile }, schoolId),
    resource.readOne(ctx, profileId),
  ];
  let results: unknown[];
  try {
    results = await commit(ctx, batch, { conflict: already });
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(already);
    if (err instanceof ApiError && err.status === 409) await employeeNumberTaken(ctx, resource, profile.employeeNumber);
    throw err;
  }
  const [row] = results.at(-1) as unknown[];
  if (!row) throw new Error(`${resource.config.label}: the created profile was not read back`);
  return resource.toRecord(row, ctx);
}

/**
 * Edits the person (name, email: wherever else they belong) and the profile's fields, in one batch:
 * the profile's guarded UPDATE first (removed meanwhile: 404, nothing changed), then the user's.
 */
export async function updateStaff(
  ctx: Ctx,
  resource: StaffResource,
  id: number,
  person: { firstName?: string; lastName?: string; email?: string | null },
  profile: Record<string, unknown> & { employeeNumber?: string | null },
) {
  const { userId } = await resource.find(ctx, id);
  const statements: Statement[] = [...resource.writes.update(ctx, id, profile)];
  if (Object.values(person).some((v) => v !== undefined)) {
    // Editing the person (the same user in every school) is acting on them; the profile's own
    // fields are the school's record of the role.
    await mayActOn(ctx, [userId]);
    statements.push(...(await editPerson(ctx, userId, person)));
  }
  try {
    await commit(ctx, statements as [Statement, ...Statement[]], {
      conflict: `Employee number ${profile.employeeNumber} is already used in this school`,
    });
  } catch (err) {
    if (err instanceof GuardFailed) {
      await resource.find(ctx, id); // 404 when it went meanwhile
      throw conflict(`${resource.config.label} ${id} changed while it was being written; try again`);
    }
    throw err;
  }
}

/**
 * Takes the role away in this school (the profile follows by trigger); the user and their
 * membership of the school stay. Audited as the profile's delete and the role assignment's.
 */
export async function removeStaff(ctx: Ctx, resource: StaffResource, id: number, role: "teacher" | "staff") {
  const { db } = ctx.deps;
  const table = resource.config.table;
  const profile = resource.scoped(ctx, eq(table.id, id), "write");
  await mayTake(ctx, [BUILTIN_ROLES[role].id], sql`SELECT ${table.userId} FROM ${table} WHERE ${profile}`);
  const roleWhere = and(
    eq(roleUsers.schoolId, schoolOf(ctx)),
    eq(roleUsers.roleId, BUILTIN_ROLES[role].id),
    inList(roleUsers.userId, db.select({ userId: table.userId }).from(table).where(profile)),
  );
  try {
    await commit(ctx, [
      auditDelete(ctx, roleUserAudit, roleWhere),
      // The profile and what goes with it (a teacher's group rows), as when the role is taken elsewhere.
      ...takenRoleAudits(ctx, roleWhere),
      db.delete(roleUsers).where(roleWhere),
      guard(db),
    ]);
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(resource.config.label, id);
    throw err;
  }
}

/** A staff profile's own field besides the employee number (a teacher's subjects, a position). */
export interface ProfileField<K extends string, S extends z.ZodType> {
  key: K;
  /** Its body schema (optional in both bodies). */
  schema: S;
  /** Its column value from the body's. */
  column: (value: z.output<S>) => unknown;
  /** Its export column: the header and the cell of the record's value. */
  header: string;
  cell: (value: never) => Cell;
}

/** What a staff resource offers the operations besides the shared verbs. */
interface StaffOperationsResource extends StaffResource {
  config: StaffResource["config"] & { name: string; path: string; tag: Tag; entity: string };
  record: z.ZodType;
  export(spec: ExportSpec<any, Record<string, never>>): Operation;
}

export interface StaffSpec<K extends string, S extends z.ZodType> {
  role: "teacher" | "staff";
  read: Access;
  write: Access;
  field: ProfileField<K, S>;
  /** The list whose query the export takes. */
  list: ListQuery<Record<string, Filter<any>>>;
  create: { summary: string; description: string; created: string };
  update: { summary: string };
  remove: { summary: string };
  export: { summary: string; file: string; filename: string; sheet: string };
}

/**
 * The create, update, delete and export operations of a staff profile (teachers, administrative
 * staff): the same bodies (the person's fields, the profile's field and employee number), verbs and
 * export columns, named after the resource (`createTeacher`, `TeacherCreate`, ...).
 */
export function staffOperations<K extends string, S extends z.ZodType>(
  resource: StaffOperationsResource,
  spec: StaffSpec<K, S>,
) {
  const { config } = resource;
  const Name = config.name.charAt(0).toUpperCase() + config.name.slice(1);
  const { field } = spec;
  /** The profile's column values of a body (only the fields sent). */
  const profileOf = (body: Record<string, unknown>) => {
    const { [field.key]: value, employeeNumber, ...person } = body;
    const profile = {
      ...(value !== undefined ? { [field.key]: field.column(value as z.output<S>) } : {}),
      ...(employeeNumber !== undefined ? { employeeNumber: employeeNumber as string | null } : {}),
    };
    return { person, profile };
  };

  const CreateBody = createBody({ [field.key]: field.schema.optional(), employeeNumber: EmployeeNumber.optional() });
  const create = {
    route: defineRoute({
      method: "post",
      path: config.path,
      tag: config.tag,
      operationId: `create${Name}`,
      summary: spec.create.summary,
      description:
        "Send `userId` (one of this school's people) or `phone` and `firstName` (anyone: the same user when the " +
        `number is known, in any school, the name sent being this school's own for them; a new invited user when not), ` +
        spec.create.description,
      access: spec.write,
      audit: config.entity,
      errors: [409],
      request: { body: jsonBody(CreateBody, `${Name}Create`) },
      responses: { 201: json(resource.record, spec.create.created) },
    }),
    handler: async (c: any): Promise<Response> => {
      const { person, profile } = profileOf(c.req.valid("json"));
      return c.json(await createStaff(ctxOf(c), resource, spec.role, person, profile), 201);
    },
  };

  const UpdateBody = nonEmpty(
    z.strictObject({
      ...personUpdate,
      [field.key]: field.schema.optional(),
      employeeNumber: EmployeeNumber.nullable().optional(),
    }),
  );
  const update = {
    route: defineRoute({
      method: "put",
      path: `${config.path}/{id}`,
      tag: config.tag,
      operationId: `update${Name}`,
      summary: spec.update.summary,
      description:
        "The name and email are the person's (the same user wherever they belong). 409: employee number taken.",
      access: spec.write,
      audit: config.entity,
      errors: [409],
      request: { params: IdParams, body: jsonBody(UpdateBody, `${Name}Update`) },
      responses: { 204: noContent },
    }),
    handler: async (c: any): Promise<Response> => {
      const { person, profile } = profileOf(c.req.valid("json"));
      await updateStaff(ctxOf(c), resource, c.req.valid("param").id, person, profile);
      return c.body(null, 204);
    },
  };

  const remove = {
    route: defineRoute({
      method: "delete",
      path: `${config.path}/{id}`,
      tag: config.tag,
      operationId: `delete${Name}`,
      summary: spec.remove.summary,
      access: spec.write,
      audit: config.entity,
      request: { params: IdParams },
      responses: { 204: noContent },
    }),
    handler: async (c: any): Promise<Response> => {
      await removeStaff(ctxOf(c), resource, c.req.valid("param").id, spec.role);
      return c.body(null, 204);
    },
  };

  const exported = resource.export({
    access: spec.read,
    list: spec.list,
    filename: spec.export.filename,
    sheet: spec.export.sheet,
    columns: [
      "Id",
      "User id",
      "First name",
      "Last name",
      "Phone",
      "Email",
      "Status",
      "Language",
      field.header,
      "Employee number",
      "Created at",
    ],
    cells: (row, ctx) => {
      const r = resource.toRecord(row, ctx) as PersonRow & { employeeNumber: string | null } & Record<K, never>;
      return [
        r.id,
        r.userId,
        r.firstName,
        r.lastName,
        r.phone,
        r.email,
        r.status,
        r.language,
        field.cell(r[field.key]),
        r.employeeNumber,
        r.createdAt,
      ];
    },
    summary: spec.export.summary,
    file: spec.export.file,
  });

  return { create, update, delete: remove, export: exported };
}
