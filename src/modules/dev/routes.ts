/**
 * Development-only routes, mounted only when ENVIRONMENT=development: the outbox (SMS the `log`
 * provider "sent") and the local S3 endpoint (./s3.ts).
 */
import { z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { Batch } from "../../db/batch";
import { columnsOf, query } from "../../db/query";
import { devOutbox } from "../../db/schema/dev";
import { joinTable } from "../../db/table";
import type { Ctx } from "../../lib/context";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { Phone } from "../../lib/phone";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { codeInMessage } from "../auth/api";

const Message = z
  .object({
    id: z.number().int().openapi({ description: "The message's id" }),
    to: z.string().openapi({ description: "The phone number it was sent to (E.164)" }),
    body: z.string().openapi({ description: "The text, as an SMS would carry it" }),
    code: z
      .string()
      .nullable()
      .openapi({ description: "The sign-in code the message carries, or null", example: "123456" }),
    createdAt: z.string().openapi({ description: "When it was sent (UTC)" }),
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

/** A page of the messages sent to a number, newest first (a development table: no school). */
export async function readOutbox(ctx: Ctx, { query: q }: InputOf<typeof outbox>) {
  const messages = query(ctx, joinTable(devOutbox), columnsOf(devOutbox)).where(eq(devOutbox.to, q.to));
  const batch = new Batch(ctx);
  const rows = batch.read(
    messages
      .orderBy(desc(devOutbox.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
  );
  const total = batch.read(messages.count());
  const results = await batch.commit();
  const data = results.get(rows).map((m) => ({ ...m, code: codeInMessage(m.body) }));
  return new Listing(data, results.get(total)[0]?.n ?? 0, { page: q.page, pageSize: q.pageSize });
}

export const listDevOutbox = operation(outbox, readOutbox);
