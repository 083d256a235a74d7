/**
 * The audit trail (`GET /api/v1/audit-log`): who changed what, when, with the old and new values.
 * Written only by the building block (src/db/audit.ts), in the same batch as each change; no route
 * changes or deletes a row. School admins read their school's trail; the super-admin reads every
 * school's when no `X-School-Id` is sent (and one school's when it is). Newest first.
 */
import { z } from "@hono/zod-openapi";
import { columnsOf } from "../../db/query";
import { auditLog } from "../../db/schema/audit-log";
import { AuditLog } from "../../db/schema/audit-trail";
import { Users, users } from "../../db/schema/core";
import { onDatabaseOfId } from "../../db/shards";
import { and, eq, gte, isNull, lte, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import type { Ctx } from "../../lib/context";
import { dateTime } from "../../lib/dates";
import { parseJson } from "../../lib/json";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase } from "../../lib/resource";
import { serve } from "../../lib/route";
import { copyOf, copyTable, identity } from "../user/api";
import { permissions } from "./permissions";

const ActorType = z
  .enum(auditLog.actorType.enumValues)
  .openapi({ description: "Who made the change: a user, an import (bulk process) or a scheduled job" });

const Change = z
  .object({
    old: z.unknown().openapi({ description: "The value before (null for a create)" }),
    new: z.unknown().openapi({ description: "The value after (null for a delete)" }),
  })
  .openapi("AuditChange");

/** `user:2`, `import:7` or `job:sweep-bulk-processes`. */
const ActorRef = z
  .string()
  .max(80)
  .regex(
    /^(user:[1-9]\d{0,15}|import:[1-9]\d{0,15}|job:[a-z][a-z0-9-]{0,60})$/,
    zodMessage(m`Expected user:<id>, import:<id> or job:<name>`),
  )
  .optional()
  .openapi({
    description: "Only changes by this actor: `user:<id>`, `import:<bulk process id>` or `job:<name>`",
    example: "user:2",
  });

/** `document:5`: the history of one record. */
const RecordRef = z
  .string()
  .max(80)
  .regex(/^[a-z][a-z0-9-]{0,40}:[1-9]\d{0,15}$/, zodMessage(m`Expected <entity>:<id>, like document:5`))
  .optional()
  .openapi({ description: "Only changes of this record: `<entity>:<id>`", example: "document:5" });

const Entity = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,40}$/, zodMessage(m`Expected an entity name like document`))
  .optional()
  .openapi({ description: "Only changes of this kind of record", example: "document" });

function actorWhere(ref: string): SQL | undefined {
  const value = ref.slice(ref.indexOf(":") + 1);
  if (ref.startsWith("job:")) {
    return and(eq(auditLog.actorType, "job"), isNull(auditLog.actorId), eq(auditLog.actorName, value));
  }
  const type = ref.startsWith("user:") ? "user" : "import";
  return and(eq(auditLog.actorType, type), eq(auditLog.actorId, Number(value)));
}

function recordWhere(ref: string): SQL | undefined {
  const i = ref.lastIndexOf(":");
  return and(eq(auditLog.entity, ref.slice(0, i)), eq(auditLog.recordId, Number(ref.slice(i + 1))));
}

function parseChanges(text: string): Record<string, { old: unknown; new: unknown }> {
  return parseJson(z.record(z.string(), Change), text, {});
}

const actorCopy = copyTable("actor_copy");
const actorName = identity(users, actorCopy.table);

const resource = defineResource({
  name: "auditLog",
  plural: "auditLogs",
  label: m`Audit log entry`,
  path: "/api/v1/audit-log",
  tag: "Operations",
  scope: "platform",
  data: AuditLog,
  record: RecordBase.extend({
    schoolId: z.number().int().nullable().openapi({ description: "The school; null for platform records" }),
    actor: z
      .object({
        type: ActorType,
        id: z.number().int().nullable().openapi({ description: "The user id, or the bulk process id of an import" }),
        name: z.string().nullable().openapi({ description: "The user's name, or the job's" }),
      })
      .openapi({ description: "Who made the change" }),
    entity: z.string().openapi({ example: "document", description: "The kind of record that changed" }),
    recordId: z.number().int(),
    action: z.string().openapi({ example: "update", description: "create, update, delete or an action's name" }),
    changes: z.record(z.string(), Change).openapi({
      description: "The fields that changed, by field name, with old and new values",
      example: {
        name: { old: "Field trip form", new: "Field trip permission" },
        dueDate: { old: null, new: "2026-12-04" },
      },
    }),
    requestId: z.string().nullable(),
  }),
  // The acting user's name (as the row's school knows them: src/modules/user/identity.ts), joined:
  // one round trip for the page and its names.
  view: {
    fields: {
      ...columnsOf(auditLog),
      userName: sql<string | null>`trim(${actorName.firstName} || ' ' || ${actorName.lastName})`,
    },
    join: (q) =>
      q
        .leftJoin(Users, sql`${eq(auditLog.actorType, "user")} AND ${eq(users.id, auditLog.actorId)}`)
        // The actor as the row's school knows them (the row's school, not the current one).
        .leftJoin(joinTable(actorCopy.table), copyOf(actorCopy, users.id, AuditLog.schoolOf())),
  },
  toRecord: (_ctx, row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    schoolId: row.schoolId,
    actor: { type: row.actorType, id: row.actorId, name: row.actorName ?? row.userName },
    entity: row.entity,
    recordId: row.recordId,
    action: row.action,
    changes: parseChanges(row.changes),
    requestId: row.requestId,
  }),
  // By school on school routes; the super-admin without X-School-Id (no current school) reads
  // every school's trail: the accessor's tenancy, school-or-platform.
});

const at = (description: string) => dateTime(description, "2026-11-01T00:00:00Z").optional();

export const listAuditLogs = resource.list({
  access: permissions.read,
  filters: {
    entity: { schema: Entity, where: (_ctx, v: string) => eq(auditLog.entity, v), example: "document" },
    record: { schema: RecordRef, where: (_ctx, v: string) => recordWhere(v), example: "document:5" },
    actor: { schema: ActorRef, where: (_ctx, v: string) => actorWhere(v), example: "user:2" },
    from: {
      schema: at("Only changes at or after this instant"),
      where: (_ctx, v: string) => gte(auditLog.createdAt, v),
      example: "2026-11-01T00:00:00Z",
    },
    to: {
      schema: at("Only changes at or before this instant"),
      where: (_ctx, v: string) => lte(auditLog.createdAt, v),
      example: "2026-12-01T00:00:00Z",
    },
  },
  // Newest first, through the (school_id, ..., created_at) indexes read backwards.
  defaultOrder: [
    { by: auditLog.createdAt, desc: true },
    { by: auditLog.id, desc: true },
  ],
  // Without a school: each database's trail (the platform's and each shard's), merged in that order.
  acrossDatabases: {
    compare: (a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : b.id - a.id),
  },
  summary: "List the audit trail, newest first (the super-admin without X-School-Id: every school's)",
});

const getOnItsDatabase = resource.get({ access: permissions.read, summary: "Get an audit log entry by id" });

/** Without a school: the entry on the database whose id range holds it (docs/scaling.md "Record ids"). */
const readEntry = (ctx: Ctx, input: Parameters<typeof getOnItsDatabase.run>[1]) =>
  getOnItsDatabase.run(ctx.schoolId === null ? onDatabaseOfId(ctx, input.params.id) : ctx, input);

export const getAuditLog = {
  ...serve(getOnItsDatabase.route, readEntry),
  route: getOnItsDatabase.route,
  run: readEntry,
};
