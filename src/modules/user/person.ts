/**
 * One verb for "add people by phone, with a role": every people route (users, teachers,
 * administrative staff, school administrators, parents, delegates) and the people importer go
 * through it, for one person or a file's worth.
 *
 * - One read (`peopleByPhone`): who is known, deleted, or holds the role here already.
 * - Then statements for the caller's own batch, each over the people as ONE JSON parameter
 *   (`json_each`), never a statement per person:
 *   - a known number this school does not know yet (no live membership here) gets the school's own
 *     copy of what it sent (./identity.ts): adding a phone never reveals nor changes what another
 *     school holds; a school that knows the person keeps what it has;
 *   - an unknown number becomes a new, invited user;
 *   - the roles, each given only where not held (`INSERT OR IGNORE`, audited only when written), or
 *     refused by the unique index (409) where a route says a role held is a conflict.
 *   Holding a role makes the person one of the school's people: migration 0016's trigger writes (or
 *   restores) their `school_user` row, 0017's their empty profile.
 * - Every row written has its audit row; a row not written has none.
 * - Giving roles obeys the escalation rule (`mayAssign`: nobody gives a role granting more than
 *   they hold); an import is checked when it starts, so its writes are not checked again.
 */
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { holdsAnchors, resolveUsers, userAnchors } from "../../db/anchors";
import type { Batch } from "../../db/batch";
import { RoleUsers, roleUsers, Users, users } from "../../db/schema/core";
import { SchoolPeople, SchoolUsers, schoolPeople, schoolUsers } from "../../db/schema/user";
import { and, eq, isNull, type SQL, sql } from "../../db/sql";
import { inList, insertedId, type Statement } from "../../db/write";
import { BUILTIN_ROLES, type BuiltinRole } from "../../lib/access";
import { now, type SchoolCtx } from "../../lib/context";
import { fold } from "../../lib/fold";
import { currentSchoolLanguage } from "../../lib/language";
import { mayActOn, mayAssign } from "../role/api";
import { editPerson } from "./identity";

export interface Person {
  /** E.164 (the `Phone` schema of src/lib/phone.ts normalises it). */
  phone: string;
  firstName?: string;
  lastName?: string;
  email?: string | null;
  language?: "es" | "en";
}

/** A number that belongs to a user: their id, whether the account was deleted, whether they hold the role here. */
export interface Known {
  id: number;
  deleted: boolean;
  holds: boolean;
}

export interface AddOptions {
  /** The roles given here: built-in keys or role ids (none: a delegate acts for a parent without one). */
  roles?: readonly (BuiltinRole | number)[];
  /** A role already held: kept (nothing written), or the unique index's 409 (a route where that is a conflict). */
  held?: "keep" | "conflict";
  /** The memberships' entity in the audit trail (default `role-user`). */
  entity?: string;
  /** A new number someone registered meanwhile: the unique index's 409, or left alone (an import). */
  taken?: "conflict" | "skip";
  /** A new user's language when the person names none; null: the column's default, not recorded (a body without one). */
  language?: "es" | "en" | null;
}

/**
 * The rows the statement just before wrote into `table`: an INSERT's rows take the next ids in turn
 * (AUTOINCREMENT), so they are the last `changes()` of them. (A timestamp would not tell them from
 * rows written earlier at the same instant.)
 */
const justInserted = (table: typeof users | typeof roleUsers | typeof schoolPeople): SQL =>
  sql`${table.id} > ${insertedId(table)} - changes()`;

const roleIdOf = (role: BuiltinRole | number) => (typeof role === "number" ? role : BUILTIN_ROLES[role].id);

/**
 * The users of these numbers (deleted ones too) and whether they hold `role` here: one query, to
 * run alone (`knownPeople`) or in the caller's read batch.
 */
export function peopleByPhone(ctx: SchoolCtx, phones: readonly string[], role?: BuiltinRole | number) {
  const roleId = role === undefined ? undefined : roleIdOf(role);
  return Users.select(ctx, {
    phone: users.phone,
    id: users.id,
    deleted: sql<number>`${users.deletedAt} IS NOT NULL`,
    holds:
      roleId === undefined
        ? sql<number>`0`
        : sql<number>`${RoleUsers.exists(ctx, eq(roleUsers.userId, users.id), eq(roleUsers.roleId, roleId))}`,
  }).where(inList(users.phone, phones));
}

/** `peopleByPhone`'s rows by phone. */
export function knownBy(rows: readonly { phone: string; id: number; deleted: number; holds: number }[]) {
  return new Map<string, Known>(
    rows.map((r) => [r.phone, { id: r.id, deleted: r.deleted === 1, holds: r.holds === 1 }]),
  );
}

