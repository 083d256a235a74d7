/** The push queue's messages (what the API and the sweep send, what the consumer reads). */
import { z } from "@hono/zod-openapi";

export const PUSH_QUEUE = "school-push";
export const PUSH_DLQ = "school-push-dlq";

export const PushMessage = z.discriminatedUnion("kind", [
  /** Write the copies of the recipients after user `after` (a chunk), then queue the next chunk and the pushes. */
  z.object({ kind: z.literal("fan-out"), key: z.string().min(1), schoolId: z.number().int(), after: z.number().int() }),
  /** Send the due pushes of one notification (a batch of them; more: another message). */
  z.object({ kind: z.literal("push"), notificationId: z.number().int(), schoolId: z.number().int() }),
]);
export type PushMessage = z.infer<typeof PushMessage>;
