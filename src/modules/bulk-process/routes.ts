/**
 * Bulk process operations whose handlers do more than the generic ones: create also queues the
 * process, update only queues a failed one again, delete refuses a running one.
 */
import { z } from "@hono/zod-openapi";
import { BUILTIN_ROLES, type BuiltinRole, type PermissionDef } from "../../lib/access";
import { type Ctx, ctxOf } from "../../lib/context";
import { forbidden } from "../../lib/errors";
import { handled } from "../../lib/route";
import { permissions as administrativeUser } from "../administrative-user/api";
import { documentResource } from "../document/api";
import { mayAssign } from "../role/api";
import { permissions as teacher } from "../teacher/api";
import { FAMILY_ROLE } from "./family-import";
import { IMPORTS } from "./people-import";
import { permissions } from "./permissions";
import { bulkProcessResource, ENTITIES } from "./resource";
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
};

/** The role an import gives the people it finds, as its importer gives it. */
const roleGiven = (entity: Entity): BuiltinRole | undefined =>
  entity in IMPORTS ? IMPORTS[entity as keyof typeof IMPORTS].role : entity === "families" ? FAMILY_ROLE : undefined;

/**
 * Starting an import (or queueing it again) needs the entity's write permission and the right to
 * give the role it gives (src/modules/role/grants.ts): the consumer runs later as the import, with
 * every permission, so this is where the caller's rights are checked.
 */
async function mayImport(ctx: Ctx, entity: Entity) {
  const needed = WRITES[entity];
  if (needed && !ctx.can(needed)) {
    throw forbidden(`Importing ${entity} needs permission ${needed.name} in school ${ctx.schoolId}`);
  }
  const role = roleGiven(entity);
  if (role) await mayAssign(ctx, [BUILTIN_ROLES[role].id], `import ${entity}, giving`);
}

export const create = bulkProcessResource.create({
  access: permissions.write,
  input: z.object({
    entity: z.enum(ENTITIES).openapi({ example: "students" }),
    documentId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
  }),
  values: async (input, ctx) => {
    await mayImport(ctx, input.entity);
    // Another school's document answers 404 like a missing one.
    await documentResource.find(ctx, input.documentId);
    return { entity: input.entity, documentId: input.documentId, status: "queued", createdBy: ctx.userId };
  },
  errors: [404, 503],
  summary: "Start a bulk import of an uploaded spreadsheet",
});

/** Inserts first, then sends: if the send fails, `enqueue` marks the row failed and answers 503. */
export const createBulkProcess = handled(create.route, async (c) => {
  const ctx = ctxOf(c);
  const created = await create.run(ctx, c.req.valid("json"));
  await enqueue(ctx, created.id);
  return c.json(created, 201);
});

const update = bulkProcessResource.update({
  access: permissions.write,
  input: z.object({
    status: z.literal("queued").openapi({ description: "Queue a failed process again (the only change allowed)" }),
  }),
  errors: [503],
  summary: 'Queue a failed bulk process again ({ "status": "queued" })',
});

export const updateBulkProcess = handled(update.route, async (c) => {
  const ctx = ctxOf(c);
  const id = c.req.valid("param").id;
  // Queueing it again starts it again: the caller needs the rights its starter needed.
  await mayImport(ctx, (await bulkProcessResource.find(ctx, id)).entity);
  await requeue(ctx, id);
  return c.body(null, 204);
});

const del = bulkProcessResource.delete({
  access: permissions.write,
  errors: [409],
  summary: "Delete a bulk process that is not running",
});

export const deleteBulkProcess = handled(del.route, async (c) => {
  await remove(ctxOf(c), c.req.valid("param").id);
  return c.body(null, 204);
});