/** The users of these numbers, read once. */
export async function knownPeople(ctx: SchoolCtx, phones: readonly string[], role?: BuiltinRole | number) {
  return knownBy(await peopleByPhone(ctx, phones, role).all());
}

/**
 * The statements adding `people` (known as `known` says) with `options.roles`, for one batch: the
 * copies and new users first, then the roles (`invite` and `roles` apart, for a caller that writes
 * something between them; `statements` both). Two steps (docs/scaling.md "Shards", group B): the
 * new users are made in the platform database first (`resolveUsers`, one batch answering their
 * ids), then the school's batch holds their anchors (on a shard) and their audit rows. A deleted
 * account's number counts as unknown: its INSERT meets the unique index (409) unless `taken: "skip"`.
 * `ids`: each phone's user id (a new user's too).
 */
export async function addPeople(
  ctx: SchoolCtx,
  people: readonly Person[],
  known: ReadonlyMap<string, Known>,
  options: AddOptions = {},
) {
  const at = now(ctx);
  const invite: Statement[] = [];
  const live: (Person & { id: number })[] = people.flatMap((p) => {
    const k = known.get(p.phone);
    return k && !k.deleted ? [{ ...p, id: k.id }] : [];
  });
  const fresh = people.filter((p) => {
    const k = known.get(p.phone);
    return !k || k.deleted;
  });
  // A new person speaks the school's language unless told otherwise (an import, without a request: es).
  const language = options.language === undefined ? (currentSchoolLanguage() ?? "es") : options.language;
  // Nothing to make, and a school on the platform database (its users are there): nothing to resolve.
  const resolved =
    !fresh.length && !(await holdsAnchors(ctx))
      ? { rows: [], created: new Set<number>() }
      : await resolveUsers(
          ctx,
          live.map((p) => p.phone),
          fresh.map((p) => ({
            phone: p.phone,
            firstName: p.firstName ?? "",
            lastName: p.lastName ?? "",
            email: p.email ?? null,
            language: p.language ?? language ?? "en",
          })),
          { taken: options.taken === "skip" ? "skip" : "conflict" },
        );
  // Their anchors in the school's database (none when it is the platform's), before what names them.
  invite.push(...(await userAnchors(ctx, resolved.rows)));
  // A number the school's read did not find but the platform knows (a shard sees only its
  // anchors; or registered meanwhile): a known person, who gets the school's copy.
  for (const row of resolved.rows) {
    const p = fresh.find((f) => f.phone === row.phone);
    if (p && !resolved.created.has(row.id) && row.deletedAt === null) live.push({ ...p, id: row.id });
  }
  const ids = new Map<string, number>([
    ...live.map((p) => [p.phone, p.id] as const),
    ...resolved.rows.map((r) => [r.phone, r.id] as const),
  ]);

  if (live.length) {
    // [id, firstName, lastName, email, folded first name, folded last name]
    const rows = JSON.stringify(
      live.map((p) => {
        const first = p.firstName ?? "";
        const last = p.lastName ?? "";
        return [p.id, first, last, p.email ?? null, fold(first), fold(last)];
      }),
    );
    const member = SchoolUsers.exists(ctx, sql`${schoolUsers.userId} = j.value->>0`, isNull(schoolUsers.deletedAt));
    const copied = and(
      inList(
        users.id,
        live.map((p) => p.id),
      ),
      SchoolPeople.exists(ctx, eq(schoolPeople.userId, users.id), justInserted(schoolPeople)),
    );
    const copy = (column: SQLiteColumn) => SchoolPeople.pick(ctx, column, eq(schoolPeople.userId, users.id));
    invite.push(
      SchoolPeople.insertFrom(
        ctx,
        (row) =>
          sql`SELECT ${row({
            userId: sql`j.value->>0`,
            firstName: sql`j.value->>1`,
            lastName: sql`j.value->>2`,
            email: sql`j.value->>3`,
            firstNameSearch: sql`j.value->>4`,
            lastNameSearch: sql`j.value->>5`,
          })}
            FROM json_each(${rows}) j WHERE NOT ${member}`,
        at,
      ).onConflictDoNothing(),
      // Audited as the user's `copy` where this batch wrote one (a school that knew them keeps its own).
      ...Users.action(ctx, copied, {
        action: "copy",
        changes: {
          firstName: { old: null, new: copy(schoolPeople.firstName) },
          lastName: { old: null, new: copy(schoolPeople.lastName) },
          email: { old: null, new: copy(schoolPeople.email) },
        },
      }),
    );
  }

  const created = resolved.rows.filter((r) => resolved.created.has(r.id)).map((r) => r.id);
  if (created.length) {
    const languageGiven = !(language === null && fresh.every((p) => p.language === undefined));
    // The users the platform step made, audited in the school's trail as it always was.
    invite.push(
      Users.auditRows(
        ctx,
        sql`FROM ${users} WHERE ${inList(users.id, created)}`,
        {
          created: [
            "phone",
            "firstName",
            "lastName",
            "email",
            ...(languageGiven ? (["language"] as const) : []),
            "status",
          ],
        },
        at,
      ),
    );
  }

  // The people in the order given (a file's rows): their memberships, and the profiles their
  // triggers make, take ids in that order.
  const phones = JSON.stringify(people.map((p) => p.phone));
  const given = sql`json_each(${phones}) j CROSS JOIN ${users} ON ${users.phone} = j.value`;
  const roles = giveRoles(ctx, isNull(users.deletedAt), options.roles ?? [], options, given);
  return { invite, roles, statements: [...invite, ...roles], ids };
}

