/** The Hono environment every router shares: bindings and the per-request variables. */
import type { Deps } from "../deps";

/** Who is calling, resolved once per request by the `authorize` middleware. */
export interface Principal {
  userId: number;
  isSuperAdmin: boolean;
  /** The current school, when the route is school-scoped. */
  schoolId: number | null;
  /** Whether the caller holds a permission in the current school. */
  can(permission: import("./access").Permission): boolean;
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    deps: Deps;
    principal: Principal;
  };
};
