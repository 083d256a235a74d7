/**
 * Each school's state of each application module. The current school is the
 * caller's (X-School-Id). A school without a state row for a module has it enabled: that is the
 * default a new school and a new catalogue module start from, and what authorization reads.
 *
 * Writes are one batch each: the school's missing state rows are written first (initialising,
 * with one audit row of the school that names them), then conditional updates that change only
 * rows whose state differs, each with its audit row (`auditUpdate` over the same condition). So
 * concurrent toggles serialise in D1 and every real change, and only a real change, is audited.
 */
import { Batch } from "../../db/batch";
import type { Query } from "../../db/query";
import {
  ApplicationModules,
  applicationModules as am,
  SchoolModules,
  schoolModules as s,
} from "../../db/schema/application-module";
import { Schools, schools } from "../../db/schema/core";
import { and, asc, eq, ne, notExists, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { Listing, type PageInput } from "../../lib/pagination";
import { isBuiltIn } from "./resource";

/** A catalogue module with the current school's state row of it, if any (the join adds the school). */
const withState = <Row>(query: Query<Row>) => query.leftJoin(SchoolModules, eq(s.moduleId, am.id));

/** Enabled unless the school's row says otherwise. */
const enabledExpr = sql<number>`coalesce(${s.enabled}, 1)`;

/** The fields of a module as the school sees it, each under its own alias (D1 batches map by name). */
const schoolFields = {
  id: am.id,
  createdAt: am.createdAt,
  updatedAt: am.updatedAt,
  key: am.key,
  name: am.name,
  description: am.description,
  enabled: enabledExpr,
  // Null where the school has no state row (a left join).
  statusUpdatedAt: sql<string | null>`${s.updatedAt}`,
  statusUpdatedBy: sql<number | null>`${s.updatedBy}`,
};

type SchoolRow = {
  id: number;
  createdAt: string;
  updatedAt: string;
  key: string;
  name: string;
  description: string;
  enabled: number;
  statusUpdatedAt: string | null;
  statusUpdatedBy: number | null;
};

export const toSchoolModule = (row: SchoolRow) => ({
  id: row.id,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  key: row.key,
  name: row.name,
  description: row.description,
  builtIn: isBuiltIn(row.id),
  enabled: row.enabled === 1,
  statusUpdatedAt: row.statusUpdatedAt,
  statusUpdatedBy: row.statusUpdatedBy,
});

/**
 * A page of the catalogue with the current school's state of each module, by key; `enabled`
 * keeps the enabled (true) or disabled (false) ones. One round trip.
 */
export async function listSchoolModules(ctx: SchoolCtx, input: PageInput & { enabled?: boolean }) {
  const where = input.enabled === undefined ? undefined : eq(enabledExpr, input.enabled ? 1 : 0);
  const batch = new Batch(ctx);
  const rows = batch.read(
    withState(ApplicationModules.select(ctx, schoolFields))
      .where(where)
      .orderBy(asc(am.key))
      .limit(input.pageSize)
      .offset((input.page - 1) * input.pageSize),
  );
  const total = batch.read(
    withState(ApplicationModules.select(ctx, { id: am.id }))
      .where(where)
      .count(),
  );
  const results = await batch.commit();
  const page = { page: input.page, pageSize: input.pageSize };
  return new Listing(results.get(rows).map(toSchoolModule), results.get(total)[0]?.n ?? 0, page);
}

/** Whether the current school has the module `key` enabled; 404 for a key the catalogue lacks. */
export async function moduleStatus(ctx: SchoolCtx, key: string) {
  const row = await withState(ApplicationModules.select(ctx, { key: am.key, enabled: enabledExpr }))
    .where(eq(am.key, key))
    .first();
  if (!row) throw notFound(m`Application module ${key} not found`);
  return { key: row.key, enabled: row.enabled === 1 };
}

/**
 * The statements that give the current school a state row (enabled) for every catalogue module it
 * has none for, preceded by one audit row of the school listing their keys (none when nothing is
 * missing). Idempotent: `INSERT ... SELECT ... ON CONFLICT DO NOTHING`, so concurrent calls
 * create each row once.
 */
export function initializeStatements(ctx: SchoolCtx) {
  const { db } = ctx.deps;
  const schoolId = ctx.schoolId;
  const now = ctx.deps.clock.now().toISOString();
  const lacking = notExists(SchoolModules.select(ctx, { one: sql`1` }).where(eq(s.moduleId, am.id)));
  const missingKeys = db.select({ key: am.key }).from(am).where(lacking).orderBy(asc(am.key));
  // The audit row of initialising a school's modules: its record is the school.
  const [audit] = Schools.action(ctx, and(eq(schools.id, schoolId), ApplicationModules.exists(ctx, lacking)), {
    action: "initialize-modules",
    changes: { modules: { old: null, new: sql`json((SELECT json_group_array("key") FROM (${missingKeys})))` } },
  });
  const insert = SchoolModules.insertFrom(
    ctx,
    // The WHERE also keeps SQLite from reading ON CONFLICT as a join constraint.
    (row) =>
      sql`SELECT ${row({ moduleId: sql`${am.id}`, enabled: sql`1`, updatedBy: sql`NULL` })} FROM ${am} WHERE ${lacking}`,
    now,
  )
    .onConflictDoNothing()
    .returning({ moduleId: s.moduleId });
  return [audit, insert] as const;
}

/**
 * `POST /api/v1/school/{id}/initialize-modules`: `id` must be the current school (another school
 * is a 404, as for any record). Answers the keys whose state this call created (none when the
 * school was initialised already).
 */
export async function initializeModules(ctx: SchoolCtx, id: number) {
  if (id !== ctx.schoolId) throw notFound(m`School ${id} not found`);
  const [audit, insert] = initializeStatements(ctx);
  const batch = new Batch(ctx).add(audit);
  const inserted = batch.result(insert);
  const catalogue = batch.read(ApplicationModules.select(ctx, { id: am.id, key: am.key }));
  const results = await batch.commit();
  const [created, catalogueKeys] = [results.get(inserted), results.get(catalogue)];
  const keyOf = new Map(catalogueKeys.map((row) => [row.id, row.key]));
  return {
    schoolId: id,
    created: created
      .map((row) => keyOf.get(row.moduleId))
      .filter((key): key is string => key !== undefined)
      .sort(),
  };
}

/**
 * Sets modules of the current school enabled or disabled (`toggle` and `bulk toggle`): 404 when a
 * key is not in the catalogue. Only rows whose state differs are written, each with its audit
 * row (action `enable` / `disable`); the school's missing rows are initialised in the same batch.
 * Authorization reads the new state from tokens issued after it (at most 10 minutes later).
 */
export async function setModules(ctx: SchoolCtx, wanted: readonly { key: string; enabled: boolean }[]) {
  const keys = [...new Set(wanted.map((w) => w.key))];
  const found = await ApplicationModules.select(ctx, { id: am.id, key: am.key }).where(inList(am.key, keys)).all();
  const idOf = new Map(found.map((row) => [row.key, row.id]));
  const unknown = keys.filter((key) => !idOf.has(key));
  if (unknown.length > 0)
    throw notFound(
      unknown.length > 1
        ? m`Application modules ${unknown.join(", ")} not found`
        : m`Application module ${unknown.join(", ")} not found`,
    );

  const batch = new Batch(ctx).add(...initializeStatements(ctx));
  for (const enabled of [true, false]) {
    const ids = wanted.flatMap((w) => {
      const id = w.enabled === enabled ? idOf.get(w.key) : undefined;
      return id === undefined ? [] : [id];
    });
    if (ids.length === 0) continue;
    const where = and(inList(s.moduleId, ids), ne(s.enabled, enabled));
    batch.add(...SchoolModules.update(ctx, where, { enabled, updatedBy: ctx.userId }, enabled ? "enable" : "disable"));
  }
  await batch.commit();
}
