/**
 * The school's people as records: a live `school_user` membership joined with its user, with the
 * roles the person holds in this school (a JSON sub-select). Shared by the list, the read, the
 * create's read-back and the role lists, so each is one query (one D1 round trip with its count).
 */
import { z } from "@hono/zod-openapi";
import { RoleUsers, roles, roleUsers, Users, users } from "../../db/schema/core";
import { SchoolPeople, SchoolUsers, schoolUsers } from "../../db/schema/user";
import { and, eq, isNull, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { parseJson } from "../../lib/json";
import { m, zodMessage } from "../../lib/message";
import { MASKED_CONTACT as CONTACT, contactOf } from "./contact";
import { identity, nameContains as nameOfPerson } from "./identity";

export const LANGUAGES = [
  { code: "es", name: "Español" },
  { code: "en", name: "English" },
] as const;
export const Language = z.enum(["es", "en"]).openapi({ description: "es or en", example: "es" });
export const Status = z.enum(["invited", "active", "inactive"]).openapi({
  description: "invited: has never signed in; active: has signed in; inactive: may not sign in",
});

export const RoleRef = z
  .object({
    id: z.number().int().openapi({ description: "The role's id" }),
    key: z
      .string()
      .nullable()
      .openapi({ description: "A built-in role's key (parent, teacher, ...); null for the school's own" }),
    name: z.string().openapi({ description: "The role's name" }),
  })
  .openapi("RoleRef", { description: "A role; `key` is set for the built-in ones" });

export const Member = z
  .object({
    id: z.number().int().min(1).openapi({ example: 3, description: "The user's id" }),
    phone: z.string().openapi({ example: "+15550000003", description: CONTACT }),
    firstName: z.string(),
    lastName: z.string(),
    email: z.string().nullable().openapi({ description: CONTACT }),
    language: z.string().openapi({ example: "es" }),
    status: Status,
    roles: z.array(RoleRef).openapi({ description: "The roles the person holds in the current school" }),
    memberSince: z.iso.datetime().openapi({ description: "When the person joined the current school" }),
    invitedAt: z.iso.datetime().nullable().openapi({ description: "When the school last texted them an invitation" }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("SchoolUser", { description: "A person of the current school" });

export type MemberRecord = z.infer<typeof Member>;

/** A role named by its built-in key (`parent`) or its id. */
export const RoleName = z
  .string()
  .max(20)
  .regex(
    /^([1-9]\d{0,9}|[a-z-]{1,20})$/,
    zodMessage(m`A built-in role key (parent, teacher, staff, school-admin) or a role id`),
  )
  .refine(
    (v) => /^\d/.test(v) || v in BUILTIN_ROLES,
    zodMessage(m`Unknown role key; use parent, teacher, staff, school-admin or a role id`),
  )
  .transform((v) =>
    /^\d/.test(v) ? Number(v) : (Object.entries(BUILTIN_ROLES).find(([key]) => key === v)?.[1].id ?? 0),
  );

/** Live memberships of the current school. */
export const live = (ctx: SchoolCtx) => SchoolUsers.where(ctx, isNull(schoolUsers.deletedAt));

/** The person holds `roleId` in the school (served by role_user_uq: user, school, role). */
export const holdsRole = (ctx: SchoolCtx, roleId: number): SQL =>
  RoleUsers.exists(ctx, eq(roleUsers.userId, schoolUsers.userId), eq(roleUsers.roleId, roleId));

/** A condition on the member's user row, by primary key (the count query has no join). */
const onUser = (cond: SQL | undefined): SQL =>
  sql`EXISTS (SELECT 1 FROM ${users} WHERE ${and(eq(users.id, schoolUsers.userId), cond)})`;

export const hasStatus = (status: "invited" | "active" | "inactive") => onUser(eq(users.status, status));
/** The term in the member's name as this school knows them (./identity.ts). */
export const nameContains = (ctx: SchoolCtx, term: string) => nameOfPerson(schoolUsers.userId, ctx.schoolId, term);

/** This school's copy of the member's identity, when it has one (./identity.ts). */
const copy = SchoolPeople.alias("member_copy");
const person = identity(users, copy.table);

/** A member's fields, each under its own key (the query aliases them). */
const fieldsOf = (ctx: SchoolCtx) => ({
  id: users.id,
  phone: users.phone,
  firstName: person.firstName,
  lastName: person.lastName,
  email: person.email,
  language: users.language,
  status: users.status,
  // role_user_uq (user_id, school_id, role_id) serves it, in role id order.
  roles: sql<
    string | null
  >`(SELECT json_group_array(json_object('id', ${roles.id}, 'key', ${roles.key}, 'name', ${roles.name})) FROM ${roleUsers} INNER JOIN ${roles} ON ${roles.id} = ${roleUsers.roleId} WHERE ${RoleUsers.where(ctx, eq(roleUsers.userId, schoolUsers.userId))})`,
  memberSince: schoolUsers.createdAt,
  invitedAt: schoolUsers.invitedAt,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
});

/** The members query (callers add where, order, limit). */
export const selectMembers = (ctx: SchoolCtx) =>
  SchoolUsers.select(ctx, fieldsOf(ctx))
    .join(Users, eq(users.id, schoolUsers.userId))
    .join(copy, eq(copy.table.userId, schoolUsers.userId), "left");

type Row = ReturnType<typeof selectMembers>["_row"];

/** The roles JSON array the members query reads. */
const RolesJson = z.array(RoleRef);

/** The member as this caller may see them: phone and email masked without `user.contact` (./contact.ts). */
export function toMember(row: Row, ctx: SchoolCtx): MemberRecord {
  return {
    ...row,
    ...contactOf(ctx, row.id, { phone: row.phone, email: row.email }),
    roles: parseJson(RolesJson, row.roles ?? "[]"),
  };
}

/** One member of the current school. */
export const memberQuery = (ctx: SchoolCtx, userId: number | SQL<number>) =>
  selectMembers(ctx).where(isNull(schoolUsers.deletedAt), eq(schoolUsers.userId, userId)).limit(1);

/** The user ids among `ids` that are live members of the current school. */
export async function membersAmong(ctx: SchoolCtx, ids: readonly number[]): Promise<Set<number>> {
  const rows = await SchoolUsers.select(ctx, { userId: schoolUsers.userId })
    .where(isNull(schoolUsers.deletedAt), inList(schoolUsers.userId, ids))
    .all();
  return new Set(rows.map((r) => r.userId));
}
