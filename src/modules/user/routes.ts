/** Users: the signed-in user's own information. */
import { z } from "@hono/zod-openapi";
import { asc, eq, sql } from "drizzle-orm";
import { roles, roleUsers, schools, users } from "../../db/core";
import { type Ctx, ctxOf } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { defineRoute, json, operation } from "../../lib/route";
import { UserSchema } from "../auth/routes";
import { toUser } from "../auth/service";
import { MustAccept, mustAcceptQuery, toMustAccept } from "../legal-document/due";

const Me = UserSchema.extend({
  schools: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      roles: z.array(z.object({ id: z.number().int(), key: z.string().nullable(), name: z.string() })),
    }),
  ),
  legal: MustAccept,
}).openapi("CurrentUser");

const me = defineRoute({
  method: "get",
  path: "/api/v1/user/me",
  tag: "People",
  operationId: "getCurrentUser",
  summary: "The signed-in user, with their schools and roles in each, and the legal documents they must accept",
  access: "user",
  responses: { 200: json(Me, "The signed-in user") },
});

/** The signed-in user with their schools and roles in each, and the legal documents to accept, in one round trip. */
export async function currentUser(ctx: Ctx) {
  const { db } = ctx.deps;
  const userId = ctx.userId ?? 0;
  const [[user], memberships, due] = await db.batch([
    db.select().from(users).where(eq(users.id, userId)).limit(1),
    db
      // D1's batch answers rows keyed by column name, which drizzle maps back by position: two
      // columns named alike (school.name, role.name) would collapse, so every name is distinct.
      .select({
        schoolId: roleUsers.schoolId,
        schoolName: schools.name,
        roleId: roleUsers.roleId,
        key: roles.key,
        roleName: sql<string>`${roles.name}`.as("role_name"),
      })
      .from(roleUsers)
      .innerJoin(schools, eq(schools.id, roleUsers.schoolId))
      .innerJoin(roles, eq(roles.id, roleUsers.roleId))
      .where(eq(roleUsers.userId, userId))
      // The order of role_user_uq (user_id, school_id, role_id): no sort step.
      .orderBy(asc(roleUsers.schoolId), asc(roleUsers.roleId)),
    mustAcceptQuery(db, userId),
  ]);
  if (!user) throw notFound("User", userId);
  const bySchool = new Map<number, z.infer<typeof Me>["schools"][number]>();
  for (const m of memberships) {
    const school = bySchool.get(m.schoolId) ?? { id: m.schoolId, name: m.schoolName, roles: [] };
    school.roles.push({ id: m.roleId, key: m.key, name: m.roleName });
    bySchool.set(m.schoolId, school);
  }
  return { ...toUser(user), schools: [...bySchool.values()], legal: toMustAccept(due) };
}

export const getCurrentUser = operation(me, async (c) => c.json(await currentUser(ctxOf(c)), 200));
