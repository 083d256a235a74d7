/**
 * Device tokens: the push-messaging tokens of a user's devices.
 *
 * A token belongs to a user, not to a school, so the table has no `school_id`:
 * - everyone lists and reads their own tokens; a caller with `device-token.read` (admins) also
 *   those of every user who has a role in the current school — with the value masked: a token
 *   value is shown to its owner only, and never written to the audit trail;
 * - registering a value that another user holds is what a device does when someone else signs
 *   in on it: the row moves to the caller who presents the value (audited as `transfer`), and
 *   answers 201 like any registration;
 * - updates and deletes reach only the caller's own tokens, even for an admin: anyone else's is a
 *   404, so no one can redirect or silence another person's notifications.
 */
import { z } from "@hono/zod-openapi";
import { Batch, type Slot } from "../../db/batch";
import { RoleUsers, roleUsers } from "../../db/schema/core";
import { DeviceTokens, deviceTokens } from "../../db/schema/device-token";
import { PLATFORM, shardOf } from "../../db/shards";
import { eq } from "../../db/sql";
import { inList } from "../../db/write";
import type { MemberCtx, SchoolCtx } from "../../lib/context";
import { m, zodMessage } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { permissions } from "./permissions";

const Token = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^\S+$/, zodMessage(m`Must not contain whitespace`))
  .openapi({ description: "The push-messaging token of the device (FCM or APNs)", example: "fcm:APA91bH-example" });

const Platform = z.enum(["ios", "android", "web"]).openapi({ example: "ios" });

/** What others see of a token value: its last four characters. */
export const mask = (token: string) => `…${token.slice(-4)}`;

/**
 * Writes reach the caller's own tokens only, even for admins. Reads too, except with
 * `device-token.read`: then the tokens of every member of the current school (the caller's own
 * among them, as a member). One indexed condition either way, so the list reads
 * `device_token_user_idx` in order instead of sorting the school's tokens.
 */
function visibleTo(ctx: SchoolCtx, access: "read" | "write") {
  const own = eq(deviceTokens.userId, ctx.userId ?? 0);
  if (access === "write" || ctx.schoolId === null || !ctx.can(permissions.readAll)) return own;
  // A school on a shard: its members were read there first (`membersOnShard`); on `DB`, one statement.
  return inList(deviceTokens.userId, ctx.schoolMembers ?? RoleUsers.pick(ctx, roleUsers.userId));
}

/**
 * With `device-token.read` in a school on a shard: the school's members, read in the school's
 * database before the devices are read in the platform's (docs/scaling.md "Shards", group D);
 * never one statement over both. A school on `DB` keeps its one statement (`visibleTo`).
 */
async function membersOnShard(ctx: MemberCtx): Promise<MemberCtx> {
  if (!ctx.can(permissions.readAll) || (await shardOf(ctx.deps, ctx.schoolId)) === PLATFORM) return ctx;
  const rows = await RoleUsers.select(ctx, { userId: roleUsers.userId }).groupBy(roleUsers.userId).all();
  return { ...ctx, schoolMembers: rows.map((r) => r.userId) };
}

const resource = defineResource({
  name: "deviceToken",
  plural: "deviceTokens",
  label: m`Device token`,
  path: "/api/v1/device-token",
  tag: "Communication",
  scope: "school",
  data: DeviceTokens,
  // A device is the user's, in the platform database whichever school it is registered in
  // (docs/scaling.md "Shards", group D).
  platformRows: true,
  context: membersOnShard,
  record: RecordBase.extend({
    userId: z.number().int().openapi({ description: "The user the device belongs to" }),
    token: z
      .string()
      .openapi({ description: "The token value; masked (`…` and its last 4 characters) unless it is yours" }),
    platform: Platform,
  }),
  toRecord: (ctx, row) => ({
    ...timestamps(row),
    userId: row.userId,
    token: row.userId === ctx.userId ? row.token : mask(row.token),
    platform: row.platform,
  }),
  visibleTo,
  conflictMessage: m`This token was registered by another request just now; register it again`,
});

export const listDeviceTokens = resource.list({
  access: "member",
  filters: {
    userId: {
      schema: recordId().optional().openapi({ description: "Only this user's tokens" }),
      where: (_ctx, v: number) => eq(deviceTokens.userId, v),
      example: "2",
    },
  },
  // By user, then registration: the order of device_token_user_idx (user_id, then rowid).
  defaultOrder: [{ by: deviceTokens.userId }, { by: deviceTokens.id }],
  summary: "List device tokens (yours; with device-token.read, every member's of the school, masked)",
});

export const getDeviceToken = resource.get({ access: "member" });

const RegisterInput = z.object({ token: Token, platform: Platform });

const registerRoute = defineRoute({
  method: "post",
  path: "/api/v1/device-token",
  tag: "Communication",
  operationId: "createDeviceToken",
  summary: "Register a device token (a value held by another user moves to you)",
  access: "member",
  scope: "school",
  audit: "device-token",
  errors: [409],
  examples: { 409: "This token was registered by another request just now; register it again" },
  request: { body: jsonBody(RegisterInput.strict(), "DeviceTokenCreate") },
  responses: { 201: json(resource.record, "The created device token") },
});

/**
 * Registers the caller's device: a new value is created; a value the caller holds gets its
 * platform updated; a value another user holds moves to the caller (audited as a transfer).
 */
export async function registerDeviceToken(ctx: SchoolCtx, { body }: InputOf<typeof registerRoute>) {
  const userId = ctx.userId ?? 0;
  const held = await DeviceTokens.select(ctx).where(eq(deviceTokens.token, body.token)).first();
  // The platform's database, whichever school the caller is in (a device is a platform row).
  const batch = new Batch(ctx, DeviceTokens);
  let written: Slot<(typeof deviceTokens.$inferSelect)[]>;
  if (!held) {
    const values = { userId, ...body };
    // A token belongs to a user, not a school: its audit row is the school's it was registered
    // in, as its updates' are.
    batch.add(...DeviceTokens.insert(ctx, values, { inSchool: true }));
    written = batch.read(DeviceTokens.select(ctx).where(eq(deviceTokens.id, DeviceTokens.insertedId())));
  } else {
    // Not through `visibleTo`: the caller presents the value, which proves the device is theirs now.
    const where = eq(deviceTokens.id, held.id);
    const action = held.userId === userId ? "update" : "transfer";
    batch.add(...DeviceTokens.update(ctx, where, { userId, platform: body.platform }, action));
    written = batch.read(DeviceTokens.select(ctx).where(where));
  }
  const [row] = (await batch.commit({ conflict: resource.messages.conflict })).get(written);
  if (!row) throw new Error("device token registration returned no row");
  return resource.toRecord(ctx, row);
}

export const createDeviceToken = operation(registerRoute, registerDeviceToken);

export const updateDeviceToken = resource.update({
  access: "member",
  input: z.object({ token: Token.optional(), platform: Platform.optional() }),
  summary: "Update one of your device tokens",
});

export const deleteDeviceToken = resource.delete({ access: "member", summary: "Delete one of your device tokens" });
