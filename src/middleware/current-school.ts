/**
 * The current school of a request, from `X-School-Id` and the caller's token:
 * - a school the token lists is taken as is: no database round trip for ordinary members (the token
 *   also carries the school's disabled application modules);
 * - any other school (a super-admin's, or a non-member's) costs one primary-key lookup: a school
 *   that does not exist is a 404 for everyone, an existing one a non-member names is a 403; the
 *   same query reads the school's disabled modules (for super-admins, whose tokens list none) and
 *   its language;
 * - without the header: a member of exactly one school acts in it; a super-admin must name the
 *   school on school-scoped routes (acting "nowhere" would read empty lists and fail writes).
 */
import type { Context } from "hono";
import { schools } from "../db/schema/core";
import { databaseNamed, shardOf } from "../db/shards";
import { eq } from "../db/sql";
import type { AppEnv } from "../lib/context";
import { ApiError, notFound, say } from "../lib/errors";
import type { Language } from "../lib/language";
import { type Message, m } from "../lib/message";
import type { AccessClaims } from "../lib/tokens";
import { disabledModuleIds, moduleSetOf } from "../modules/application-module/api";
import type { Access, Scope } from "./authorize";

/** 1 to 10 digits, no leading zero: what the document's X-School-Id declares (minimum 1, maximum 9999999999). */
const SCHOOL_ID = /^[1-9]\d{0,9}$/;

const required = (detail: Message) =>
  new ApiError(400, detail, { errors: [{ path: "X-School-Id", message: m`Required` }] });

/**
 * The current school; `disabledModules` is the set of its disabled module ids (a `ModuleSet`) when
 * it was read from the database, null when the caller's token says it.
 */
export interface CurrentSchool {
  id: number;
  disabledModules: string | null;
  /** The school's language when it was read from the database, null when the token says it. */
  language: Language | null;
}

const fromToken = (id: number): CurrentSchool => ({ id, disabledModules: null, language: null });

export async function currentSchool(
  c: Context<AppEnv>,
  claims: Pick<AccessClaims, "sa" | "sch">,
  access: Access,
  scope: Scope,
): Promise<CurrentSchool | null> {
  const isSuperAdmin = claims.sa === 1;
  const memberships = claims.sch;
  const header = c.req.header("x-school-id");
  if (header !== undefined) {
    if (!SCHOOL_ID.test(header)) {
      throw new ApiError(400, m`X-School-Id must be a positive integer`, {
        errors: [{ path: "X-School-Id", message: m`Expected a positive integer` }],
      });
    }
    const schoolId = Number(header);
    if (Object.hasOwn(memberships, header)) return fromToken(schoolId);
    // On the school's own database (its `school` row is kept there too, docs/scaling.md "Anchors"):
    // its module states are there, and one statement reads one database.
    const deps = c.get("deps");
    const db = databaseNamed(deps, await shardOf(deps, schoolId));
    // A batch of one (one round trip): its errors are the database's own (a libSQL shard's server
    // that is not one is the configuration's 503), not wrapped as a failed query's.
    const [[school]] = await db.batch([
      db
        .select({
          id: schools.id,
          language: schools.language,
          disabled: disabledModuleIds(db, schoolId),
        })
        .from(schools)
        .where(eq(schools.id, schoolId))
        .limit(1),
    ]);
    if (!school) throw notFound(m`School ${schoolId} not found`);
    if (!isSuperAdmin) throw new ApiError(403, say.noRoleIn(schoolId));
    return { id: schoolId, disabledModules: moduleSetOf(school.disabled), language: school.language };
  }

  const mine = Object.keys(memberships);
  if (isSuperAdmin) {
    if (scope === "school") {
      throw required(m`X-School-Id header is required: a super-admin names the school to act in`);
    }
    // Platform data: a super-admin passes every check, whatever school.
    return mine.length === 1 ? fromToken(Number(mine[0])) : null;
  }
  if (mine.length === 1) return fromToken(Number(mine[0]));
  if (mine.length === 0) throw new ApiError(403, say.noRoleAnywhere);
  // Even platform data needs a school to know which of the caller's roles apply.
  if (scope === "school" || access !== "member") {
    throw required(m`X-School-Id header is required: you belong to more than one school`);
  }
  return null;
}
