/**
 * The push provider's users, as topics (FCM keeps no users: devices subscribe to topics). Each
 * school has a topic (`school-<id>`) and each role in it one (`school-<id>-role-<roleId>`); the
 * devices of a role's members are its topic's subscribers. Our records (`push_subscription`) say
 * what we told the provider; the provider's own answer is read back for a user.
 *
 * - `POST /api/v1/user/push-provider/sync-role` `{ roleId }`: subscribes the devices of the role's
 *   members in the school to its topic and to the school's, and unsubscribes the devices of those
 *   who no longer hold it; audited on the school (`sync-push-topic`: the topic, the devices).
 * - `DELETE /api/v1/user/push-provider/tenants` (super-admin): unsubscribes every device from the
 *   topics of the current school and of schools that no longer exist, and forgets them; audited
 *   on the current school (`clean-push-topics`).
 * - `GET /api/v1/user/{id}/push-provider`: a member's devices (token values masked), each with the
 *   topics the provider reports and the ones we recorded.
 *
 * Notifications are sent to each recipient's devices (./deliver.ts), not to topics: a topic
 * cannot honour one person's preferences. The topics are for broadcasts from the provider's own
 * console, and are what the original service's "provider users" map to.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools } from "../../db/schema/core";
import { DeviceTokens, deviceTokens } from "../../db/schema/device-token";
import { pushSubscriptions } from "../../db/schema/notification";
import { SchoolUsers, schoolUsers } from "../../db/schema/user";
import { and, eq, isNull, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { errorFields, log } from "../../lib/log";
import { m } from "../../lib/message";
import { recordId } from "../../lib/params";
import { roleTopic, schoolTopic } from "../../lib/push";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { permissions } from "./permissions";

/** Tokens per topic call (the Instance ID API takes at most 1,000). */
const PER_CALL = 1000;

function unavailable(err: unknown) {
  log.error("push provider unavailable", errorFields(err));
  return new ApiError(503, m`The push provider is unavailable; try again shortly`, {
    headers: { "retry-after": "30" },
  });
}

/** Subscribes or unsubscribes `tokens` in calls of `PER_CALL`; answers the tokens the provider refused. */
async function change(ctx: SchoolCtx, op: "subscribe" | "unsubscribe", topic: string, tokens: readonly string[]) {
  const refused: string[] = [];
  try {
    for (let i = 0; i < tokens.length; i += PER_CALL) {
      const part = tokens.slice(i, i + PER_CALL);
      const { errors } = await ctx.deps.push[op](topic, part);
      errors.forEach((e, j) => {
        if (e !== null) refused.push(part[j] ?? "");
      });
    }
  } catch (err) {
    throw unavailable(err);
  }
  return refused;
}

const SyncRole = z.strictObject({ roleId: recordId().openapi({ type: "integer", example: 5 }) });
const Synced = z
  .object({
    roleId: z.number().int(),
    topic: z.string().openapi({
      example: "school-1-role-5",
      description: "The role's topic at the provider: school-<schoolId>-role-<roleId>",
    }),
    devices: z.number().int().openapi({ description: "Devices subscribed now" }),
    subscribed: z.number().int().openapi({ description: "Devices added by this sync" }),
    unsubscribed: z.number().int().openapi({ description: "Devices removed by this sync" }),
  })
  .openapi("PushRoleSync");

const syncRoute = defineRoute({
  method: "post",
  path: "/api/v1/user/push-provider/sync-role",
  tag: "People",
  operationId: "syncPushProviderRole",
  summary: "Sync a role's push topic with the devices of its members in the school",
  access: permissions.pushProvider,
  audit: "school",
  errors: [503],
  request: { body: jsonBody(SyncRole, "PushRoleSyncInput") },
  responses: { 200: json(Synced, "The topic, synced") },
});

