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
import { and, asc, count, eq, exists, ne, notExists, type SQL, sql } from "drizzle-orm";
import { type AuditTarget, auditAction, auditUpdate } from "../../db/audit";
import { applicationModules as m, schoolModules as s } from "../../db/schema/application-module";
import { schools } from "../../db/schema/core";
import { commit, inList, type Statement } from "../../db/write";
import { type Ctx, schoolOf, tenant } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { type PageInput, readPage } from "../../lib/pagination";
import { isBuiltIn } from "./resource";

/** Audit rows of a module's state in a school: `recordId` is the state row. */
export const stateAudit: AuditTarget = { entity: "school-module", table: s };
/** The audit row of initialising a school's modules: `recordId` is the school. */
const schoolAudit: AuditTarget = { entity: "school", table: schools };

/** The join of a catalogue module with the current school's state row of it (if any). */
const stateOf = (ctx: Ctx) => and(eq(s.moduleId, m.id), tenant(ctx, s));

/** Enabled unless the school's row says otherwise. */
const enabledExpr = sql<number>`coalesce(${s.enabled}, 1)`;

/** The fields of a module as the school sees it, each under its own alias (D1 batches map by name). */
const schoolFields = {
  id: m.id,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
  key: m.key,
  name: m.name,
  description: m.description,
  enabled: enabledExpr.as("enabled"),
  statusUpdatedAt: sql<string | null>`${s.updatedAt}`.as("status_updated_at"),
  statusUpdatedBy: sql<number | null>`${s.updatedBy}`.as("status_updated_by"),
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
export async function listSchoolModules(ctx: Ctx, input: PageInput & { enabled?: boolean }, url: string) {
  const { db } = ctx.deps;
  const where = input.enabled === undefined ? undefined : eq(enabledExpr, input.enabled ? 1 : 0);
  const rows = db
    .select(schoolFields)
    .from(m)
    .leftJoin(s, stateOf(ctx))
    .where(where)
    .orderBy(asc(m.key))
    .limit(input.pageSize)
    .offset((input.page - 1) * input.pageSize);
  const total = db.select({ n: count() }).from(m).leftJoin(s, stateOf(ctx)).where(where);
  const page = await readPage<SchoolRow>(db, rows, total, undefined, input, url);
  if (!page) throw new Error("a page without a parent check cannot be missing");
  return { ...page, data: page.data.map(toSchoolModule) };
}

/** Whether the current school has the module `key` enabled; 404 for a key the catalogue lacks. */
export async function moduleStatus(ctx: Ctx, key: string) {
  const [row] = await ctx.deps.db
    .select({ key: m.key, enabled: enabledExpr })
    .from(m)
    .leftJoin(s, stateOf(ctx))
    .where(eq(m.key, key))
    .limit(1);
  if (!row) throw notFound(`Application module ${key}`);
  return { key: row.key, enabled: row.enabled === 1 };
}

/**
 * The statements that give the current school a state row (enabled) for every catalogue module it
 * has none for, preceded by one audit row of the school listing their keys (none when nothing is
 * missing). Idempotent: `INSERT ... SELECT ... ON CONFLICT DO NOTHING`, so concurrent calls
 * create each row once.
 */
export function initializeStatements(ctx: Ctx) {
  const { db } = ctx.deps;
  const schoolId = schoolOf(ctx);
  const now = ctx.deps.clock.now().toISOString();
  const lacking = notExists(db.select({ one: sql`1` }).from(s).where(stateOf(ctx)));
  const missingKeys = db.select({ key: m.key }).from(m).where(lacking).orderBy(asc(m.key));
  const audit = auditAction(
    ctx,
    schoolAudit,
    and(eq(schools.id, schoolId), exists(db.select({ one: sql`1` }).from(m).where(lacking))),
    "initialize-modules",
    sql`json_object('modules', json_object('old', NULL, 'new', json((SELECT json_group_array("key") FROM (${missingKeys})))))`,
  );
  const insert = db
    .insert(s)
    .select(
      db
        .select({
          id: sql<number>`NULL`.as("id"),
          createdAt: sql<string>`${now}`.as("created_at"),
          updatedAt: sql<string>`${now}`.as("updated_at"),
          schoolId: sql<number>`${schoolId}`.as("school_id"),
          moduleId: m.id,
          enabled: sql<number>`1`.as("enabled"),
          updatedBy: sql<number | null>`NULL`.as("updated_by"),
        })
        .from(m)
        // The WHERE also keeps SQLite from reading ON CONFLICT as a join constraint.
        .where(lacking),
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
export async function initializeModules(ctx: Ctx, id: number) {
  if (id !== schoolOf(ctx)) throw notFound("School", id);
  const { db } = ctx.deps;
  const [, created, catalogueKeys] = await commit(ctx, [
    ...initializeStatements(ctx),
    db.select({ id: m.id, key: m.key }).from(m),
  ]);
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
export async function setModules(ctx: Ctx, wanted: readonly { key: string; enabled: boolean }[]) {
  const { db } = ctx.deps;
  const keys = [...new Set(wanted.map((w) => w.key))];
  const found = await db.select({ id: m.id, key: m.key }).from(m).where(inList(m.key, keys));
  const idOf = new Map(found.map((row) => [row.key, row.id]));
  const unknown = keys.filter((key) => !idOf.has(key));
  if (unknown.length > 0) throw notFound(`Application module${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}`);

  const now = ctx.deps.clock.now().toISOString();
  const statements: Statement[] = [...initializeStatements(ctx)];
  for (const enabled of [true, false]) {
    const ids = wanted.filter((w) => w.enabled === enabled).map((w) => idOf.get(w.key) as number);
    if (ids.length === 0) continue;
    const where: SQL | undefined = and(tenant(ctx, s), inList(s.moduleId, ids), ne(s.enabled, enabled));
    const set = { enabled, updatedBy: ctx.userId, updatedAt: now };
    statements.push(
      auditUpdate(ctx, stateAudit, where, set, enabled ? "enable" : "disable"),
      db.update(s).set(set).where(where),
    );
  }
  await commit(ctx, statements as [Statement, ...Statement[]]);
}
