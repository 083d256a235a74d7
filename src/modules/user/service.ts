/**
 * The school's people (`/api/v1/user`): add a person (one person, one user), edit them, remove them
 * from the school (soft: the membership gets `deleted_at`, their roles here go), and a person's own
 * account deletion (anonymised). Every write is one batch with its audit rows; every check that
 * could race is part of a guarded statement's WHERE, so concurrent requests cannot both pass it.
 */
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import type { Db } from "../../db/client";
import { AdministrativeUsers, administrativeUsers } from "../../db/schema/administrative-user";
import { refreshTokens } from "../../db/schema/auth";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools, Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import { deviceTokens } from "../../db/schema/device-token";
import { Parents, parents } from "../../db/schema/parent";
import { Teachers, teachers } from "../../db/schema/teacher";
import { SchoolUsers, schoolPeople, schoolUsers } from "../../db/schema/user";
import { withSearch } from "../../db/search";
import { otherDatabases } from "../../db/shards";
import { and, asc, desc, eq, isNull, ne, type SQL, sql } from "../../db/sql";
import { joinTable, REDACTED, type SetValues } from "../../db/table";
import { commit, GuardFailed, guard, guardCount, inList, insertedId, type Statement } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import { type Ctx, now, type SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { Listing } from "../../lib/pagination";
import { givableRole, mayActOn, mayAssign } from "../role/api";
import { editOwnIdentity, editPerson, knownOnOtherDatabases, memberElsewhere } from "./identity";
import { live, type MemberRecord, memberQuery, membersAmong, selectMembers, toMember } from "./members";
import { takenRoleAudits } from "./people";
import { addPerson, giveRoles } from "./person";

const SCHOOL_ADMIN = BUILTIN_ROLES["school-admin"].id;

// ---------------------------------------------------------------------------------------------
// Reads

export interface ListInput {
  page: number;
  pageSize: number;
  where: (SQL | undefined)[];
}

/** A page of the school's people, newest first, with the total: one round trip. */
export async function listMembers(ctx: SchoolCtx, input: ListInput): Promise<Listing<MemberRecord>> {
  const where = and(live(ctx), ...input.where);
  const batch = new Batch(ctx);
  const rows = batch.read(
    selectMembers(ctx)
      .where(where)
      // school_user_created_idx (school_id, created_at) read backwards: no sort step.
      .orderBy(desc(schoolUsers.createdAt), desc(schoolUsers.id))
      .limit(input.pageSize)
      .offset((input.page - 1) * input.pageSize),
  );
  const total = batch.read(SchoolUsers.select(ctx, { n: sql<number>`count(*)` }).where(where));
  const results = await batch.commit();
  return new Listing(
    results.get(rows).map((row) => toMember(row, ctx)),
    results.get(total)[0]?.n ?? 0,
    input,
  );
}

export async function getMember(ctx: SchoolCtx, id: number): Promise<MemberRecord> {
  const row = await memberQuery(ctx, id).first();
  if (!row) throw notFound(m`User ${id} not found`);
  return toMember(row, ctx);
}

/** Refuses role ids this school cannot use (404 naming them, as if they did not exist). */
export async function checkRoles(ctx: SchoolCtx, ids: readonly number[]) {
  if (ids.length === 0) return;
  // A role this school may give: a built-in one (not super-admin) or one of its own (the read scope).
  const found = await Roles.select(ctx, { id: roles.id }).where(inList(roles.id, ids), givableRole).all();
  const known = new Set(found.map((r) => r.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length)
    throw notFound(
      missing.length === 1 ? m`Role ${missing.join(", ")} not found` : m`Roles ${missing.join(", ")} not found`,
    );
}

// ---------------------------------------------------------------------------------------------
// Create

export interface CreateInput {
  phone: string;
  firstName: string;
  lastName?: string;
  email?: string | null;
  language?: "es" | "en";
  roleIds?: number[];
}

/**
 * The membership row of a person in the current school: written, or restored when the school had
 * removed them. A live membership is left alone (changes() = 0), which the caller guards.
 */
export function joinSchool(
  ctx: SchoolCtx,
  userId: number | SQL<number>,
  extra: { invitedAt?: string } = {},
): Statement {
  const at = now(ctx);
  return SchoolUsers.insertRow(ctx, { userId, ...extra }, at).onConflictDoUpdate({
    target: SchoolUsers.schoolKey(schoolUsers.userId),
    set: { deletedAt: null, updatedAt: at, ...extra },
    setWhere: sql`${schoolUsers.deletedAt} IS NOT NULL`,
  });
}

/**
 * Adds a person to the school: a new, invited user for an unknown number; the same user for a
 * known one, the name and email sent becoming this school's own copy (./identity.ts: the user row
 * is not this school's to see or change). Already a member here: 409, also when two requests race. `roleIds` obey the same
 * escalation rules as role memberships (403 for a role granting a permission the caller lacks).
 */
export async function createMember(ctx: SchoolCtx, input: CreateInput): Promise<MemberRecord> {
  const roleIds = [...new Set(input.roleIds ?? [])];
  await checkRoles(ctx, roleIds);
  // The escalation rules of role memberships: user.write alone gives no role one could not grant.
  const { userId, invited, invite, roles } = await addPerson(ctx, input, { roles: roleIds });
  const batch = new Batch(ctx).add(...invite);
  if (!invited) {
    // A known person joins: the school is what changes for them (as `remove` records it leaving).
    batch.add(
      ...Users.action(ctx, eq(users.id, userId), {
        action: "join",
        changes: { schoolId: { old: null, new: ctx.schoolId } },
      }),
    );
  }
  // The membership first (a live one refuses: guard -> 409), then the roles (their trigger finds
  // the membership there), then the record read back.
  batch.add(joinSchool(ctx, userId), guard(ctx.deps.db), ...roles);
  const read = batch.read(memberQuery(ctx, userId));
  const already = m`The user with phone ${input.phone} is already a member of this school`;
  let row: Parameters<typeof toMember>[0] | undefined;
  try {
    [row] = (await batch.commit({ conflict: already })).get(read);
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(already);
    throw err;
  }
  if (!row) throw new Error("createMember: the member was not read back");
  return toMember(row, ctx);
}

// ---------------------------------------------------------------------------------------------
// Update

export interface UpdateInput {
  firstName?: string;
  lastName?: string;
  email?: string | null;
  language?: "es" | "en";
  status?: "active" | "inactive";
}

const isMemberHere = (ctx: SchoolCtx, userId: number | SQL | SQLiteColumn) =>
  SchoolUsers.exists(ctx, sql`${schoolUsers.userId} = ${userId}`, isNull(schoolUsers.deletedAt));

/**
 * Edits a member's name, email, language and status. The name and email go through `editPerson`
 * (./identity.ts): this school's own copy for someone another school knows too, the user row for
 * someone only this school knows; a super-admin edits the person's own identity. The status is the
 * person's own (it decides whether they may sign in anywhere), so a school changes it only for
 * someone who belongs to no other school, never for a super-admin nor for the caller (422).
 * "active" lets them sign in again; someone who never signed in stays "invited". "inactive" also
 * ends their sessions. Someone who holds more than the caller here is refused (403), whatever the
 * change.
 */
export async function updateMember(ctx: SchoolCtx, id: number, input: UpdateInput) {
  const { db } = ctx.deps;
  await mayActOn(ctx, [id]);
  const { status, language, ...person } = input;
  const extra: SetValues<typeof users> = language !== undefined ? { language } : {};
  const rules: { when: SQL; message: Message }[] = [];
  if (status !== undefined) {
    if (id === ctx.userId) throw unprocessable(m`You cannot change your own status`);
    const elsewhere = m`User ${id} belongs to other schools too: only their own account decides their status`;
    // Schools on other databases: read there first (the rule below covers this database's).
    if ((await knownOnOtherDatabases(ctx, id)).member) throw unprocessable(elsewhere);
    extra.status =
      status === "active"
        ? sql`CASE WHEN ${users.status} = 'invited' THEN 'invited' ELSE 'active' END`
        : ("inactive" as const);
    rules.push(
      {
        when: sql`NOT ${memberElsewhere(ctx, id)}`,
        message: elsewhere,
      },
      { when: sql`${users.isSuperAdmin} = 0`, message: m`User ${id} is a platform administrator` },
    );
  }
  const where = and(isMemberHere(ctx, id), ...rules.map((r) => r.when));
  const batch = new Batch(ctx);
  await editPerson(batch, ctx, id, person, where, extra);
  if (status === "inactive") {
    batch.add(
      db
        .update(refreshTokens)
        .set({ revokedAt: now(ctx) })
        .where(and(eq(refreshTokens.userId, id), isNull(refreshTokens.revokedAt))),
    );
  }
  try {
    await batch.commit({ conflict: m`Another user already has this value` });
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const checks: Record<string, SQL<number>> = Object.fromEntries(
      rules.map((r, i) => [`rule${i}`, sql<number>`CASE WHEN ${r.when} THEN 1 ELSE 0 END`]),
    );
    // Joined to the membership: read on the school's database, where the person's anchor is.
    const row = await Users.select(ctx, { id: users.id, ...checks })
      .join(SchoolUsers, eq(schoolUsers.userId, users.id))
      .where(eq(users.id, id), isNull(schoolUsers.deletedAt))
      .first();
    if (!row) throw notFound(m`User ${id} not found`);
    const failed = rules.findIndex((_, i) => Reflect.get(row, `rule${i}`) !== 1);
    if (failed >= 0) throw unprocessable(rules[failed]?.message ?? m`Refused by a business rule`);
    throw conflict(m`User ${id} changed while it was being written; try again`);
  }
}

/**
 * The caller edits their own name, email or language: the user row, and every school's copy of
 * their identity removed (./identity.ts), so each school sees what the person says of themself.
 */
export async function updateMyself(
  ctx: Ctx,
  input: { firstName?: string; lastName?: string; email?: string | null; language?: "es" | "en" },
) {
  const id = ctx.userId ?? 0;
  const set = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  try {
    const batch = new Batch(ctx);
    editOwnIdentity(batch, ctx, id, set, isNull(users.deletedAt));
    await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`User ${id} not found`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Remove from the school

/**
 * The school keeps an administrator: none of `ids` is an administrator here, or one who is not
 * among them remains.
 */
function keepsAnAdmin(ctx: SchoolCtx, ids: readonly number[]): SQL {
  const admins = (inIds: boolean) =>
    RoleUsers.exists(
      ctx,
      eq(roleUsers.roleId, SCHOOL_ADMIN),
      inIds ? inList(roleUsers.userId, ids) : sql`NOT ${inList(roleUsers.userId, ids)}`,
    );
  return sql`(NOT ${admins(true)} OR ${admins(false)})`;
}

/**
 * Removes people from the school, all or none, in one batch: their memberships get `deleted_at`,
 * their roles here are deleted (the role profiles follow by trigger), their delegations here end;
 * one audit row per person (`user`, action `remove`) and per role. Other schools are untouched.
 * Refused: an id that is not a member here (404 naming them), the caller (422: their own account
 * is `DELETE /api/v1/user/me`), someone who holds more than the caller here (403), the school's
 * last administrator (422).
 */
export async function removeMembers(ctx: SchoolCtx, requested: readonly number[]): Promise<number[]> {
  const { db } = ctx.deps;
  const ids = [...new Set(requested)];
  if (ctx.userId !== null && ids.includes(ctx.userId)) {
    throw unprocessable(
      m`You cannot remove yourself from the school; to delete your own account use DELETE /api/v1/user/me`,
    );
  }
  const members = await membersAmong(ctx, ids);
  const missing = ids.filter((id) => !members.has(id));
  if (missing.length)
    throw notFound(
      missing.length === 1 ? m`User ${missing.join(", ")} not found` : m`Users ${missing.join(", ")} not found`,
    );
  // Taking every role they hold here: the caller must hold all that those roles grant.
  await mayActOn(ctx, ids, m`remove`);

  const at = now(ctx);
  const school = ctx.schoolId;
  const lastAdmin = m`This would leave the school without an administrator; give another user the school-admin role first`;
  const keeps = keepsAnAdmin(ctx, ids);
  const membership = and(live(ctx), inList(schoolUsers.userId, ids), keeps);
  const theirRoles = inList(roleUsers.userId, ids);
  const statements: [Statement, ...Statement[]] = [
    ...Users.action(
      ctx,
      and(inList(users.id, ids), isMemberHere(ctx, users.id), keeps),
      { action: "remove", changes: { schoolId: { old: school, new: null } } },
      db.update(schoolUsers).set({ deletedAt: at, updatedAt: at }).where(membership),
    ),
    guardCount(ctx.deps.db, ids.length),
    ...takenRoleAudits(ctx, RoleUsers.where(ctx, theirRoles)),
    ...RoleUsers.delete(ctx, theirRoles),
    ...Delegates.delete(ctx, inList(delegates.userId, ids)),
  ];
  try {
    await commit(ctx, statements);
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    // Why: someone removed meanwhile (404), or the last administrator (422).
    const now = await membersAmong(ctx, ids);
    const gone = ids.filter((id) => !now.has(id));
    if (gone.length)
      throw notFound(gone.length === 1 ? m`User ${gone.join(", ")} not found` : m`Users ${gone.join(", ")} not found`);
    const row = await Schools.select(ctx, { ok: sql<number>`CASE WHEN ${keeps} THEN 1 ELSE 0 END` })
      .where(eq(schools.id, school))
      .first();
    if (row?.ok !== 1) throw unprocessable(lastAdmin);
    throw conflict(m`The users changed while they were being removed; try again`);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// My own account

const PLACEHOLDER = (id: number) => `deleted:${id}`;

/**
 * Deletes the caller's account: personal data anonymised (names emptied, email removed, the phone
 * replaced by `deleted:<id>` so the number is free to register again), `deleted_at` set, status
 * inactive (no sign-in), every session revoked, device tokens deleted, every membership removed with
 * its roles and delegations. Refused (422) while they are the last administrator of a school.
 * Kept: the user row (records that name the user id keep pointing at it) and the audit trail.
 */
export async function deleteMyAccount(ctx: Ctx) {
  const { db } = ctx.deps;
  const id = ctx.userId ?? 0;
  const at = now(ctx);
  // Another administrator of the same school as the `role_user` row at hand.
  const others = RoleUsers.alias("other_admin");
  const otherAdmin = sql`EXISTS (SELECT 1 FROM ${others.from} WHERE ${others.ofSchool(RoleUsers.schoolOf())} AND ${eq(others.table.roleId, SCHOOL_ADMIN)} AND ${ne(others.table.userId, id)})`;
  // A school where they are the only administrator.
  const soleAdmin = sql`EXISTS (SELECT 1 FROM ${roleUsers} WHERE ${roleUsers.userId} = ${id} AND ${roleUsers.roleId} = ${SCHOOL_ADMIN} AND NOT ${otherAdmin})`;
  const where = and(eq(users.id, id), isNull(users.deletedAt), sql`NOT ${soleAdmin}`);
  const mine = eq(roleUsers.userId, id);
  const soleOn = (on: Db) =>
    on
      .select({ schoolId: RoleUsers.schoolOf() })
      .from(roleUsers)
      .where(and(mine, eq(roleUsers.roleId, SCHOOL_ADMIN), sql`NOT ${otherAdmin}`));
  const refused = (sole: { schoolId: number }[]) =>
    unprocessable(
      m`You are the only administrator of school ${sole.map((s) => s.schoolId).join(", ")}; give another user the school-admin role first`,
    );
  // Every membership of the person on `on`'s database ended, with its roles (audited) and delegations.
  const membershipsEnd = (on: Ctx) => [
    on.deps.db
      .update(schoolUsers)
      .set({ deletedAt: at, updatedAt: at })
      .where(and(eq(schoolUsers.userId, id), isNull(schoolUsers.deletedAt))),
    ...takenRoleAudits(on, mine),
    ...RoleUsers.deleteEverySchool(on, mine),
    ...Delegates.deleteEverySchool(on, eq(delegates.userId, id)),
  ];
  // The schools on the other databases (docs/scaling.md "Shards", group F): one read each, first
  // (the batch's guard covers the platform database's schools); their memberships go after it.
  const shards = otherDatabases(ctx);
  const soleElsewhere = (await Promise.all(shards.map((on) => soleOn(on.deps.db)))).flat();
  if (soleElsewhere.length) throw refused(soleElsewhere);
  try {
    // The anonymised row copied to every database holding it, the schools' copies removed there too.
    await new Batch(ctx)
      .add(
        ...Users.action(ctx, where, {
          action: "delete-account",
          // The personal fields are anonymised: their old values are not kept here either.
          changes: {
            phone: { old: REDACTED, new: PLACEHOLDER(id) },
            firstName: { old: REDACTED, new: "" },
            lastName: { old: REDACTED, new: "" },
            email: { old: REDACTED, new: null },
            status: { old: users.status, new: "inactive" },
          },
        }),
        db
          .update(users)
          .set(
            withSearch(users, {
              phone: PLACEHOLDER(id),
              firstName: "",
              lastName: "",
              email: null,
              status: "inactive" as const,
              isSuperAdmin: false,
              deletedAt: at,
              updatedAt: at,
            }),
          )
          .where(where),
        guard(db),
        db
          .update(refreshTokens)
          .set({ revokedAt: at })
          .where(and(eq(refreshTokens.userId, id), isNull(refreshTokens.revokedAt))),
        db.delete(deviceTokens).where(eq(deviceTokens.userId, id)),
        // The schools' copies of the person's name and email are personal data too.
        db.delete(schoolPeople).where(eq(schoolPeople.userId, id)),
        ...membershipsEnd(ctx),
      )
      .mirrorUsers([id], { dropCopies: true })
      .commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const sole = await soleOn(db);
    if (sole.length) throw refused(sole);
    throw notFound(m`User ${id} not found`);
  }
  // Every membership on the other databases removed with its roles and delegations: one batch each.
  await Promise.all(shards.map((on) => new Batch(on).add(...membershipsEnd(on)).commit()));
}

// ---------------------------------------------------------------------------------------------
// Permissions and profile

/** The caller's roles in the current school (their permissions come from the token). */
export async function myRoles(ctx: SchoolCtx) {
  // The membership (this school's) names the role: the role needs no condition of its own.
  return RoleUsers.select(ctx, { id: roles.id, key: roles.key, name: roles.name })
    .join(joinTable(roles), eq(roles.id, roleUsers.roleId))
    .where(eq(roleUsers.userId, ctx.userId ?? 0))
    .orderBy(asc(roleUsers.roleId))
    .all();
}

const delegationFields = {
  id: delegates.id,
  parentId: delegates.parentId,
  userId: delegates.userId,
  validFrom: delegates.validFrom,
  validUntil: delegates.validUntil,
};

/** A member's profile in the current school: the person, their role profiles and delegations, in one batch. */
export async function profileOf(ctx: SchoolCtx, id: number) {
  const batch = new Batch(ctx);
  const member = batch.read(memberQuery(ctx, id));
  const teacher = batch.read(Teachers.select(ctx).where(eq(teachers.userId, id)).limit(1));
  const parent = batch.read(Parents.select(ctx).where(eq(parents.userId, id)).limit(1));
  const staff = batch.read(AdministrativeUsers.select(ctx).where(eq(administrativeUsers.userId, id)).limit(1));
  const actsFor = batch.read(
    Delegates.select(ctx, delegationFields).where(eq(delegates.userId, id)).orderBy(asc(delegates.validUntil)),
  );
  const delegatesOf = batch.read(
    Delegates.select(ctx, delegationFields)
      .join(Parents, eq(parents.id, delegates.parentId))
      .where(eq(parents.userId, id)),
  );
  const results = await batch.commit();
  const [row] = results.get(member);
  if (!row) throw notFound(m`User ${id} not found`);
  const [t] = results.get(teacher);
  const [p] = results.get(parent);
  const [s] = results.get(staff);
  return {
    user: toMember(row, ctx),
    teacher: t ? { id: t.id, subjects: t.subjects, employeeNumber: t.employeeNumber } : null,
    parent: p ? { id: p.id, familyId: p.familyId, relationship: p.relationship } : null,
    administrativeStaff: s ? { id: s.id, position: s.position, employeeNumber: s.employeeNumber } : null,
    delegations: { actsFor: results.get(actsFor), delegates: results.get(delegatesOf) },
  };
}

// ---------------------------------------------------------------------------------------------
// Pending people become parents

export const MAX_ASSIGNED = 200;

/**
 * Members of the school who hold no role here ("pending": invited to the school, or added without
 * a role) and have signed in (status `active`: the invitation reached them) get the parent role,
 * MAX_ASSIGNED at a time, oldest first; the parent profile follows by
 * trigger (migration 0017). Each assignment is conditional on the person still holding no role, so
 * a role given meanwhile (or a concurrent call) is never doubled. One audit row per role given.
 * `only`: just these members, signed in or not: staff chose them (each must be a member here: 404
 * naming the others). Giving the parent role needs every permission it grants (403).
 */
export async function assignPendingToParents(ctx: SchoolCtx, only?: readonly number[]) {
  await mayAssign(ctx, [BUILTIN_ROLES.parent.id]);
  if (only?.length) {
    const members = await membersAmong(ctx, only);
    const missing = only.filter((id) => !members.has(id));
    if (missing.length)
      throw notFound(
        missing.length === 1 ? m`User ${missing.join(", ")} not found` : m`Users ${missing.join(", ")} not found`,
      );
  }
  const noRole = and(
    sql`NOT ${RoleUsers.exists(ctx, eq(roleUsers.userId, schoolUsers.userId))}`,
    only?.length
      ? inList(schoolUsers.userId, only)
      : sql`EXISTS (SELECT 1 FROM ${users} WHERE ${users.id} = ${schoolUsers.userId} AND ${users.status} = 'active')`,
  );
  const read = new Batch(ctx);
  const pendingSlot = read.read(
    SchoolUsers.select(ctx, { userId: schoolUsers.userId })
      .where(isNull(schoolUsers.deletedAt), noRole)
      .orderBy(asc(schoolUsers.createdAt), asc(schoolUsers.id))
      .limit(MAX_ASSIGNED),
  );
  const totalSlot = read.read(
    SchoolUsers.select(ctx, { n: sql<number>`count(*)` }).where(isNull(schoolUsers.deletedAt), noRole),
  );
  const answer = await read.commit();
  const pending = answer.get(pendingSlot);
  const total = answer.get(totalSlot);
  const parent = BUILTIN_ROLES.parent.id;
  const at = now(ctx);
  const batch = new Batch(ctx);
  const given = pending.map(({ userId }) => {
    // Still a member here with no role (someone may have given one meanwhile): then the parent role.
    const stillPending = and(
      eq(users.id, userId),
      sql`NOT ${RoleUsers.exists(ctx, eq(roleUsers.userId, userId))}`,
      isMemberHere(ctx, userId),
    );
    batch.add(...giveRoles(ctx, stillPending, [parent]));
    return batch.read(
      RoleUsers.select(ctx, { userId: roleUsers.userId }).where(
        eq(roleUsers.id, insertedId(roleUsers)),
        eq(roleUsers.userId, userId),
        eq(roleUsers.createdAt, at),
        eq(roleUsers.roleId, parent),
      ),
    );
  });
  const results = await batch.commit();
  const assigned = given.flatMap((slot) => results.get(slot).map((r) => r.userId));
  return { assigned, remaining: Math.max(0, (total[0]?.n ?? 0) - pending.length) };
}