export async function syncPushProviderRole(ctx: SchoolCtx, { body }: InputOf<typeof syncRoute>) {
  const school = ctx.schoolId;
  // The role and its members, in the school's database; then their devices and the topic's, in the
  // platform's (devices and subscriptions are platform rows: docs/scaling.md "Shards", group D).
  const reads = new Batch(ctx);
  const found = reads.read(Roles.select(ctx, { id: roles.id }).where(eq(roles.id, body.roleId)).limit(1));
  const holders = reads.read(
    RoleUsers.select(ctx, { userId: roleUsers.userId }).where(eq(roleUsers.roleId, body.roleId)),
  );
  const inSchool = await reads.commit();
  const [role] = inSchool.get(found);
  if (!role) throw notFound(m`Role ${body.roleId} not found`);
  const members = inSchool.get(holders).map((r) => r.userId);
  const topic = roleTopic(school, role.id);
  const batch = new Batch(ctx, DeviceTokens);
  // The devices of the role's members in the school, and the devices the topic has now.
  const wanted = batch.read(
    DeviceTokens.select(ctx, { id: deviceTokens.id, token: deviceTokens.token }).where(
      inList(deviceTokens.userId, members),
    ),
  );
  const held = batch.read(
    DeviceTokens.select(ctx, { id: deviceTokens.id, token: deviceTokens.token }).where(
      inList(deviceTokens.id, subscribed(topic)),
    ),
  );
  const results = await batch.commit();
  const want = results.get(wanted);
  const have = results.get(held);
  const haveIds = new Set(have.map((d) => d.id));
  const wantIds = new Set(want.map((d) => d.id));
  const add = want.filter((d) => !haveIds.has(d.id));
  const drop = have.filter((d) => !wantIds.has(d.id));
  const refusedAdd = new Set(
    await change(
      ctx,
      "subscribe",
      topic,
      add.map((d) => d.token),
    ),
  );
  await change(
    ctx,
    "subscribe",
    schoolTopic(school),
    add.map((d) => d.token),
  );
  await change(
    ctx,
    "unsubscribe",
    topic,
    drop.map((d) => d.token),
  );
  const added = add.filter((d) => !refusedAdd.has(d.token));
  const at = ctx.deps.clock.now().toISOString();
  const rows = added.flatMap((d) => [
    { deviceTokenId: d.id, topic, createdAt: at },
    { deviceTokenId: d.id, topic: schoolTopic(school), createdAt: at },
  ]);
  const devices = have.length - drop.length + added.length;
  // Audited on the school (a built-in role belongs to none): the role and its devices before and
  // after. Platform rows (the school's, the topic's subscriptions): the platform's database.
  const write = new Batch(ctx, Schools).add(
    ...Schools.action(ctx, eq(schools.id, school), {
      action: "sync-push-topic",
      changes: { pushTopic: { old: topic, new: topic }, pushDevices: { old: have.length, new: devices } },
    }),
  );
  if (drop.length) {
    write.add(
      ctx.deps.db.delete(pushSubscriptions).where(
        and(
          eq(pushSubscriptions.topic, topic),
          inList(
            pushSubscriptions.deviceTokenId,
            drop.map((d) => d.id),
          ),
        ),
      ),
    );
  }
  for (let i = 0; i < rows.length; i += 500) {
    // Each row as one JSON parameter set: at most 3 columns x 500 rows, through json_each.
    const part = JSON.stringify(rows.slice(i, i + 500).map((r) => [r.deviceTokenId, r.topic, r.createdAt]));
    write.add(
      ctx.deps.db
        .insert(pushSubscriptions)
        .select(sql`SELECT NULL, value->>0, value->>1, value->>2 FROM json_each(${part}) WHERE true`)
        .onConflictDoNothing(),
    );
  }
  await write.commit();
  return { roleId: role.id, topic, devices, subscribed: added.length, unsubscribed: drop.length };
}

/** The device ids our records have subscribed to `topic`. */
const subscribed = (topic: string) =>
  sql`(SELECT ${pushSubscriptions.deviceTokenId} FROM ${pushSubscriptions} WHERE ${pushSubscriptions.topic} = ${topic})`;

const cleanRoute = defineRoute({
  method: "delete",
  path: "/api/v1/user/push-provider/tenants",
  tag: "People",
  operationId: "cleanPushProviderTenants",
  summary: "Remove the push provider's topics of this school and of schools that no longer exist (super-admin)",
  access: permissions.pushProviderClean,
  audit: "school",
  errors: [503],
  responses: { 204: noContent },
});

/** `school-<id>` and `school-<id>-role-<r>` of school `id`, parsed from a topic name. */
const schoolOfTopic = sql<number>`CAST(substr(${pushSubscriptions.topic}, 8) AS INTEGER)`;

