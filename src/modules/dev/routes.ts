/**
 * Development-only routes, mounted only when ENVIRONMENT=development: the outbox (SMS the `log`
 * provider "sent") and the local S3 endpoint (./s3.ts).
 */
import { z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { devOutbox } from "../../db/schema/dev";
import { PageQuery, pageOf, paginate } from "../../lib/pagination";
import { Phone } from "../../lib/phone";
import { defineRoute, handled, json } from "../../lib/route";
import { codeInMessage } from "../auth/api";

const Message = z
  .object({
    id: z.number().int(),
    to: z.string(),
    body: z.string(),
    code: z
      .string()
      .nullable()
      .openapi({ description: "The sign-in code the message carries, or null", example: "123456" }),
    createdAt: z.string(),
  })
  .openapi("OutboxMessage");

const outbox = defineRoute({
  method: "get",
  path: "/api/v1/dev/outbox",
  tag: "Development",
  operationId: "listDevOutbox",
  summary: "Messages sent to a number (newest first); development only",
  access: "public",
  request: { query: PageQuery.extend({ to: Phone }).strict() },
  responses: { 200: json(pageOf(Message, "OutboxPage"), "Messages, newest first") },
});

export const listDevOutbox = handled(outbox, async (c) => {
  const q = c.req.valid("query");
  const page = await paginate<typeof devOutbox.$inferSelect>(c.var.deps.db, devOutbox, {
    where: eq(devOutbox.to, q.to),
    orderBy: [desc(devOutbox.id)],
    page: q,
    url: c.req.url,
  });
  return c.json({ ...page, data: page.data.map((m) => ({ ...m, code: codeInMessage(m.body) })) }, 200);
});
