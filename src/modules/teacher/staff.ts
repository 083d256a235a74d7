/**
 * Staff profiles: what teachers (src/modules/teacher) and administrative staff
 * (src/modules/administrative-user) share. Each is a built-in role's profile row (migration 0017
 * keeps it in step with `role_user`: giving the role creates the row, taking it away deletes it),
 * read joined with the person (`user`). The resource's `id` is the profile's, `userId` the person's.
 *
 * - Create: by `userId` (one of this school's people) or by `phone` (one person, one user: a known
 *   number attaches the role to the same user, in any school; an unknown one invites a new user),
 *   via `addPerson`/`giveRoles` of the user module. One batch: the role (and the invited user),
 *   a guard that aborts when the role was already held (409, also when requests race), the profile's
 *   own fields, its audit row, and the record read back.
 * - Update: the person's name and email and the profile's fields, in one batch (two audit rows).
 * - Delete: the role's `role_user` row goes (its profile follows by trigger); the user and their
 *   membership of the school stay.
 * - People removed from the school (`school_user.deleted_at` set) are never listed or read.
 * - Giving or taking the role needs every permission it grants; editing the person, or taking the
 *   role from someone who holds more than the caller, is refused (403: src/modules/role/grants.ts).
 *
 * `staffOperations` declares the create, update and delete operations of such a profile from its
 * role and its one field of its own (a teacher's subjects, a staff member's position).
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import type { Query } from "../../db/query";
import { RoleUsers, roleUsers, Users, users } from "../../db/schema/core";
import { SchoolPeople, SchoolUsers, schoolUsers } from "../../db/schema/user";
import { and, eq, isNotNull, isNull, type SQL, sql } from "../../db/sql";
import type { Data, RecordTable, SetValues } from "../../db/table";
import { GuardFailed, guard, inList, type Statement } from "../../db/write";
import { type Access, BUILTIN_ROLES } from "../../lib/access";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { ApiError, conflict, notFound } from "../../lib/errors";
import type { IfMatch } from "../../lib/if-match";
import { type Message, m } from "../../lib/message";
import { Phone } from "../../lib/phone";
import { type Filter, IdParams, nonEmpty } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation, type Tag } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import type { Cell } from "../../lib/xlsx";
import { mayAssign, mayTake } from "../role/api";
import { Email } from "../school/api";
import {
  addPerson,
  contactOf,
  FirstName,
  giveRoles,
  identity,
  LastName,
  MASKED_CONTACT,
  nameContains,
  personEdit,
  takenRoleAudits,
} from "../user/api";

/** A staff profile's table: a record of one person (`user_id`) in the school, with an employee number. */
export type ProfileTable = RecordTable & {
  schoolId: SQLiteColumn;
  userId: SQLiteColumn;
  employeeNumber: SQLiteColumn;
};

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
export const personRecord = (ctx: SchoolCtx, row: PersonRow) => ({
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
const personCopy = SchoolPeople.alias("staff_copy");
const person = identity(users, personCopy.table);

/** The person's columns of the view (joined by `joinPerson`): name and email as this school knows them. */
export const personFields = () => ({
  firstName: person.firstName,
  lastName: person.lastName,
  email: person.email,
  phone: users.phone,
  status: users.status,
  language: users.language,
});

/** The person and the school's copy of them, joined to a profile's read. */
export const joinPerson =
  (table: ProfileTable) =>
  <Row>(q: Query<Row>): Query<Row> =>
    q.join(Users, eq(users.id, table.userId)).join(personCopy, eq(personCopy.table.userId, table.userId), "left");

/**
 * Not removed from the school: people the school deleted (soft, `school_user.deleted_at`) are not
 * its staff any more. A correlated lookup by the unique (school, user) index; the count query,
 * which has no join, uses it as is.
 */
export const notRemovedHere = (ctx: SchoolCtx, table: ProfileTable): SQL =>
  sql`NOT ${SchoolUsers.exists(ctx, eq(schoolUsers.userId, table.userId), isNotNull(schoolUsers.deletedAt))}`;

/** `notRemovedHere` correlated on the profile's own school, for a query that has no context at hand. */
export const notRemoved = (table: ProfileTable): SQL =>
  sql`NOT EXISTS (SELECT 1 FROM ${schoolUsers} WHERE ${SchoolUsers.ofSchool(table.schoolId)} AND ${eq(schoolUsers.userId, table.userId)} AND ${isNotNull(schoolUsers.deletedAt)})`;

/** The person's filters: part of the name, and the user's status (correlated lookups by primary key). */
export function personFilters(table: ProfileTable) {
  const person = (cond: SQL | undefined) =>
    sql`EXISTS (SELECT 1 FROM ${users} WHERE ${and(eq(users.id, table.userId), cond)})`;
  return {
    name: {
      schema: searchTerm("Part of the first or last name"),
      where: (ctx: SchoolCtx, term: string) => nameContains(table.userId, ctx.schoolId, term),
      example: "Ana",
    } satisfies Filter<string>,
    status: {
      schema: UserStatus.optional().openapi({ description: "The user's status" }),
      where: (_ctx: Ctx, status: z.infer<typeof UserStatus>) => person(eq(users.status, status)),
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
      language: Language.optional().openapi({
        description: "With phone: a new user's language (default: the school's)",
      }),
      ...profile,
    })
    .superRefine((v: Record<string, unknown>, issue) => {
      const add = (path: string, message: Message) =>
        issue.addIssue({ code: "custom", path: [path], message: message.render() });
      if (v.userId === undefined && v.phone === undefined) add("userId", m`Send userId, or phone and firstName`);
      if (v.userId !== undefined) {
        for (const key of ["phone", "firstName", "lastName", "email", "language"]) {
          if (v[key] !== undefined) add(key, m`Not with userId: send userId alone, or phone and a name`);
        }
      } else if (v.phone !== undefined && v.firstName === undefined) {
        add("firstName", m`Required with phone`);
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

/** What the shared verbs need of a staff resource (a `defineResource` result). */
export interface StaffResource<T extends ProfileTable, Row, Rec> {
  config: { name: string; label: Message; path: string; tag: Tag; data: Data<T> };
  record: z.ZodType<Rec>;
  find(ctx: SchoolCtx, id: number): Promise<{ userId: number }>;
  readOne(ctx: SchoolCtx, id: number | SQL<number>): Query<Row>;
  toRecord(ctx: SchoolCtx, row: Row): Rec;
  scoped(ctx: SchoolCtx, extra: SQL | undefined, access: "read" | "write"): SQL | undefined;
  writes: { update(ctx: SchoolCtx, id: number, set: SetValues<T>): Statement[] };
  /** What an update's If-Match is checked against (src/lib/route.ts). */
  ifMatch: IfMatch;
}

/** 409 for a taken employee number, when that is what a unique index refused. */
async function employeeNumberTaken<T extends ProfileTable>(ctx: SchoolCtx, data: Data<T>, employeeNumber: unknown) {
  if (typeof employeeNumber !== "string" || !employeeNumber) return;
  const taken = await data
    .select(ctx, { id: data.table.id })
    .where(eq(data.table.employeeNumber, employeeNumber))
    .first();
  if (taken) throw conflict(m`Employee number ${employeeNumber} is already used in this school`);
}

/**
 * Gives the person the role and the profile its fields, in one batch (see the file's comment).
 * `profile` is the profile's own column values.
 */
export async function createStaff<T extends ProfileTable, Row, Rec>(
  ctx: SchoolCtx,
  resource: StaffResource<T, Row, Rec>,
  role: "teacher" | "staff",
  input: PersonInput,
  profile: SetValues<T>,
): Promise<Rec> {
  const { data } = resource.config;
  const table = data.table;
  const already =
    role === "teacher"
      ? m`This person is already a teacher of this school`
      : m`This person is already administrative staff of this school`;
  let userId: number | SQL<number>;
  const batch = new Batch(ctx);
  if (input.userId !== undefined) {
    await mayAssign(ctx, [BUILTIN_ROLES[role].id]);
    // One of this school's people (not removed): another school's people are not this school's to see.
    const member = await SchoolUsers.select(ctx, { id: schoolUsers.id })
      .where(eq(schoolUsers.userId, input.userId), isNull(schoolUsers.deletedAt))
      .first();
    if (!member) throw notFound(m`User ${input.userId} not found`);
    userId = input.userId;
    batch.add(...giveRoles(ctx, eq(users.id, userId), [role]));
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
    batch.add(...added.statements);
  }
  // The role's audit row is written only when the role was: nothing written means it was held.
  batch.add(guard(ctx.deps.db));
  // The profile row was just inserted by the role's trigger (migration 0017): it is the table's last id.
  const profileId = data.insertedId();
  // The profile's own fields complete the row the trigger created: audited as its creation.
  batch.add(...data.completed(ctx, eq(table.id, profileId), profile, { userId }));
  const created = batch.read(resource.readOne(ctx, profileId));
  let row: Row | undefined;
  try {
    [row] = (await batch.commit({ conflict: already })).get(created);
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(already);
    if (err instanceof ApiError && err.status === 409) await employeeNumberTaken(ctx, data, profile.employeeNumber);
    throw err;
  }
  if (!row) throw new Error(`${resource.config.label}: the created profile was not read back`);
  return resource.toRecord(ctx, row);
}

/**
 * Edits the person (name, email: wherever else they belong) and the profile's fields, in one batch:
 * the profile's guarded UPDATE first (removed meanwhile: 404, nothing changed), then the user's.
 */
export async function updateStaff<T extends ProfileTable, Row, Rec>(
  ctx: SchoolCtx,
  resource: StaffResource<T, Row, Rec>,
  id: number,
  person: { firstName?: string; lastName?: string; email?: string | null },
  profile: SetValues<T>,
): Promise<void> {
  const { userId } = await resource.find(ctx, id);
  // The profile's own fields are the school's record of the role; editing the person (the same
  // user in every school) is acting on them.
  const batch = new Batch(ctx).add(...resource.writes.update(ctx, id, profile));
  await personEdit(batch, ctx, userId, person);
  try {
    await batch.commit({
      conflict: m`Employee number ${String(profile.employeeNumber)} is already used in this school`,
    });
  } catch (err) {
    if (err instanceof GuardFailed) {
      await resource.find(ctx, id); // 404 when it went meanwhile
      throw conflict(m`${resource.config.label} ${id} changed while it was being written; try again`);
    }
    throw err;
  }
}

/**
 * Takes the role away in this school (the profile follows by trigger); the user and their
 * membership of the school stay. Audited as the profile's delete and the role assignment's.
 */
export async function removeStaff<T extends ProfileTable, Row, Rec>(
  ctx: SchoolCtx,
  resource: StaffResource<T, Row, Rec>,
  id: number,
  role: "teacher" | "staff",
): Promise<void> {
  const { data } = resource.config;
  const table = data.table;
  const holder = sql`SELECT ${table.userId} FROM ${table} WHERE ${data.where(ctx, resource.scoped(ctx, eq(table.id, id), "write"))}`;
  await mayTake(ctx, [BUILTIN_ROLES[role].id], holder);
  const taken = and(eq(roleUsers.roleId, BUILTIN_ROLES[role].id), inList(roleUsers.userId, sql`(${holder})`));
  const [audit, removal] = RoleUsers.delete(ctx, taken);
  try {
    await new Batch(ctx)
      .add(
        audit,
        // The profile and what goes with it (a teacher's group rows), as when the role is taken elsewhere.
        ...takenRoleAudits(ctx, RoleUsers.where(ctx, taken)),
        removal,
        guard(ctx.deps.db),
      )
      .commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`${resource.config.label} ${id} not found`);
    throw err;
  }
}

/** A staff profile's own field besides the employee number (a teacher's subjects, a position). */
export interface ProfileField<S extends z.ZodType> {
  key: string;
  /** Its body schema (optional in both bodies). */
  schema: S;
}

export interface StaffSpec<T extends ProfileTable, S extends z.ZodType> {
  role: "teacher" | "staff";
  write: Access;
  entity: string;
  field: ProfileField<S>;
  /** The profile's column values of what a body sent (its field, its employee number). */
  profile: (sent: { value?: z.output<S>; employeeNumber?: string | null }) => SetValues<T>;
  create: { summary: string; description: string; created: string };
  update: { summary: string };
  remove: { summary: string };
}

/** The person's part of a body the route parsed (read again, typed: the body's type keys the profile field by name). */
const SentPerson = z.object({
  userId: z.number().optional(),
  phone: z.string().optional(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  email: z.string().nullable().optional(),
  language: Language.optional(),
});

/** The person's fields and the profile's of a body (only the fields sent). */
function split<S extends z.ZodType>(field: ProfileField<S>, body: object) {
  const employeeNumber: unknown = Reflect.get(body, "employeeNumber");
  return {
    person: SentPerson.parse(body),
    sent: {
      value: field.schema.optional().parse(Reflect.get(body, field.key)),
      employeeNumber: typeof employeeNumber === "string" ? employeeNumber : employeeNumber === null ? null : undefined,
    },
  };
}

/**
 * The create, update and delete operations of a staff profile (teachers, administrative staff):
 * the same bodies (the person's fields, the profile's field and employee number) and verbs, named
 * after the resource (`createTeacher`, `TeacherCreate`, ...).
 */
export function staffOperations<T extends ProfileTable, Row, Rec, S extends z.ZodType>(
  resource: StaffResource<T, Row, Rec>,
  spec: StaffSpec<T, S>,
) {
  const { config } = resource;
  const Name = config.name.charAt(0).toUpperCase() + config.name.slice(1);
  const { field } = spec;

  const CreateBody = createBody({ [field.key]: field.schema.optional(), employeeNumber: EmployeeNumber.optional() });
  const createRoute = defineRoute({
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
    audit: spec.entity,
    errors: [409],
    examples: {
      409: [
        {
          name: "held",
          summary: "They hold the role already",
          detail: `This person is already ${spec.role === "teacher" ? "a teacher" : "administrative staff"} of this school`,
        },
        {
          name: "employeeNumber",
          summary: "The employee number is taken",
          detail: "Employee number E-042 is already used in this school",
        },
      ],
    },
    request: { body: jsonBody(CreateBody, `${Name}Create`) },
    responses: { 201: json(resource.record, spec.create.created) },
  });
  const create = operation(createRoute, (ctx, { body }: InputOf<typeof createRoute>) => {
    const { person, sent } = split(field, body);
    return createStaff(ctx, resource, spec.role, person, spec.profile(sent));
  });

  const UpdateBody = nonEmpty(
    z.strictObject({
      ...personUpdate,
      [field.key]: field.schema.optional(),
      employeeNumber: EmployeeNumber.nullable().optional(),
    }),
  );
  const updateRoute = defineRoute({
    method: "put",
    path: `${config.path}/{id}`,
    tag: config.tag,
    operationId: `update${Name}`,
    summary: spec.update.summary,
    description:
      "The name and email are the person's (the same user wherever they belong). 409: employee number taken.",
    access: spec.write,
    audit: spec.entity,
    errors: [409],
    examples: { 409: "Employee number E-042 is already used in this school" },
    ifMatch: resource.ifMatch,
    request: { params: IdParams, body: jsonBody(UpdateBody, `${Name}Update`) },
    responses: { 204: noContent },
  });
  const update = operation(updateRoute, async (ctx, { params, body }: InputOf<typeof updateRoute>) => {
    const { person, sent } = split(field, body);
    await updateStaff(ctx, resource, params.id, person, spec.profile(sent));
    return undefined;
  });

  const removeRoute = defineRoute({
    method: "delete",
    path: `${config.path}/{id}`,
    tag: config.tag,
    operationId: `delete${Name}`,
    summary: spec.remove.summary,
    access: spec.write,
    audit: spec.entity,
    request: { params: IdParams },
    responses: { 204: noContent },
  });
  const remove = operation(removeRoute, async (ctx, { params }: InputOf<typeof removeRoute>) => {
    await removeStaff(ctx, resource, params.id, spec.role);
    return undefined;
  });

  return { create, update, delete: remove };
}

/** The export's columns of a staff profile: the person's, then the profile's field and employee number. */
export const staffColumns = (header: Message) => [
  m`Id`,
  m`User id`,
  m`First name`,
  m`Last name`,
  m`Phone`,
  m`Email`,
  m`Status`,
  m`Language`,
  header,
  m`Employee number`,
  m`Created at`,
];

/** One export row of a staff record (`fieldCell` its own field's cell). */
export const staffCells = (r: ReturnType<typeof personRecord> & { employeeNumber: string | null }, fieldCell: Cell) => [
  r.id,
  r.userId,
  r.firstName,
  r.lastName,
  r.phone,
  r.email,
  r.status,
  r.language,
  fieldCell,
  r.employeeNumber,
  r.createdAt,
];
