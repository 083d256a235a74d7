/**
 * The school's own verbs besides CRUD: its levels, its statistics (one D1 round trip), its logo
 * (a presigned URL under `{schoolId}/logo/`), its address (an address of the same school), and the
 * platform's delete of several schools (one batch that says what it deleted and what it did not
 * find).
 */
import { Batch } from "../../db/batch";
import { dropFromShards, mapRowsOf } from "../../db/placement";
import { Addresses, addresses } from "../../db/schema/address";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools } from "../../db/schema/core";
import { Groups } from "../../db/schema/group";
import { Students, students } from "../../db/schema/student";
import { Routes } from "../../db/schema/transport";
import { PLATFORM, shardOf } from "../../db/shards";
import { asc, count, countDistinct, eq, isNull, ne, type SQL, sql } from "../../db/sql";
import { GuardFailed, inList, type Statement } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { ApiError, notFound, say } from "../../lib/errors";
import { m } from "../../lib/message";
import { type Level, LOGO_TYPES, type LogoType, levelInfo, readLevels } from "./fields";
import { permissions } from "./permissions";
import { schoolResource } from "./resource";

/** As for documents: a leaked URL is soon useless, and a phone has time to upload an image. */
export const LOGO_URL_SECONDS = 5 * 60;

/** The levels of the school the caller acts in. */
export async function currentLevels(ctx: SchoolCtx) {
  const row = await Schools.find(ctx, ctx.schoolId, { levels: schools.levels });
  if (!row) throw notFound(m`School ${ctx.schoolId ?? undefined} not found`);
  return levelInfo(readLevels(row.levels));
}

/**
 * People by role (from role_user: the built-in school roles and the school's own), students (not
 * deleted; by level, a student without one counting in the total only), groups, and transport
 * routes.
 * One batch: the school (404 unless the caller reaches it) and every count.
 */
