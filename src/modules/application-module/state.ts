/**
 * The disabled application modules of schools, as the authorization path reads them: for the
 * access token of a user (each of their schools) and for a school a token does not list (the
 * super-admin's lookup in src/middleware/current-school.ts). Cheap to import: schema and SQL only.
 * Only built-in modules count: no route checks a created one.
 */
import type { Db } from "../../db/client";
import { SchoolModules, schoolModules } from "../../db/schema/application-module";
import { RoleUsers, roleUsers } from "../../db/schema/core";
import { and, eq, lt, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { APP_MODULES, type AppModuleKey, FIRST_CUSTOM_MODULE_ID, ModuleSet } from "../../lib/app-modules";
import type { Ctx } from "../../lib/context";

const disabled = and(eq(schoolModules.enabled, false), lt(schoolModules.moduleId, FIRST_CUSTOM_MODULE_ID));

/**
 * The disabled module ids of one school, comma-separated (null: none), as a scalar subquery: it
 * rides along in the school lookup's one query. `moduleSetOf` makes the bitmap of its value.
 */
export function disabledModuleIds(db: Db, schoolId: number): SQL<string | null> {
  const ids = db
    .select({ ids: sql<string>`group_concat(${schoolModules.moduleId})` })
    .from(schoolModules)
    .where(and(SchoolModules.ofSchool(schoolId), disabled));
  return sql<string | null>`(${ids})`;
}

/** The disabled modules of a school as a `ModuleSet`, from `disabledModuleIds`'s value. */
export const moduleSetOf = (ids: string | null): string =>
  ModuleSet.encode((ids ?? "").split(",").filter(Boolean).map(Number));

/** The disabled modules in each school a user has a role in: what their access token carries. */
export function disabledModulesOfUser(ctx: Ctx, userId: number) {
  const schoolsOfUser = RoleUsers.everySchool(ctx, (school) => ({ id: school })).where(eq(roleUsers.userId, userId));
  return SchoolModules.everySchool(ctx, (school) => ({ schoolId: school, moduleId: schoolModules.moduleId })).where(
    SchoolModules.ofSchool(schoolsOfUser),
    disabled,
  );
}

/**
 * Whether `module` is on in the school `school` names (a row's school column, in a read across
 * schools): a school without a state row for it has it on. What scheduled work checks before it
 * acts for a school, as a route's guard does (a school that switched a module off hears nothing
 * from it; its scheduled rows wait, and go out if the module is switched on again).
 */
export function moduleOn(ctx: Ctx, module: AppModuleKey, school: SQLWrapper): SQL {
  const off = SchoolModules.everySchool(ctx, () => ({ one: sql`1` })).where(
    SchoolModules.ofSchool(school),
    eq(schoolModules.moduleId, APP_MODULES[module].id),
    eq(schoolModules.enabled, false),
  );
  return sql`NOT EXISTS ${off}`;
}
