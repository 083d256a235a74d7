/**
 * Bulk process operations whose handlers do more than the generic ones: create also queues the
 * process, update only queues a failed one again, delete refuses a running one.
 */
import { z } from "@hono/zod-openapi";
import { BUILTIN_ROLES, type BuiltinRole, type PermissionDef } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { forbidden } from "../../lib/errors";
import { currentLanguage } from "../../lib/language";
import { m } from "../../lib/message";
import { type InputOf, operation } from "../../lib/route";
import { permissions as administrativeUser } from "../administrative-user/api";
import { documentResource } from "../document/api";
import { mayAssign } from "../role/api";
import { permissions as routeStudent } from "../route-student/api";
import { permissions as teacher } from "../teacher/api";
import { FAMILY_ROLE } from "./family-import";
import { IMPORTS } from "./people-import";
import { permissions } from "./permissions";
import { bulkProcessResource, type ENTITIES, IMPORT_ENTITIES } from "./resource";
import { enqueue, remove, requeue } from "./service";

type Entity = (typeof ENTITIES)[number];

/**
 * What a people import writes needs the entity's own write permission too: bulk-process.write
 * starts imports, but an import of administrative staff makes staff, which only holders of
 * administrative-user.write (school admins) may do by hand.
 */
const WRITES: Partial<Record<Entity, PermissionDef>> = {
  teachers: teacher.write,
  "administrative-staff": administrativeUser.write,
  "route-students": routeStudent.write,
};

/** The role an import gives the people it finds, as its importer gives it. */
const roleGiven = (entity: Entity): BuiltinRole | undefined =>
  isPeopleImport(entity) ? IMPORTS[entity].role : entity === "families" ? FAMILY_ROLE : undefined;
const isPeopleImport = (entity: Entity): entity is Entity & keyof typeof IMPORTS => entity in IMPORTS;

/**
 * Starting an import (or queueing it again) needs the entity's write permission and the right to
 * give the role it gives (src/modules/role/grants.ts): the consumer runs later as the import, with
 * every permission, so this is where the caller's rights are checked.
 */
async function mayImport(ctx: SchoolCtx, entity: Entity) {
  const needed = WRITES[entity];
  if (needed && !ctx.can(needed)) {
    throw forbidden(m`Importing ${entity} needs permission ${needed.name} in school ${ctx.schoolId}`);
  }
  const role = roleGiven(entity);
  if (role) await mayAssign(ctx, [BUILTIN_ROLES[role].id], m`import ${entity}, giving`);
}

export const create = bulkProcessResource.create({
  access: permissions.write,
  input: z.object({
    entity: z.enum(IMPORT_ENTITIES).openapi({ example: "students", description: "What the spreadsheet holds" }),
    documentId: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .openapi({ example: 1, description: "The uploaded spreadsheet: a document of this school (404 otherwise)" }),
  }),
  values: async (ctx, { body }) => {
    await mayImport(ctx, body.entity);
    // Another school's document answers 404 like a missing one.
    await documentResource.find(ctx, body.documentId);
    // Its report (row errors) is written in the language of whoever starts it.
    return {
      entity: body.entity,
      documentId: body.documentId,
      status: "queued",
      createdBy: ctx.userId,
      language: currentLanguage(),
    };
  },
  errors: [404, 503],
  examples: { 404: "Document 42 not found" },
  summary: "Start a bulk import of an uploaded spreadsheet",
});

/** Inserts first, then sends: if the send fails, `enqueue` marks the row failed and answers 503. */
export async function startBulkProcess(ctx: SchoolCtx, { body }: InputOf<typeof create.route>) {
  const created = await create.run(ctx, { body });
  await enqueue(ctx, created.id);
  return created;
}

export const createBulkProcess = operation(create.route, startBulkProcess);

const update = bulkProcessResource.update({
  access: permissions.write,
  input: z.object({
    status: z.literal("queued").openapi({ description: "Queue a failed process again (the only change allowed)" }),
  }),
  errors: [503],
  examples: { 409: "Bulk process 42 is completed; only a failed process can be queued again" },
  summary: 'Queue a failed bulk process again ({ "status": "queued" })',
});

/** Queues a failed process again: it starts again, so the caller needs the rights its starter needed. */
export async function queueAgain(ctx: SchoolCtx, { params }: InputOf<typeof update.route>): Promise<undefined> {
  const { id } = params;
  await mayImport(ctx, (await bulkProcessResource.find(ctx, id)).entity);
  await requeue(ctx, id);
}

export const updateBulkProcess = operation(update.route, queueAgain);

const del = bulkProcessResource.delete({
  access: permissions.write,
  errors: [409],
  examples: { 409: "Bulk process 42 is processing; delete it once it has finished" },
  summary: "Delete a bulk process that is not running",
});

export const deleteBulkProcess = operation(del.route, async (ctx, { params }): Promise<undefined> => {
  await remove(ctx, params.id);
});
