/**
 * Development-only routes, mounted only when ENVIRONMENT=development: the outbox (SMS the `log`
 * provider "sent") and the local S3 endpoint (./s3.ts).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf, query } from "../../db/query";
import { devOutbox, devPushOutbox } from "../../db/schema/dev";
import { desc, eq } from "../../db/sql";
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

const PushMessage = z
  .object({
    id: z.number().int(),
    token: z.string().nullable().openapi({ description: "The device a message went to (null: a topic change)" }),
    topic: z.string().nullable().openapi({ description: "The topic a change was to (null: a message)" }),
    payload: z.record(z.string(), z.unknown()).openapi({
      description: "The FCM v1 message as FCM would get it, or the topic change `{ op, tokens }`",
      example: {
        message: {
          token: "fcm-token-of-the-device",
          notification: { title: "Route change confirmed", body: "Ana goes home on route North 2 today" },
          data: { notificationId: "42", category: "transport" },
          android: { priority: "NORMAL" },
          apns: { headers: { "apns-priority": "5" }, payload: { aps: { sound: "default" } } },
        },
      },
    }),
    createdAt: z.string(),
  })
  .openapi("PushOutboxMessage");

const pushOutbox = defineRoute({
  method: "get",
  path: "/api/v1/dev/push-outbox",
  tag: "Development",
  operationId: "listDevPushOutbox",
  summary: "Pushes sent to a device token, or changes to a topic (newest first); development only",
  access: "public",
  request: {
    query: PageQuery.extend({
      token: z.string().min(1).max(4096).optional().openapi({ description: "A device token" }),
      topic: z.string().min(1).max(200).optional().openapi({ description: "A topic (`school-1`)" }),
    }).strict(),
  },
  responses: { 200: json(pageOf(PushMessage, "PushOutboxPage"), "What the log push provider sent, newest first") },
});

/** A page of what the `log` push provider sent to a token or a topic (every one without either), newest first. */
export async function readPushOutbox(ctx: Ctx, { query: q }: InputOf<typeof pushOutbox>) {
  const messages = query(ctx, joinTable(devPushOutbox), columnsOf(devPushOutbox)).where(
    q.token === undefined ? undefined : eq(devPushOutbox.token, q.token),
    q.topic === undefined ? undefined : eq(devPushOutbox.topic, q.topic),
  );
  const batch = new Batch(ctx);
  const rows = batch.read(
    messages
      .orderBy(desc(devPushOutbox.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
  );
  const total = batch.read(messages.count());
  const results = await batch.commit();
  return new Listing(results.get(rows), results.get(total)[0]?.n ?? 0, { page: q.page, pageSize: q.pageSize });
}

export const listDevPushOutbox = operation(pushOutbox, readPushOutbox);
