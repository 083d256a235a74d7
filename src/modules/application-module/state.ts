/**
 * The disabled application modules of schools, as the authorization path reads them: for the
 * access token of a user (each of their schools) and for a school a token does not list (the
 * super-admin's lookup in src/middleware/current-school.ts). Cheap to import: schema and SQL only.
 * Only built-in modules count: no route checks a created one.
 */
import { and, eq, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { schoolModules } from "../../db/schema/application-module";
import { roleUsers } from "../../db/schema/core";
import { inList } from "../../db/write";
import { FIRST_CUSTOM_MODULE_ID, ModuleSet } from "../../lib/app-modules";
import { tenant } from "../../lib/context";

const disabled = and(eq(schoolModules.enabled, false), lt(schoolModules.moduleId, FIRST_CUSTOM_MODULE_ID));

/**
 * The disabled module ids of one school, comma-separated (null: none), as a scalar subquery: it
 * rides along in the school lookup's one query. `moduleSetOf` makes the bitmap of its value.
 */
export function disabledModuleIds(db: Db, schoolId: number): SQL<string | null> {
  const ids = db
    .select({ ids: sql<string>`group_concat(${schoolModules.moduleId})` })
    .from(schoolModules)
    .where(and(tenant({ schoolId }, schoolModules), disabled));
  return sql<string | null>`(${ids})`;
}

/** The disabled modules of a school as a `ModuleSet`, from `disabledModuleIds`'s value. */
export const moduleSetOf = (ids: string | null): string =>
  ModuleSet.encode((ids ?? "").split(",").filter(Boolean).map(Number));

/** The disabled modules in each school a user has a role in: what their access token carries. */
export function disabledModulesOfUser(db: Db, userId: number) {
  return db
    .select({ schoolId: schoolModules.schoolId, moduleId: schoolModules.moduleId })
    .from(schoolModules)
    .where(
      and(
        inList(
          schoolModules.schoolId,
          db.select({ id: roleUsers.schoolId }).from(roleUsers).where(eq(roleUsers.userId, userId)),
        ),
        disabled,
      ),
    );
}