/**
 * The roles given to the users matching `who` (a condition on `user`), each role an INSERT and its
 * audit row: `held: "keep"` ignores a membership already there (then nothing is audited),
 * `"conflict"` lets the unique index refuse it (409). `from` is where the users are read (default
 * the `user` table; a `json_each` joined to it gives them in its order).
 */
export function giveRoles(
  ctx: SchoolCtx,
  who: SQL | undefined,
  roles: readonly (BuiltinRole | number)[],
  { held = "keep", entity }: Pick<AddOptions, "held" | "entity"> = {},
  from: SQL = sql`${users}`,
): Statement[] {
  const memberships = entity ? RoleUsers.as(entity) : RoleUsers;
  const at = now(ctx);
  return roles.flatMap((role) => {
    const roleId = roleIdOf(role);
    const insert = RoleUsers.insertFrom(
      ctx,
      (row) => sql`SELECT ${row({ userId: sql`${users.id}`, roleId })} FROM ${from} WHERE ${who}`,
      at,
    );
    // Audited only where this batch wrote the membership (a role held already is not).
    return memberships.insertMany(
      ctx,
      held === "keep" ? insert.onConflictDoNothing() : insert,
      and(eq(roleUsers.roleId, roleId), justInserted(roleUsers)),
      ["userId", "roleId"],
    );
  });
}

/** The person's user id inside the batch that adds them: known, or read back by the (unique) phone. */
export const idOf = (person: Person, known: ReadonlyMap<string, Known>): number | SQL<number> => {
  const k = known.get(person.phone);
  return k && !k.deleted
    ? k.id
    : sql<number>`(SELECT ${users.id} FROM ${users} WHERE ${users.phone} = ${person.phone})`;
};

export interface Added {
  /** The user's id, or (for a new user) an expression that reads it inside the same batch. */
  userId: number | SQL<number>;
  /** True when the number was unknown: the statements invite a new user. */
  invited: boolean;
  /** The copy or the new user, with their audit rows. */
  invite: Statement[];
  /** The roles, with their audit rows. */
  roles: Statement[];
  /** `invite` then `roles`: put them first in the batch, then what names `userId`. */
  statements: Statement[];
}

/**
 * Adds one person by phone with `options.roles` (checked by the escalation rule first): one read,
 * then the statements for the caller's batch.
 */
export async function addPerson(ctx: SchoolCtx, person: Person, options: AddOptions = {}): Promise<Added> {
  const roles = options.roles ?? [];
  if (roles.length) await mayAssign(ctx, roles.map(roleIdOf));
  const known = await knownPeople(ctx, [person.phone]);
  const k = known.get(person.phone);
  const added = await addPeople(ctx, [person], known, options);
  return { userId: added.ids.get(person.phone) ?? idOf(person, known), invited: !k || k.deleted, ...added };
}

/**
 * The person part of a profile's update (a teacher's, a parent's, an administrator's name or
 * email): editing the person is acting on them (`mayActOn`), then their identity edit as
 * statements for the caller's batch. None when the body sends no person field.
 */
export async function personEdit(
  batch: Batch,
  ctx: SchoolCtx,
  userId: number,
  person: { firstName?: string; lastName?: string; email?: string | null },
): Promise<void> {
  if (!Object.values(person).some((v) => v !== undefined)) return;
  await mayActOn(ctx, [userId]);
  await editPerson(batch, ctx, userId, person);
}
