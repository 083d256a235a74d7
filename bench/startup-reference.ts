/**
 * A fixed start-up workload, the yardstick of `measureStartup` (bench/bundle.ts): evaluating zod
 * (with @hono/zod-openapi's extension, as the app does) and building a fixed set of schemas,
 * much as the app's modules do when they are evaluated. It changes only when those packages do.
 * Its CPU time, measured in fresh isolates right beside the app's, tells how much the machine's
 * current load inflates start-up.
 */
import { z } from "@hono/zod-openapi";

const built: unknown[] = [];
for (let i = 0; i < 60; i++) {
  built.push(
    z
      .object({
        id: z.number().int().min(1),
        name: z.string().min(1).max(100),
        kind: z.enum(["a", "b", "c"]).optional(),
        at: z.iso.datetime(),
        tags: z.array(z.string().max(20)).max(10),
        email: z.email().optional(),
      })
      .strict()
      .openapi(`Reference${i}`),
  );
}

export default { fetch: () => new Response(String(built.length)) };

/** wrangler.toml binds the live board's Durable Object in every build, this one too: a stand-in, never called. */
export class DismissalLive {}
