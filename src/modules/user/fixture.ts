import { and, eq } from "drizzle-orm";
import { createVia, type Fixtures, fixturePhone, type Made } from "../../../test/fixture-kit";
import { roleUsers, users } from "../../db/schema/core";
import { schoolUsers } from "../../db/schema/user";
import { withSearch } from "../../db/search";

/** A member made straight in the database: a call whose audit rows are counted writes none for it. */
type T = Parameters<Made<number>>[0];
const quietMember = async (t: T, school: number) => {
  const at = t.clock.now().toISOString();
  const [user] = await t.db
    .insert(users)
    .values(
      withSearch(users, { phone: fixturePhone(), firstName: "Quiet", status: "invited", createdAt: at, updatedAt: at }),
    )
    .returning({ id: users.id });
  const id = user?.id ?? 0;
  await t.db.insert(schoolUsers).values({ schoolId: school, userId: id, createdAt: at, updatedAt: at });
  return id;
};

export const fixtures: Fixtures = {
  "/api/v1/user": {
    create: (t, school) => createVia(t, "/api/v1/user", school, { phone: fixturePhone(), firstName: "Ada" }),
    bodies: {
      updateUser: { lastName: "Renamed by the conformance suite" },
      // The caller's own account (the demo admin): their language as it is.
      updateCurrentUser: { language: "en" },
      deleteUsers: async (t: T, school: number) => ({ ids: [await quietMember(t, school)] }),
      assignPendingUsersToParents: async (t: T, school: number) => ({ userIds: [await quietMember(t, school)] }),
      inviteToSchool: () => Promise.resolve({ phones: [fixturePhone()] }),
      inviteUsers: async (t: T, school: number) => ({ userIds: [await quietMember(t, school)] }),
      // Everyone else of the school was just texted (cooldown): the call texts the new member only.
      inviteInactiveUsers: async (t: T, school: number) => {
        const id = await quietMember(t, school);
        const at = t.clock.now().toISOString();
        await t.db.update(schoolUsers).set({ invitedAt: at }).where(eq(schoolUsers.schoolId, school));
        await t.db
          .update(schoolUsers)
          .set({ invitedAt: null })
          .where(and(eq(schoolUsers.schoolId, school), eq(schoolUsers.userId, id)));
        await t.db.insert(roleUsers).values({
          schoolId: school,
          userId: id,
          roleId: 5,
          createdAt: at,
          updatedAt: at,
        });
        return { role: "parent" };
      },
    },
    params: { role: () => Promise.resolve("parent") },
  },
};
