/**
 * A person's identity (first name, last name, email) as a school knows them. One person is one user
 * across schools, but what one school holds of them is not another school's to see or change:
 *
 * - A school that adds a phone already belonging to a user gets its own copy (`school_person`) of
 *   what it sent, unless it knows the person already (`copyOnAdd`); adding by phone never reveals the
 *   user row.
 * - Every read of a person in a school shows the school's copy when it has one, else the user row:
 *   `identity` (the fields) over a LEFT JOIN of the copy (`copyTable` + `copyOf`, or `copyJoin` in
 *   hand-written sub-selects), and `nameContains` for the name filters.
 * - A school's edit (`editPerson`) changes its copy when it has one or when another school knows the
 *   person too (the user row unchanged); the user row only for someone this school alone knows.
 * - The person's own edit of their profile, and the super-admin's, change the user row and remove
 *   every school's copy (`editOwnIdentity`): from then on every school sees the person's own values.
 */
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import { SchoolPeople, SchoolUsers, schoolPeople, schoolUsers } from "../../db/schema/user";
import { databaseOf, perDatabase } from "../../db/shards";
import { and, eq, isNull, type SQL, type SQLWrapper, sql } from "../../db/sql";
import type { SetValues } from "../../db/table";
import { guard, type Statement } from "../../db/write";
import { type Ctx, now, type SchoolCtx } from "../../lib/context";
import { fold } from "../../lib/fold";
import { matches } from "../../lib/search";

/** The user audit target: a person invited or edited by a school is recorded in that school's trail. */
export const userAudit = { entity: "user", table: users };

/** What identifies a person: the user row's and the copy's columns alike. */
interface Refs {
  firstName: SQLWrapper;
  lastName: SQLWrapper;
  email: SQLWrapper;
  firstNameSearch: SQLWrapper;
  lastNameSearch: SQLWrapper;
}
interface CopyRefs extends Refs {
  id: SQLWrapper;
}

/** The school's copies under the name `name`, for a query's LEFT JOIN (`copyOf` its condition; `.table` the columns). */
export const copyTable = (name: string) => SchoolPeople.alias(name);
export type CopyTable = ReturnType<typeof copyTable>;

/** The copy of the person `userId` in the school `schoolId` (an id, or a correlated column): a LEFT JOIN's condition. */
export const copyOf = (copy: CopyTable, userId: SQLWrapper, schoolId: SQLiteColumn | number): SQL =>
  sql`${eq(copy.table.userId, userId)} AND ${copy.ofSchool(schoolId)}`;

/** The user row's (or a copy's) columns under the SQL alias `name`, for hand-written sub-selects. */
export function columnsAs(name: string): CopyRefs {
  const column = (c: string) => sql.raw(`"${name}"."${c}"`);
  return {
    id: column("id"),
    firstName: column("first_name"),
    lastName: column("last_name"),
    email: column("email"),
    firstNameSearch: column("first_name_search"),
    lastNameSearch: column("last_name_search"),
  };
}

/** `LEFT JOIN` of the school's copy as `name`, for hand-written sub-selects. */
export function copyJoin(name: string, userId: SQLWrapper, schoolId: SQLiteColumn | number): SQL {
  const copy = copyTable(name);
  return sql`LEFT JOIN ${copy.from} ON ${copyOf(copy, userId, schoolId)}`;
}

/** The person's first name, last name and email as the school of `copy` knows them. */
export function identity(user: Refs, copy: CopyRefs) {
  return {
    firstName: sql<string>`coalesce(${copy.firstName}, ${user.firstName})`,
    lastName: sql<string>`coalesce(${copy.lastName}, ${user.lastName})`,
    email: sql<string | null>`CASE WHEN ${copy.id} IS NULL THEN ${user.email} ELSE ${copy.email} END`,
  };
}

/** The folded "first last" the name filters search, as the school of `copy` knows the person. */
const searchedName = (user: Refs, copy: CopyRefs) =>
  sql`coalesce(${copy.firstNameSearch}, ${user.firstNameSearch}) || ' ' || coalesce(${copy.lastNameSearch}, ${user.lastNameSearch})`;

