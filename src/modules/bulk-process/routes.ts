/**
 * Bulk process routes: list and get are the generic ones; create also queues the process,
 * update only queues a failed one again, delete refuses a running one.
 */
import { callerOf } from "../../lib/resource";
import { createRouter } from "../../lib/router";
import { bulkProcessResource, type CreateInput } from "./resource";
import { enqueue, remove, requeue } from "./service";

const { routes, service } = bulkProcessResource;

export const bulkProcessRouter = bulkProcessResource
  .mount(createRouter(), { except: ["create", "update", "delete"] })
  .openapi(routes.create as NonNullable<typeof routes.create>, async (c) => {
    const caller = callerOf(c);
    // Insert first, then send: if the send fails, `enqueue` marks the row failed and answers 503.
    const created = await service.create(caller, c.req.valid("json") as CreateInput);
    await enqueue(caller, created.id);
    return c.json(created, 201);
  })
  .openapi(routes.update as NonNullable<typeof routes.update>, async (c) => {
    await requeue(callerOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  })
  .openapi(routes.delete as NonNullable<typeof routes.delete>, async (c) => {
    await remove(callerOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
