/**
 * Device tokens (spec 2.6, 4.4, 4.7): the push-messaging tokens of a user's devices.
 *
 * A token belongs to a user, not to a school, so the table has no `school_id`:
 * - everyone lists and reads their own tokens; a caller with `device-token.read` (admins) also
 *   those of every user who has a role in the current school;
 * - registering a token that already exists moves that row to the caller (a device changes hands
 *   when someone else signs in on it) instead of duplicating it, and answers 201 either way;
 * - updates and deletes reach only the caller's own tokens, even for an admin: anyone else's is a
 *   404, so no one can redirect or silence another person's notifications.
 */
import { z } from "@hono/zod-openapi";
import { asc, eq, inArray } from "drizzle-orm";
import { roleUsers } from "../../db/core";
import { recordId } from "../../lib/params";
import { type Caller, defineResource, RecordBase, readWrite, timestamps } from "../../lib/resource";
import { createRouter } from "../../lib/router";
import { deviceTokens } from "./schema";

const Token = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^\S+$/, "Must not contain whitespace")
  .openapi({ description: "The push-messaging token of the device (FCM or APNs)", example: "fcm:APA91bH-example" });

const Platform = z.enum(["ios", "android", "web"]).openapi({ example: "ios" });

const RegisterInput = z.object({ token: Token, platform: Platform });

/**
 * Writes reach the caller's own tokens only, even for admins. Reads too, except with
 * `device-token.read`: then the tokens of every member of the current school (the caller's own
 * among them, as a member). One indexed condition either way, so the list reads
 * `device_token_user_idx` in order instead of sorting the school's tokens.
 */
function visibleTo({ principal, schoolId, deps }: Caller, access: "read" | "write") {
  const own = eq(deviceTokens.userId, principal.userId);
  if (access === "write" || schoolId === null || !principal.can("device-token.read")) return own;
  const members = deps.db.select({ userId: roleUsers.userId }).from(roleUsers).where(eq(roleUsers.schoolId, schoolId));
  return inArray(deviceTokens.userId, members);
}

export const deviceTokenResource = defineResource({
  name: "deviceToken",
  plural: "deviceTokens",
  label: "Device token",
  path: "/api/v1/device-token",
  tag: "Communication",
  scope: "school",
  // By user, then registration: the order of device_token_user_idx (user_id, then rowid).
  defaultOrder: [asc(deviceTokens.userId), asc(deviceTokens.id)],
  table: deviceTokens,
  record: RecordBase.extend({
    userId: z.number().int().openapi({ description: "The user the device belongs to" }),
    token: z.string(),
    platform: Platform,
  }),
  toRecord: (row) => ({ ...timestamps(row), userId: row.userId, token: row.token, platform: row.platform }),
  access: readWrite("member", "member"),
  create: RegisterInput,
  update: z.object({ token: Token.optional(), platform: Platform.optional() }),
  filters: {
    userId: {
      schema: recordId().optional().openapi({ description: "Only this user's tokens" }),
      where: (v: number) => eq(deviceTokens.userId, v),
    },
  },
  visibleTo,
  conflictMessage: "This token is already registered; register it again with POST to take it over",
  summaries: {
    list: "List device tokens (yours; with device-token.read, every member's of the school)",
    get: "Get a device token by id",
    create: "Register a device token (re-registering an existing token takes it over)",
    update: "Update one of your device tokens",
    delete: "Delete one of your device tokens",
  },
});

const { routes } = deviceTokenResource;

/** The generic routes, but registering upserts on the token (a device changes hands at sign-in). */
export const deviceTokenRouter = deviceTokenResource
  .mount(createRouter(), { except: ["create"] })
  .openapi(routes.create as NonNullable<typeof routes.create>, async (c) => {
    const { deps, principal } = c.var;
    // The generic route types its body loosely; it was validated against RegisterInput.
    const { token, platform } = c.req.valid("json") as z.infer<typeof RegisterInput>;
    const now = deps.clock.now().toISOString();
    const [row] = await deps.db
      .insert(deviceTokens)
      .values({ userId: principal.userId, token, platform, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: deviceTokens.token, set: { userId: principal.userId, platform, updatedAt: now } })
      .returning();
    if (!row) throw new Error("device token upsert returned no row");
    return c.json(deviceTokenResource.config.toRecord(row), 201);
  });