/**
 * The person `userId` has the term in their name as the school `schoolId` knows them: a correlated
 * lookup by primary key (and the copy's unique index), so it also serves a count without joins.
 */
export const nameContains = (userId: SQLWrapper, schoolId: SQLiteColumn | number, term: string): SQL =>
  sql`EXISTS (SELECT 1 FROM "user" "named_user" ${copyJoin("named_copy", sql.raw('"named_user"."id"'), schoolId)} WHERE "named_user"."id" = ${userId} AND ${matches(searchedName(columnsAs("named_user"), columnsAs("named_copy")), term)})`;

const IDENTITY_FIELDS = ["firstName", "lastName", "email"] as const;

export interface IdentityEdit {
  firstName?: string;
  lastName?: string;
  email?: string | null;
}

/**
 * The school's copy of a person it adds by a phone that already belongs to `userId`: what the
 * school sent (an empty name when it sent none), unless the school knows them already (a live
 * member here, or a copy). Audited as the user's `copy` when written. Place it before the role or
 * membership that makes them a member here.
 */
export function copyOnAdd(ctx: SchoolCtx, userId: number, person: IdentityEdit): Statement[] {
  const at = now(ctx);
  const firstName = person.firstName ?? "";
  const lastName = person.lastName ?? "";
  const email = person.email ?? null;
  const member = SchoolUsers.exists(ctx, eq(schoolUsers.userId, userId), isNull(schoolUsers.deletedAt));
  return [
    SchoolPeople.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ userId, firstName, lastName, email, firstNameSearch: fold(firstName), lastNameSearch: fold(lastName) })} WHERE NOT ${member}`,
      at,
    ).onConflictDoNothing(),
    ...Users.action(ctx, and(eq(users.id, userId), sql`changes() = 1`), {
      action: "copy",
      changes: {
        firstName: { old: null, new: firstName },
        lastName: { old: null, new: lastName },
        email: { old: null, new: email },
      },
    }),
  ];
}

/** A live membership of the person in another school than the current one. */
export const memberElsewhere = (ctx: SchoolCtx, userId: number) =>
  sql`EXISTS (SELECT 1 FROM ${schoolUsers} WHERE ${eq(schoolUsers.userId, userId)} AND ${SchoolUsers.elsewhere(ctx)} AND ${isNull(schoolUsers.deletedAt)})`;

/** A delegation of the person in another school than the current one. */
const delegateElsewhere = (ctx: SchoolCtx, userId: number) =>
  sql`EXISTS (SELECT 1 FROM ${delegates} WHERE ${eq(delegates.userId, userId)} AND ${Delegates.elsewhere(ctx)})`;

/** Another school knows the person: a live membership or a delegation there. */
const knownElsewhere = (ctx: SchoolCtx, userId: number) =>
  sql`${memberElsewhere(ctx, userId)} OR ${delegateElsewhere(ctx, userId)}`;

/**
 * Whether a school on another database than the current school's knows the person (`member`: a
 * live membership there; `delegate`: a delegation there): one read per such database, in parallel
 * (docs/scaling.md "Shards", group F). Every school there is another school. Nothing on a
 * deployment of one database. A read before the school's batch: no guard spans two databases.
 */
export async function knownOnOtherDatabases(ctx: SchoolCtx, userId: number) {
  const own = await databaseOf(ctx);
  const parts = await Promise.all(
    perDatabase(ctx)
      .filter((on) => on.deps.db !== own)
      .map(async (on) => {
        const { db } = on.deps;
        const batch = new Batch(on);
        const read = batch.result(
          db
            .select({
              member: sql<number>`EXISTS (SELECT 1 FROM ${schoolUsers} WHERE ${eq(schoolUsers.userId, userId)} AND ${isNull(schoolUsers.deletedAt)})`,
              delegate: sql<number>`EXISTS (SELECT 1 FROM ${delegates} WHERE ${eq(delegates.userId, userId)})`,
            })
            .from(sql`(SELECT 1)`),
        );
        const [row] = (await batch.commit()).get(read);
        return { member: row?.member === 1, delegate: row?.delegate === 1 };
      }),
  );
  return { member: parts.some((p) => p.member), delegate: parts.some((p) => p.delegate) };
}

/** Whether the school holds a copy of the person, and whether another school knows them (a live membership or a delegation there). */
async function standing(ctx: SchoolCtx, userId: number) {
  // Through a batch: the school's database (docs/scaling.md "Shards"), where its copy is.
  const batch = new Batch(ctx);
  const read = batch.result(
    ctx.deps.db
      .select({
        own: sql<number>`${SchoolPeople.exists(ctx, eq(schoolPeople.userId, userId))}`,
        shared: sql<number>`(${knownElsewhere(ctx, userId)})`,
      })
      .from(sql`(SELECT 1)`),
  );
  // Schools on the other databases: one read each, beside this one.
  const [results, elsewhere] = await Promise.all([batch.commit(), knownOnOtherDatabases(ctx, userId)]);
  const [row] = results.get(read);
  return { own: row?.own === 1, shared: row?.shared === 1 || elsewhere.member || elsewhere.delegate };
}

/** The same "known elsewhere" as `standing`, as a condition for the user row's guarded UPDATE. */
const knownOnlyHere = (ctx: SchoolCtx, userId: number) =>
  sql`NOT ${SchoolPeople.exists(ctx, eq(schoolPeople.userId, userId))}
    AND NOT ${memberElsewhere(ctx, userId)}
    AND NOT ${delegateElsewhere(ctx, userId)}`;

/**
 * A school's edit of a person's name and email (any of them), as statements for the caller's batch.
 * The super-admin edits the person's own identity (`editOwnIdentity`). Otherwise: a person another
 * school knows too, or whom this school holds a copy of, gets this school's copy (from what it sees
 * now, with the edit); someone this school alone knows, the user row, guarded so that a person who
 * joined another school meanwhile aborts the batch (the caller's guard handling: a retry).
 * `where` narrows the user row (a member here); `extra` are other user-row fields the caller sets
 * (language, status) with their own audit.
 */
export async function editPerson(
  batch: Batch,
  ctx: SchoolCtx,
  userId: number,
  edit: IdentityEdit,
  where?: SQL,
  extra: SetValues<typeof users> = {},
): Promise<void> {
  batch.add(...(await personStatements(ctx, userId, edit, where, extra)));
  // The user row, where it changed, copied to every database holding it (src/db/anchors.ts).
  batch.mirrorUsers([userId], { dropCopies: ctx.isSuperAdmin });
}

async function personStatements(
  ctx: SchoolCtx,
  userId: number,
  edit: IdentityEdit,
  where?: SQL,
  extra: SetValues<typeof users> = {},
): Promise<Statement[]> {
  const given: IdentityEdit = {};
  if (edit.firstName !== undefined) given.firstName = edit.firstName;
  if (edit.lastName !== undefined) given.lastName = edit.lastName;
  if (edit.email !== undefined) given.email = edit.email;
  if (ctx.isSuperAdmin) return ownIdentity(ctx, userId, { ...given, ...extra }, where);
  const { own, shared } = Object.keys(given).length ? await standing(ctx, userId) : { own: false, shared: false };
  if (!own && !shared) {
    const who = and(eq(users.id, userId), where, Object.keys(given).length ? knownOnlyHere(ctx, userId) : undefined);
    return [...Users.update(ctx, who, { ...given, ...extra }), guard(ctx.deps.db)];
  }
  const statements = copyEdit(ctx, userId, given, where);
  if (Object.keys(extra).length) {
    statements.push(...Users.update(ctx, and(eq(users.id, userId), where), extra), guard(ctx.deps.db));
  }
  return statements;
}

/**
 * The school's copy written from what the school sees now (its copy, or the user row) with the edit
 * applied, audited as the user's update with the old and new values as the school sees them.
 */
function copyEdit(ctx: SchoolCtx, userId: number, edit: IdentityEdit, where?: SQL): Statement[] {
  const school = ctx.schoolId;
  const at = now(ctx);
  const copy = columnsAs("edited_copy");
  const user = columnsAs("user");
  const seen = identity(user, copy);
  const hasEmail = edit.email !== undefined;
  const next = {
    firstName: sql`coalesce(${edit.firstName ?? null}, ${seen.firstName})`,
    lastName: sql`coalesce(${edit.lastName ?? null}, ${seen.lastName})`,
    email: hasEmail ? sql`${edit.email ?? null}` : seen.email,
  };
  const fromUser = sql`FROM "user" ${copyJoin("edited_copy", sql.raw('"user"."id"'), school)} WHERE "user"."id" = ${userId}${where ? sql` AND ${where}` : sql``}`;
  // The audit's old values read the same way, per field given (in the audit row's own SELECT over `user`).
  const ofUser = eq(schoolPeople.userId, sql.raw('"user"."id"'));
  const copyNow = (column: SQLiteColumn) => SchoolPeople.pick(ctx, column, ofUser);
  const hasCopy = SchoolPeople.exists(ctx, ofUser);
  const old = {
    firstName: sql`coalesce(${copyNow(schoolPeople.firstName)}, "user"."first_name")`,
    lastName: sql`coalesce(${copyNow(schoolPeople.lastName)}, "user"."last_name")`,
    email: sql`CASE WHEN ${hasCopy} THEN ${copyNow(schoolPeople.email)} ELSE "user"."email" END`,
  };
  const changes = Object.fromEntries(
    IDENTITY_FIELDS.filter((key) => key in edit).map((key) => [
      key,
      { old: old[key], new: edit[key] ?? null, ifChanged: true },
    ]),
  );
  return [
    ...Users.action(ctx, and(eq(users.id, userId), where), { action: "update", changes }),
    SchoolPeople.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({
          userId: sql`"user"."id"`,
          firstName: sql`${next.firstName}`,
          lastName: sql`${next.lastName}`,
          email: sql`${next.email}`,
          firstNameSearch: sql`coalesce(${edit.firstName === undefined ? null : fold(edit.firstName)}, ${copy.firstNameSearch}, "user"."first_name_search")`,
          lastNameSearch: sql`coalesce(${edit.lastName === undefined ? null : fold(edit.lastName)}, ${copy.lastNameSearch}, "user"."last_name_search")`,
        })}
          ${fromUser}`,
      at,
    ).onConflictDoUpdate({
      target: SchoolPeople.schoolKey(schoolPeople.userId),
      set: {
        firstName: sql`excluded.first_name`,
        lastName: sql`excluded.last_name`,
        email: sql`excluded.email`,
        firstNameSearch: sql`excluded.first_name_search`,
        lastNameSearch: sql`excluded.last_name_search`,
        updatedAt: at,
      },
    }),
    guard(ctx.deps.db),
  ];
}

/**
 * The person's own identity changed (by the person, or the super-admin for them): the user row,
 * and every school's copy removed, so every school sees the person's own values from now on.
 */
export function editOwnIdentity(batch: Batch, ctx: Ctx, userId: number, set: SetValues<typeof users>, where?: SQL) {
  const identityChanged = IDENTITY_FIELDS.some((k) => set[k] !== undefined);
  // The row copied to every database holding it, every school's copy of the person removed there too.
  batch.add(...ownIdentity(ctx, userId, set, where)).mirrorUsers([userId], { dropCopies: identityChanged });
}

function ownIdentity(ctx: Ctx, userId: number, set: SetValues<typeof users>, where?: SQL): Statement[] {
  const identityChanged = IDENTITY_FIELDS.some((k) => set[k] !== undefined);
  return [
    ...Users.update(ctx, and(eq(users.id, userId), where), set),
    guard(ctx.deps.db),
    ...(identityChanged ? [ctx.deps.db.delete(schoolPeople).where(eq(schoolPeople.userId, userId))] : []),
  ];
}
