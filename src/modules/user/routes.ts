/** Users: the signed-in user's own information. */
import { z } from "@hono/zod-openapi";
import type { Db } from "../../db/client";
import { RoleUsers, roles, roleUsers, schools, users } from "../../db/schema/core";
import { Delegates, delegates, delegationsAround } from "../../db/schema/delegate";
import { parents } from "../../db/schema/parent";
import { otherDatabases } from "../../db/shards";
import { asc, eq, sql } from "../../db/sql";
import type { Ctx } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { defineRoute, json, operation } from "../../lib/route";
import { validToday } from "../../lib/zoned-time";
import { MustAccept, mustAcceptQuery, toMustAccept } from "../legal-document/api";
import { copyOf, copyTable, identity } from "./identity";
import { toUser, UserSchema } from "./record";

const ActsFor = z
  .object({
    delegationId: z.number().int().openapi({ description: "The delegation's id" }),
    parentId: z.number().int().openapi({ description: "The parent profile's id" }),
    userId: z.number().int().openapi({ description: "The parent's user id" }),
    firstName: z.string().openapi({ description: "The parent's first name" }),
    lastName: z.string().openapi({ description: "The parent's last name" }),
    validFrom: z.iso.date().openapi({ example: "2026-11-23", description: "The first day it holds (school-local)" }),
    validUntil: z.iso.date().openapi({ example: "2026-11-30", description: "The last day it holds (school-local)" }),
  })
  .openapi("ActsFor");

const Me = UserSchema.extend({
  schools: z
    .array(
      z.object({
        id: z.number().int().openapi({ description: "The school's id (send it as X-School-Id)" }),
        name: z.string().openapi({ description: "The school's name" }),
        roles: z
          .array(
            z.object({
              id: z.number().int().openapi({ description: "The role's id" }),
              key: z
                .string()
                .nullable()
                .openapi({ description: "A built-in role's key (parent, teacher, ...); null for the school's own" }),
              name: z.string().openapi({ description: "The role's name" }),
            }),
          )
          .openapi({ description: "The roles the user holds in that school" }),
        actsFor: z.array(ActsFor).openapi({
          description:
            "The parents this user is a delegate of here today (the school's date): while it lasts they act with " +
            "the parent role's permissions. A school where they only act as a delegate has `roles: []`.",
        }),
      }),
    )
    .openapi({ description: "Every school where the user holds a role or is a delegate today" }),
  legal: MustAccept,
}).openapi("CurrentUser");

type School = z.infer<typeof Me>["schools"][number];

const me = defineRoute({
  method: "get",
  path: "/api/v1/user/me",
  tag: "People",
  operationId: "getCurrentUser",
  summary: "The signed-in user, with their schools and roles in each, and the legal documents they must accept",
  description:
    "A deleted account's access token is a 401 here at once (elsewhere it lasts until it expires, ≤ 10 minutes).",
  access: "user",
  responses: { 200: json(Me, "The signed-in user") },
});

const parentCopy = copyTable("delegated_parent_copy");
const parentName = identity(users, parentCopy.table);

/**
 * The user's roles per school (`role_user`, `school`, `role`) on database `db`: the platform's, or
 * a shard's, where the rows point at their anchors (docs/scaling.md "Anchors").
 */
function membershipsOn(db: Db, userId: number) {
  return (
    db
      // D1's batch answers rows keyed by column name, which drizzle maps back by position: two
      // columns named alike (school.name, role.name) would collapse, so every name is distinct.
      .select({
        schoolId: RoleUsers.schoolOf(),
        schoolName: schools.name,
        roleId: roleUsers.roleId,
        key: roles.key,
        roleName: sql<string>`${roles.name}`.as("role_name"),
      })
      .from(roleUsers)
      .innerJoin(schools, eq(schools.id, RoleUsers.schoolOf()))
      .innerJoin(roles, eq(roles.id, roleUsers.roleId))
      .where(eq(roleUsers.userId, userId))
      // The order of role_user_uq (user_id, school_id, role_id): no sort step.
      .orderBy(asc(RoleUsers.schoolOf()), asc(roleUsers.roleId))
  );
}

