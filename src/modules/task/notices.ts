/**
 * The ONE place tasks and appointments tell people something: a seam with exactly the shape of the
 * notification module's verb (`notify(ctx, notice)` in src/modules/notification/api.ts, being built
 * on its own branch), so every call site is already what it will be. Until that verb lands this
 * seam sends nothing; then it becomes a re-export of the real one.
 *
 * A send is two steps: `statements` go into the caller's own batch (the notification commits or
 * not with the change it is about), `dispatch()` runs after that batch committed (the fan-out).
 */
import type { SQL } from "drizzle-orm";
import type { Statement } from "../../db/write";
import type { Ctx } from "../../lib/context";

export type NotificationCategory = "afternoon" | "tasks" | "events" | "lost-and-found" | "general" | "emergency";
/** A text the service writes itself, in both languages (each recipient reads theirs). */
export type Localized = { en: string; es: string };
export type Audience =
  | { users: number[] }
  | { roles: number[] }
  | { groups: number[] }
  | { levels: string[] }
  | { guardiansOf: number[] }
  | { school: true };

export interface Notice {
  category: NotificationCategory;
  urgent?: boolean;
  /** A string is written by staff and sent as it is. */
  title: Localized | string;
  body: Localized | string;
  about?: { entity: string; id: number | SQL<number> };
  audience: Audience;
}

export interface Sending {
  statements: Statement[];
  dispatch(): Promise<void>;
}

export function notify(_ctx: Ctx, _notice: Notice): Sending {
  return { statements: [], dispatch: async () => {} };
}

/** The notices of a change, sent together: their statements for one batch, then one dispatch. */
export function notifyAll(ctx: Ctx, notices: readonly Notice[]): Sending {
  const sendings = notices.map((n) => notify(ctx, n));
  return {
    statements: sendings.flatMap((s) => s.statements),
    dispatch: async () => {
      for (const s of sendings) await s.dispatch();
    },
  };
}