export async function cleanPushProviderTenants(ctx: SchoolCtx) {
  const school = ctx.schoolId;
  // This school's topics, and the topics of schools that are gone.
  const ours = sql`(${pushSubscriptions.topic} = ${schoolTopic(school)} OR ${pushSubscriptions.topic} LIKE ${`${schoolTopic(school)}-role-%`})`;
  const gone = sql`NOT EXISTS (SELECT 1 FROM ${schools} WHERE ${schools.id} = ${schoolOfTopic})`;
  const which = sql`(${ours} OR ${gone})`;
  const rows = await ctx.deps.db
    .select({ topic: pushSubscriptions.topic, token: deviceTokens.token })
    .from(pushSubscriptions)
    .innerJoin(deviceTokens, eq(deviceTokens.id, pushSubscriptions.deviceTokenId))
    .where(which);
  const byTopic = new Map<string, string[]>();
  for (const r of rows) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r.token]);
  for (const [topic, tokens] of byTopic) await change(ctx, "unsubscribe", topic, tokens);
  const topics = [...byTopic.keys()].sort();
  // Platform rows (the school's, its topics'): the platform's database, whatever school it is in.
  await new Batch(ctx, Schools)
    .add(
      ...Schools.action(
        ctx,
        eq(schools.id, school),
        { action: "clean-push-topics", changes: { pushTopics: { old: topics, new: [] } } },
        ctx.deps.db.delete(pushSubscriptions).where(which),
      ),
    )
    .commit();
}

/** `json_group_array` of topic names. */
const Topics = z.array(z.string());

const Device = z.object({
  id: z.number().int(),
  platform: z.enum(["ios", "android", "web"]),
  token: z.string().openapi({ description: "Masked: `…` and its last 4 characters" }),
  providerTopics: z.array(z.string()).nullable().openapi({
    description: "The topics the provider has it subscribed to; null: the provider does not know the token",
  }),
  recordedTopics: z.array(z.string()).openapi({ description: "The topics we subscribed it to" }),
});
const ProviderUser = z
  .object({
    userId: z.number().int(),
    provider: z.enum(["log", "fcm"]).openapi({
      description:
        "The push provider of this deployment: fcm (Firebase Cloud Messaging); log (development: the push outbox)",
    }),
    devices: z.array(Device).openapi({ description: "The member's registered devices, with their topics" }),
  })
  .openapi("PushProviderUser");

const userRoute = defineRoute({
  method: "get",
  path: "/api/v1/user/{id}/push-provider",
  tag: "People",
  operationId: "getPushProviderUser",
  summary: "A member's devices as the push provider knows them",
  access: permissions.pushProvider,
  errors: [503],
  request: { params: IdParams },
  responses: { 200: json(ProviderUser, "The member's devices and their topics") },
});

export async function getPushProviderUser(ctx: SchoolCtx, { params }: InputOf<typeof userRoute>) {
  // The membership in the school's database, the devices in the platform's (docs/scaling.md
  // "Shards", group D): two reads, in parallel.
  const ofSchool = new Batch(ctx);
  const member = ofSchool.read(
    SchoolUsers.select(ctx, { userId: schoolUsers.userId })
      .where(eq(schoolUsers.userId, params.id), isNull(schoolUsers.deletedAt))
      .limit(1),
  );
  const batch = new Batch(ctx, DeviceTokens);
  const devices = batch.read(
    DeviceTokens.select(ctx, {
      id: deviceTokens.id,
      platform: deviceTokens.platform,
      token: deviceTokens.token,
      topics: sql<string>`(SELECT json_group_array(${pushSubscriptions.topic}) FROM ${pushSubscriptions} WHERE ${pushSubscriptions.deviceTokenId} = ${deviceTokens.id})`,
    })
      .where(eq(deviceTokens.userId, params.id))
      .orderBy(sql`${deviceTokens.id}`),
  );
  const [memberships, results] = await Promise.all([ofSchool.commit(), batch.commit()]);
  if (memberships.get(member).length === 0) throw notFound(m`User ${params.id} not found`);
  let listed: {
    id: number;
    platform: "ios" | "android" | "web";
    token: string;
    providerTopics: string[] | null;
    recordedTopics: string[];
  }[];
  try {
    listed = await Promise.all(
      results.get(devices).map(async (d) => ({
        id: d.id,
        platform: d.platform,
        token: `…${d.token.slice(-4)}`,
        providerTopics: await ctx.deps.push.topicsOf(d.token),
        recordedTopics: parseJson(Topics, d.topics).sort(),
      })),
    );
  } catch (err) {
    throw unavailable(err);
  }
  return { userId: params.id, provider: ctx.deps.push.name, devices: listed };
}

export const syncPushProviderRoleOperation = operation(syncRoute, syncPushProviderRole);
export const cleanPushProviderTenantsOperation = operation(cleanRoute, cleanPushProviderTenants);
export const getPushProviderUserOperation = operation(userRoute, getPushProviderUser);