export async function statistics(ctx: Ctx, id: number) {
  // The counts are of school `id` (the accessors scope them to it); the first read checks the
  // caller reaches it, and if not, the counts are thrown away unread.
  const target: SchoolCtx = { ...ctx, schoolId: id };
  // On the school's database (its counts are there, and its row's copy: docs/scaling.md "Anchors").
  const batch = new Batch(target);
  const reached = batch.read(
    Schools.select(ctx, { id: schools.id })
      .where(schoolResource.scoped(ctx, eq(schools.id, id), "read"))
      .limit(1),
  );
  const roleCounts = batch.read(
    // The built-in roles and the school's own; role_user_school_idx (school_id, role_id): one range per role.
    Roles.select(target, {
      roleId: roles.id,
      key: roles.key,
      roleName: roles.name,
      count: sql<number>`${RoleUsers.select(target, { n: count() }).where(eq(roleUsers.roleId, roles.id))}`,
    })
      .where(ne(roles.id, BUILTIN_ROLES["super-admin"].id))
      .orderBy(asc(roles.id)),
  );
  const members = batch.read(RoleUsers.select(target, { total: countDistinct(roleUsers.userId) }));
  // student_level_idx (school_id, level, created_at) groups them; deleted students do not count.
  const perLevel = batch.read(
    Students.select(target, { level: students.level, total: count() })
      .where(isNull(students.deletedAt))
      .groupBy(students.level),
  );
  const groupCount = batch.read(Groups.select(target, { total: count() }));
  const routeCount = batch.read(Routes.select(target, { total: count() }));
  const results = await batch.commit();
  const [school] = results.get(reached);
  const byRole = results.get(roleCounts);
  const [people] = results.get(members);
  const levels = results.get(perLevel);
  const [classes] = results.get(groupCount);
  const [transport] = results.get(routeCount);
  if (!school) throw notFound(m`School ${id} not found`);
  const byLevel: Record<Level, number> = { preschool: 0, elementary: 0, middle: 0, high: 0 };
  for (const row of levels) if (row.level) byLevel[row.level] = row.total;
  return {
    schoolId: id,
    people: {
      total: people?.total ?? 0,
      byRole: byRole.map((r) => ({ roleId: r.roleId, key: r.key, name: r.roleName, count: r.count })),
    },
    students: { total: levels.reduce((n, row) => n + row.total, 0), byLevel },
    groups: classes?.total ?? 0,
    routes: transport?.total ?? 0,
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
  const { clock, signer } = ctx.deps;
  const now = clock.now();
  let key: string;
  if (input.method === "PUT") {
    // The route declares school.read (enough for a download URL); an upload changes the school.
    if (!ctx.can(permissions.update)) {
      throw new ApiError(403, say.missingPermission(permissions.update.name, ctx.schoolId));
    }
    const contentType = input.contentType ?? "image/png";
    key = `${id}/logo/logo-${crypto.randomUUID()}.${LOGO_TYPES[contentType]}`;
    await schoolResource.commit(
      ctx,
      id,
      schoolResource.batch(ctx).add(...schoolResource.writes.update(ctx, id, { logo: key }, "logo")),
    );
    await schoolResource.copyAnchors(ctx, id);
  } else {
    const row = await Schools.select(ctx, { logo: schools.logo })
      .where(schoolResource.scoped(ctx, eq(schools.id, id), "read"))
      .first();
    if (!row) throw notFound(m`School ${id} not found`);
    if (row.logo === null) throw notFound(m`School ${id} has no logo; upload one with method PUT`);
    key = row.logo;
  }
  const contentType = input.method === "PUT" ? input.contentType : undefined;
  const signed = await signer.sign({ key, method: input.method, contentType, expiresIn: LOGO_URL_SECONDS, now });
  return { logo: key, ...signed };
}

/**
 * Points the school at one of its own addresses (or at none). On the platform database the
 * address is checked in the UPDATE itself, so it cannot be another school's, nor one deleted a
 * moment ago; a school on a shard has its addresses there: one read of it first (the address's
 * school is its own), then the platform's row, then its copy in the shard.
 */
export async function setAddress(ctx: Ctx, id: number, addressId: number | null) {
  const onShard = (await shardOf(ctx.deps, id)) !== PLATFORM;
  if (addressId !== null && onShard) {
    const own = await Addresses.select({ ...ctx, schoolId: id }, { id: addresses.id })
      .where(eq(addresses.id, addressId))
      .first();
    if (!own) await refuseAddress(ctx, id, addressId);
  }
  const sameSchool =
    addressId === null || onShard
      ? undefined
      : sql`EXISTS (SELECT 1 FROM ${addresses} WHERE ${addresses.id} = ${addressId} AND ${Addresses.ofSchool(schools.id)})`;
  try {
    await schoolResource
      .batch(ctx)
      .add(...schoolResource.writes.update(ctx, id, { addressId }, "address", null, sameSchool))
      .commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    await refuseAddress(ctx, id, addressId);
  }
  await schoolResource.copyAnchors(ctx, id);
}

/** The 404 of `setAddress`: the school's when the caller does not reach it, else the address's. */
async function refuseAddress(ctx: Ctx, id: number, addressId: number | null): Promise<never> {
  const school = await Schools.select(ctx, { id: schools.id }, "write")
    .where(schoolResource.scoped(ctx, eq(schools.id, id), "write"))
    .first();
  throw school ? notFound(m`Address ${addressId ?? undefined} not found`) : notFound(m`School ${id} not found`);
}

/**
 * Statements that delete, first, the rows of the schools matched by `where` whose foreign keys
 * would refuse the cascade: a bulk process RESTRICTs deleting its document, and SQLite checks a
 * RESTRICT as soon as the cascade reaches the document, whatever else the cascade deletes. A new
 * ON DELETE RESTRICT between two tables a school owns belongs here too (test/schools.test.ts
 * deletes a school that has one of each).
 */
function restrictingRows(ctx: Ctx, where: SQL | undefined): Statement[] {
  const doomed = Schools.select(ctx, { id: schools.id }, "write").where(where);
  // Not audited: like every other row the school owns, they go with it.
  return [ctx.deps.db.delete(bulkProcesses).where(BulkProcesses.ofSchool(doomed))];
}

/** Deletes one school with everything it owns (the audit trail keeps its rows: it has no foreign key). */
export async function deleteSchool(ctx: Ctx, id: number) {
  const where = schoolResource.scoped(ctx, eq(schools.id, id), "write");
  const batch = schoolResource.batch(ctx);
  const held = batch.result(mapRowsOf(ctx.deps.db, [id]));
  batch.add(...restrictingRows(ctx, where), ...schoolResource.writes.delete(ctx, id));
  const results = await schoolResource.commit(ctx, id, batch);
  await dropFromShards(ctx.deps, [id], results.get(held));
}

/**
 * Deletes the schools among `ids` that exist (with their rows: foreign keys cascade), one audit
 * row each, in one batch; answers which were deleted and which were not found. The ids travel
 * as one JSON parameter (D1 binds at most 100 values per statement).
 */
export async function deleteSchools(ctx: Ctx, ids: number[]) {
  const where = schoolResource.scoped(ctx, inList(schools.id, ids), "write");
  const batch = schoolResource.batch(ctx);
  const held = batch.result(mapRowsOf(ctx.deps.db, ids));
  batch.add(Schools.auditRemoved(ctx, where), ...restrictingRows(ctx, where));
  const removed = batch.result(
    ctx.deps.db.delete(schools).where(Schools.where(ctx, where)).returning({ id: schools.id }),
  );
  const results = await batch.commit();
  const deleted = results.get(removed);
  const gone = new Set(deleted.map((r) => r.id));
  await dropFromShards(ctx.deps, [...gone], results.get(held));
  return {
    deleted: ids.filter((id) => gone.has(id)),
    notFound: ids.filter((id) => !gone.has(id)),
  };
}
