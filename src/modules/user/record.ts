/** A user as every answer shows one: the sign-in's session, `/user/me`, a school's people. */
import { z } from "@hono/zod-openapi";
import type { users } from "../../db/schema/core";
import { RecordBase } from "../../lib/resource";

export const UserSchema = RecordBase.extend({
  phone: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string().nullable(),
  language: z.string(),
  status: z
    .enum(["invited", "active", "inactive"])
    .openapi({ description: "invited (has never signed in), active, or inactive (may not sign in)" }),
  isSuperAdmin: z.boolean().openapi({ description: "A platform administrator, who may act in any school" }),
}).openapi("User", { description: "A user: one person, with one sign-in across schools" });

type UserRow = typeof users.$inferSelect;

export function toUser(u: UserRow) {
  return {
    id: u.id,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
    phone: u.phone,
    firstName: u.firstName,
    lastName: u.lastName,
    email: u.email,
    language: u.language,
    status: u.status,
    isSuperAdmin: u.isSuperAdmin,
  };
}