/**
 * Delegations that may be valid today somewhere, as in the access token
 * (src/modules/delegate/acting.ts): `validToday` keeps those valid in their school's today.
 */
function delegationsOn(db: Db, userId: number, now: Date) {
  return db
    .select({
      delegationId: delegates.id,
      schoolId: Delegates.schoolOf(),
      schoolName: sql<string>`${schools.name}`.as("delegate_school_name"),
      timeZone: schools.timeZone,
      parentId: delegates.parentId,
      userId: parents.userId,
      // The parent's name as their school knows them (./identity.ts).
      firstName: parentName.firstName.as("delegate_parent_first_name"),
      lastName: parentName.lastName.as("delegate_parent_last_name"),
      validFrom: delegates.validFrom,
      validUntil: delegates.validUntil,
    })
    .from(delegates)
    .innerJoin(schools, eq(schools.id, Delegates.schoolOf()))
    .innerJoin(parents, eq(parents.id, delegates.parentId))
    .innerJoin(users, eq(users.id, parents.userId))
    .leftJoin(parentCopy.table, copyOf(parentCopy, parents.userId, Delegates.schoolOf()))
    .where(delegationsAround(userId, now));
}

/**
 * The signed-in user with their schools and roles in each, and the legal documents to accept: one
 * round trip to the platform database, and one to each shard in parallel for the user's schools
 * there (docs/scaling.md "Shards", group F).
 */
export async function currentUser(ctx: Ctx) {
  const { db } = ctx.deps;
  const userId = ctx.userId ?? 0;
  const now = ctx.deps.clock.now();
  const [[[user], platformMemberships, platformDelegations, due], ...shards] = await Promise.all([
    db.batch([
      db.select().from(users).where(eq(users.id, userId)).limit(1),
      membershipsOn(db, userId),
      delegationsOn(db, userId, now),
      mustAcceptQuery(db, userId),
    ]),
    ...otherDatabases(ctx).map(({ deps: { db: shard } }) =>
      shard.batch([membershipsOn(shard, userId), delegationsOn(shard, userId, now)]),
    ),
  ]);
  const memberships = [...platformMemberships, ...shards.flatMap(([m]) => m)];
  const delegations = [...platformDelegations, ...shards.flatMap(([, d]) => d)];
  if (!user) throw notFound(m`User ${userId} not found`);
  if (user.deletedAt !== null) {
    throw new ApiError(401, m`This account has been deleted: sign in again to start a new one.`, {
      title: m`Account deleted`,
      headers: { "www-authenticate": 'Bearer realm="api"' },
    });
  }
  const bySchool = new Map<number, School>();
  const schoolEntry = (id: number, name: string) => {
    const school = bySchool.get(id) ?? { id, name, roles: [], actsFor: [] };
    bySchool.set(id, school);
    return school;
  };
  for (const m of memberships)
    schoolEntry(m.schoolId, m.schoolName).roles.push({ id: m.roleId, key: m.key, name: m.roleName });
  for (const { schoolId, schoolName, timeZone, ...d } of delegations) {
    if (validToday({ timeZone, validFrom: d.validFrom, validUntil: d.validUntil }, now)) {
      schoolEntry(schoolId, schoolName).actsFor.push(d);
    }
  }
  // In memory (a handful of rows): an ORDER BY would sort outside delegate_user_idx's order.
  const schoolList = [...bySchool.values()].sort((a, b) => a.id - b.id);
  for (const school of schoolList) school.actsFor.sort((a, b) => a.delegationId - b.delegationId);
  return { ...toUser(user), schools: schoolList, legal: toMustAccept(due) };
}

export const getCurrentUser = operation(me, (ctx) => currentUser(ctx));
