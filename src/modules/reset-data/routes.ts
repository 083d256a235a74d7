/**
 * `DELETE /api/v1/reset-data`: removes the entire database's data and the push provider's topics,
 * for a development or staging environment that starts over. Three locks:
 * - the super-admin's `reset-data` permission (no built-in role holds it);
 * - `RESET_DATA_ENABLED=true`, or a 403 naming the setting; the production configuration refuses
 *   the setting outright (src/config.ts: the Worker would not start);
 * - the confirmation phrase in the body, exactly (else 400).
 *
 * What goes: every school and everything of theirs (the foreign keys cascade), every user but the
 * super-admins (their devices, sessions and memberships with them), custom permissions, legal
 * documents, the cron history, queue receipts, rate-limit counters, sign-in codes, the development
 * outboxes, and every topic subscription at the push provider. What stays: the super-admins (so
 * someone can sign in and create a school), the built-in catalogue (permissions, roles, application
 * modules) and the audit trail, which is append-only (it records the reset itself).
 */
import { z } from "@hono/zod-openapi";
import { verificationCodes } from "../../db/schema/auth";
import { bulkProcesses } from "../../db/schema/bulk-process";
import { permissions as permissionTable, schools, users } from "../../db/schema/core";
import { devOutbox, devPushOutbox } from "../../db/schema/dev";
import { deviceTokens } from "../../db/schema/device-token";
import { cronHistory, queueReceipts, rateLimits } from "../../db/schema/jobs";
import { legalDocuments } from "../../db/schema/legal-document";
import { pushSubscriptions } from "../../db/schema/notification";
import { otherDatabases } from "../../db/shards";
import { eq, gte, sql } from "../../db/sql";
import { auditEntry } from "../../db/table";
import { commit } from "../../db/write";
import { FIRST_CUSTOM_PERMISSION_ID } from "../../lib/access";
import type { Ctx } from "../../lib/context";
import { ApiError, forbidden } from "../../lib/errors";
import { errorFields, log } from "../../lib/log";
import { m, zodMessage } from "../../lib/message";
import { defineRoute, type InputOf, jsonBody, noContent, operation } from "../../lib/route";
import { permissions } from "./permissions";

export const CONFIRMATION = "DELETE ALL DATA";

const ResetBody = z.strictObject({
  confirm: z.literal(CONFIRMATION, zodMessage(m`Type the confirmation phrase exactly: ${CONFIRMATION}`)).openapi({
    description: "The confirmation phrase, exactly",
    example: CONFIRMATION,
  }),
});

const route = defineRoute({
  method: "delete",
  path: "/api/v1/reset-data",
  tag: "Operations",
  operationId: "resetData",
  summary: "Remove every school's data and the push provider's topics (super-admin; never in production)",
  description:
    "Refused (403) unless RESET_DATA_ENABLED=true, which the production configuration never allows. " +
    "Keeps the super-admins, the built-in catalogue and the audit trail.",
  access: permissions.reset,
  scope: "platform",
  audit: "reset-data",
  errors: [503],
  request: { body: jsonBody(ResetBody, "ResetData") },
  responses: { 204: noContent },
  // The generated suites must not run it on the database they share (test/reset-data.test.ts does).
  extensions: { "x-destructive": true },
});

export async function resetData(ctx: Ctx, _input: InputOf<typeof route>) {
  if (!ctx.deps.config.resetDataEnabled) {
    throw forbidden(m`The data reset is disabled: it runs only where RESET_DATA_ENABLED=true (never in production)`);
  }
  const { db } = ctx.deps;
  // The provider's topics first: a failure there leaves the data as it was (run it again).
  const subscriptions = await db
    .select({ topic: pushSubscriptions.topic, token: deviceTokens.token })
    .from(pushSubscriptions)
    .innerJoin(deviceTokens, eq(deviceTokens.id, pushSubscriptions.deviceTokenId));
  const byTopic = new Map<string, string[]>();
  for (const s of subscriptions) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s.token]);
  try {
    for (const [topic, tokens] of byTopic) {
      for (let i = 0; i < tokens.length; i += 1000) await ctx.deps.push.unsubscribe(topic, tokens.slice(i, i + 1000));
    }
  } catch (err) {
    log.error("push provider unavailable during the data reset", errorFields(err));
    throw new ApiError(503, m`The push provider is unavailable; nothing was removed, try again shortly`, {
      headers: { "retry-after": "30" },
    });
  }
  const _at = ctx.deps.clock.now().toISOString();
  const count = (table: typeof schools | typeof users, where = sql`1`) =>
    sql`(SELECT count(*) FROM ${table} WHERE ${where})`;
  const notSuperAdmin = eq(users.isSuperAdmin, false);
  await commit(ctx, [
    // The reset's own audit row, with what it removes, before it does.
    auditEntry(ctx, {
      entity: "reset-data",
      recordId: 0,
      action: "delete",
      changes: {
        schools: { old: count(schools), new: 0 },
        users: { old: count(users, notSuperAdmin), new: 0 },
        pushTopics: { old: byTopic.size, new: 0 },
      },
    }),
    db.delete(pushSubscriptions),
    db.delete(schools),
    db.delete(users).where(notSuperAdmin),
    db.delete(permissionTable).where(gte(permissionTable.id, FIRST_CUSTOM_PERMISSION_ID)),
    db.delete(legalDocuments),
    db.delete(cronHistory),
    db.delete(queueReceipts),
    db.delete(rateLimits),
    db.delete(verificationCodes),
    db.delete(devOutbox),
    db.delete(devPushOutbox),
  ]);
  // Each shard's anchors after the platform's rows: its schools (their rows cascade), its users'
  // and custom permissions' copies, and its sweeps' history (docs/scaling.md "Anchors").
  await Promise.all(
    otherDatabases(ctx).map(({ deps: { db: shard } }) =>
      shard.batch([
        // A bulk process RESTRICTs its document's deletion (src/modules/school/service.ts): first.
        shard.delete(bulkProcesses),
        shard.delete(schools),
        shard.delete(users).where(notSuperAdmin),
        shard.delete(permissionTable).where(gte(permissionTable.id, FIRST_CUSTOM_PERMISSION_ID)),
        shard.delete(cronHistory),
      ]),
    ),
  );
}

export const resetDataOperation = operation(route, resetData);
