/**
 * The school's own verbs besides CRUD: its levels, its statistics (one D1 round trip), its logo
 * (a presigned URL under `{schoolId}/logo/`), its address (an address of the same school), and the
 * platform's delete of several schools (one batch that says what it deleted and what it did not
 * find).
 */
import { and, asc, count, countDistinct, eq, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import { auditDelete } from "../../db/audit";
import { addresses } from "../../db/schema/address";
import { bulkProcesses } from "../../db/schema/bulk-process";
import { roles, roleUsers, schools } from "../../db/schema/core";
import { groups } from "../../db/schema/group";
import { students } from "../../db/schema/student";
import { commit, GuardFailed, inList, type Statement } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import { type Ctx, tenant } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { LEVELS, type Level, LOGO_TYPES, type LogoType, levelInfo, readLevels } from "./fields";
import { permissions } from "./permissions";
import { schoolResource } from "./resource";

/** As for documents: a leaked URL is soon useless, and a phone has time to upload an image. */
export const LOGO_URL_SECONDS = 5 * 60;

/** The levels of the school the caller acts in. */
export async function currentLevels(ctx: Ctx) {
  const [row] = await ctx.deps.db
    .select({ levels: schools.levels })
    .from(schools)
    .where(tenant(ctx, { schoolId: schools.id }))
    .limit(1);
  if (!row) throw notFound("School", ctx.schoolId ?? undefined);
  return levelInfo(readLevels(row.levels));
}

/**
 * People by role (from role_user: the built-in school roles and the school's own), students (not
 * deleted; by level, a student without one counting in the total only), groups, and routes (0
 * until transport exists).
 * One batch: the school (404 unless the caller reaches it) and every count.
 */
export async function statistics(ctx: Ctx, id: number) {
  const { db } = ctx.deps;
  // The school asked about (the first statement checks the caller reaches it; if not, the counts
  // are thrown away unread).
  const target = { schoolId: id };
  const inSchool = tenant(target, roleUsers);
  const [[school], byRole, [people], levels, [classes]] = await db.batch([
    db
      .select({ id: schools.id })
      .from(schools)
      .where(schoolResource.scoped(ctx, eq(schools.id, id), "read"))
      .limit(1),
    db
      .select({
        roleId: roles.id,
        key: roles.key,
        roleName: roles.name,
        // role_user_school_idx (school_id, role_id): one range per role.
        count:
          sql<number>`(SELECT count(*) FROM ${roleUsers} WHERE ${and(inSchool, eq(roleUsers.roleId, roles.id))})`.as(
            "role_count",
          ),
      })
      .from(roles)
      .where(and(ne(roles.id, BUILTIN_ROLES["super-admin"].id), or(isNull(roles.schoolId), eq(roles.schoolId, id))))
      .orderBy(asc(roles.id)),
    db
      .select({ total: countDistinct(roleUsers.userId) })
      .from(roleUsers)
      .where(inSchool),
    // student_level_idx (school_id, level, created_at) groups them; deleted students do not count.
    db
      .select({ level: students.level, total: count() })
      .from(students)
      .where(and(tenant(target, students), isNull(students.deletedAt)))
      .groupBy(students.level),
    db.select({ total: count() }).from(groups).where(tenant(target, groups)),
  ]);
  if (!school) throw notFound("School", id);
  const byLevel = Object.fromEntries(LEVELS.map((level) => [level, 0])) as Record<Level, number>;
  for (const row of levels) if (row.level) byLevel[row.level] = row.total;
  return {
    schoolId: id,
    people: {
      total: people?.total ?? 0,
      byRole: byRole.map((r) => ({ roleId: r.roleId, key: r.key, name: r.roleName, count: r.count })),
    },
    students: { total: levels.reduce((n, row) => n + row.total, 0), byLevel },
    groups: classes?.total ?? 0,
    routes: 0,
  };
}

export interface LogoUrlInput {
  method: "GET" | "PUT";
  contentType?: LogoType | undefined;
}

/**
 * PUT: a new key `{id}/logo/logo-{uuid}.{ext}` becomes the school's logo (audited) and the URL
 * uploads to it, signing the image type. GET: a download URL for the current logo (404 if none).
 */
export async function logoUrl(ctx: Ctx, id: number, input: LogoUrlInput) {
  const { db, clock, signer } = ctx.deps;
  const now = clock.now();
  let key: string;
  if (input.method === "PUT") {
    // The route declares school.read (enough for a download URL); an upload changes the school.
    if (!ctx.can(permissions.update)) {
      throw new ApiError(403, `Missing permission ${permissions.update.name} in school ${ctx.schoolId}`);
    }
    const contentType = input.contentType ?? "image/png";
    key = `${id}/logo/logo-${crypto.randomUUID()}.${LOGO_TYPES[contentType]}`;
    await schoolResource.commit(ctx, id, schoolResource.writes.update(ctx, id, { logo: key }, "logo"));
  } else {
    const [row] = await db
      .select({ logo: schools.logo })
      .from(schools)
      .where(schoolResource.scoped(ctx, eq(schools.id, id), "read"))
      .limit(1);
    if (!row) throw notFound("School", id);
    if (row.logo === null) throw notFound(`School ${id} has no logo; upload one with method PUT`);
    key = row.logo;
  }
  const contentType = input.method === "PUT" ? input.contentType : undefined;
  const signed = await signer.sign({ key, method: input.method, contentType, expiresIn: LOGO_URL_SECONDS, now });
  return { logo: key, ...signed };
}

/**
 * Points the school at one of its own addresses (or at none). The address is checked in the
 * UPDATE itself, so it cannot be another school's, nor one deleted a moment ago.
 */
export async function setAddress(ctx: Ctx, id: number, addressId: number | null) {
  const { db } = ctx.deps;
  const sameSchool =
    addressId === null
      ? undefined
      : sql`EXISTS (SELECT 1 FROM ${addresses} WHERE ${addresses.id} = ${addressId} AND ${addresses.schoolId} = ${schools.id})`;
  try {
    await commit(ctx, schoolResource.writes.update(ctx, id, { addressId }, "address", null, sameSchool));
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const [school] = await db
      .select({ id: schools.id })
      .from(schools)
      .where(schoolResource.scoped(ctx, eq(schools.id, id), "write"))
      .limit(1);
    throw school ? notFound("Address", addressId ?? undefined) : notFound("School", id);
  }
}

/**
 * Statements that delete, first, the rows of the schools matched by `where` whose foreign keys
 * would refuse the cascade: a bulk process RESTRICTs deleting its document, and SQLite checks a
 * RESTRICT as soon as the cascade reaches the document, whatever else the cascade deletes. A new
 * ON DELETE RESTRICT between two tables a school owns belongs here too (test/schools.test.ts
 * deletes a school that has one of each).
 */
function restrictingRows(ctx: Ctx, where: SQL | undefined): Statement[] {
  const { db } = ctx.deps;
  const doomed = db.select({ id: schools.id }).from(schools).where(where);
  return [db.delete(bulkProcesses).where(inList(bulkProcesses.schoolId, doomed))];
}

/** Deletes one school with everything it owns (the audit trail keeps its rows: it has no foreign key). */
export async function deleteSchool(ctx: Ctx, id: number) {
  const where = schoolResource.scoped(ctx, eq(schools.id, id), "write");
  const statements: [Statement, ...Statement[]] = [...schoolResource.writes.delete(ctx, id)];
  statements.unshift(...restrictingRows(ctx, where));
  await schoolResource.commit(ctx, id, statements);
}

/**
 * Deletes the schools among `ids` that exist (with their rows: foreign keys cascade), one audit
 * row each, in one batch; answers which were deleted and which were not found. The ids travel
 * as one JSON parameter (D1 binds at most 100 values per statement).
 */
export async function deleteSchools(ctx: Ctx, ids: number[]) {
  const { db } = ctx.deps;
  const where = schoolResource.scoped(ctx, inList(schools.id, ids), "write");
  const results = await commit(ctx, [
    auditDelete(ctx, schoolResource.audit, where),
    ...restrictingRows(ctx, where),
    db.delete(schools).where(where).returning({ id: schools.id }),
  ]);
  const deleted = results.at(-1) as { id: number }[];
  const gone = new Set(deleted.map((r) => r.id));
  return {
    deleted: ids.filter((id) => gone.has(id)),
    notFound: ids.filter((id) => !gone.has(id)),
  };
}
