/**
 * Fixed (recurring) route changes and auto pickups: weekdays between two dates. The daily job
 * (`generateFixedExitPermissions`, 02:00 UTC) and the create itself make the concrete permissions
 * up to `permissionWeeksInAdvance` weeks ahead through the same rules (days that are not school
 * days, holidays and full routes are skipped), as the school's own asks. A fixed permission's
 * `generated_until` is claimed with a conditional UPDATE in the batch that writes the day's
 * permissions (a second or concurrent run matches nothing and writes nothing), and the UNIQUE
 * (fixed_id, date) is the backstop. Deleting a fixed one cancels its generated ones from today on
 * (their seats given back), audited, in the same batch.
 */
import { z } from "@hono/zod-openapi";
import { Batch, type Results } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import {
  ExitPermissions,
  exitPermissions,
  FIXED_EXIT_PERMISSION_STATUSES,
  FixedExitPermissions,
  fixedExitPermissions,
} from "../../db/schema/exit-permission";
import { ScheduleConfigurations, scheduleConfigurations } from "../../db/schema/schedule-configuration";
import { and, asc, eq, gte, isNull, lt, ne, or, type SQL, sql } from "../../db/sql";
import { guard, inList, type Statement } from "../../db/write";
import type { Deps } from "../../deps";
import { type Ctx, forEachSchool, jobCtx, type SchoolCtx } from "../../lib/context";
import { ApiError, badRequest, notFound, unprocessable } from "../../lib/errors";
import { withLanguage } from "../../lib/language";
import { type Message, m, zodMessage } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { daysOf, maskOf } from "../../lib/weekdays";
import { addDays, dateIn, isoWeekday } from "../../lib/zoned-time";
import { moduleOn } from "../application-module/api";
import { announce, readSuperseded, WITHDRAWN_FIELDS } from "./announce";
import { withdrawEffects } from "./effects";
import { decideDays } from "./fixed-days";
import { permissions } from "./permissions";
import { actingContext, ExitPermissionRecord, exitPermission, ownStudents, permissionDate } from "./resource";
import { RULES } from "./rules";
import { type Ask, announceWritten, evaluate, type Queued, queueAsk, refusal } from "./service";
import { DEFAULT_WEEKS, isStaff } from "./snapshot";

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const Weekdays = z
  .array(
    z
      .number()
      .int()
      .min(1)
      .max(7)
      .openapi({ enum: [1, 2, 3, 4, 5, 6, 7] }),
  )
  .min(1)
  .max(7)
  .refine((d) => new Set(d).size === d.length, zodMessage(m`Each weekday once`))
  .openapi({ uniqueItems: true, example: [1, 3], description: "ISO weekdays, 1 Monday .. 7 Sunday" });

const FixedRecord = RecordBase.extend({
  studentId: z.number().int(),
  kind: z
    .enum(["route_change", "auto_pickup"])
    .openapi({ description: "What it makes each week: route changes or auto pickups" }),
  weekdays: z.array(z.number().int()),
  fromDate: z.iso.date().openapi({ description: "The first day it makes permissions for (school-local)" }),
  untilDate: z.iso.date().openapi({ description: "The last day it makes permissions for (school-local)" }),
  routeId: z.number().int().nullable(),
  stopId: z.number().int().nullable(),
  trustedAddressId: z.number().int().nullable(),
  pickupParentId: z.number().int().nullable(),
  trustedPersonId: z.number().int().nullable(),
  askedBy: z.number().int().nullable(),
  parentId: z.number().int().nullable(),
  reason: z.string().nullable().openapi({ description: "Why, as the family or the school wrote it" }),
  generatedUntil: z.string().nullable().openapi({ description: "The last date permissions were made for" }),
  status: z.enum(FIXED_EXIT_PERMISSION_STATUSES).openapi({
    description:
      "pending (its days wait for the office one by one), confirmed (each day it makes is confirmed when the rules pass on that day), rejected (it makes no more days)",
  }),
  decidedBy: z.number().int().nullable(),
  decidedAt: z.string().nullable(),
  decisionReason: z.string().nullable(),
});

/** Staff see every fixed permission; anyone else their children's. */
const visibleFixed = (ctx: SchoolCtx): SQL | undefined =>
  isStaff(ctx) ? undefined : inList(fixedExitPermissions.studentId, ownStudents(ctx));

function fixedResource(kind: "route_change" | "auto_pickup", segment: string, name: string, label: Message) {
  return defineResource({
    name,
    plural: `${name}s`,
    label,
    path: `/api/v1/exit-permission/fixed/${segment}`,
    tag: "Permissions and tasks",
    scope: "school",
    module: "exit-permissions",
    data: FixedExitPermissions,
    record: FixedRecord,
    toRecord: (_ctx, row) => ({
      ...timestamps(row),
      studentId: row.studentId,
      kind: row.kind,
      weekdays: daysOf(row.weekdays),
      fromDate: row.fromDate,
      untilDate: row.untilDate,
      routeId: row.routeId,
      stopId: row.stopId,
      trustedAddressId: row.trustedAddressId,
      pickupParentId: row.pickupParentId,
      trustedPersonId: row.trustedPersonId,
      askedBy: row.askedBy,
      parentId: row.parentId,
      reason: row.reason,
      generatedUntil: row.generatedUntil,
      status: row.status,
      decidedBy: row.decidedBy,
      decidedAt: row.decidedAt,
      decisionReason: row.decisionReason,
    }),
    // fixed_exit_permission_school_idx (school_id, kind, created_at); a deleted one is gone from its routes.
    visibleTo: (ctx) =>
      and(eq(fixedExitPermissions.kind, kind), isNull(fixedExitPermissions.deletedAt), visibleFixed(ctx)),
    context: actingContext,
  });
}

const routeChanges = fixedResource("route_change", "route-change", "fixedRouteChange", m`Fixed route change`);
const autoPickups = fixedResource("auto_pickup", "auto-pickup", "fixedAutoPickup", m`Fixed auto pickup`);

const common = {
  studentId: Id.openapi({ example: 1 }),
  weekdays: Weekdays,
  fromDate: permissionDate("The first day to make permissions for (school-local)"),
  untilDate: permissionDate("The last day to make permissions for (school-local)"),
  reason: text({ max: 500 }).optional(),
};
const RouteChangeBody = z.strictObject({
  ...common,
  routeId: Id.optional(),
  stopId: Id.optional(),
  trustedAddressId: Id.optional(),
});
const AutoPickupBody = z.strictObject({ ...common, pickupParentId: Id.optional(), trustedPersonId: Id.optional() });
type Body = z.output<typeof RouteChangeBody> & { pickupParentId?: number; trustedPersonId?: number };

/** Checks a fixed permission's student, targets and asker as a probe ask on its first date; answers its columns. */
async function fixedValues(ctx: SchoolCtx, kind: "route_change" | "auto_pickup", body: Body) {
  if (body.fromDate > body.untilDate) {
    throw badRequest(m`untilDate is before fromDate`, [{ path: "untilDate", message: m`Must not be before fromDate` }]);
  }
  if (
    kind === "route_change" &&
    body.routeId === undefined &&
    body.stopId === undefined &&
    body.trustedAddressId === undefined
  )
    throw badRequest(m`A route change names a stop or a trusted address`, [{ path: "stopId", message: m`Required` }]);
  const probe: Ask = { ...body, kind, date: body.fromDate };
  const { evaluated } = await evaluate(ctx, [probe]);
  const one = evaluated[0];
  if (!one) throw new Error("no evaluation");
  // Rules that depend on one day (its date, seats) are checked when each day is made.
  const failures = one.verdict.failures.filter((f) => !RULES[f.code].perDay);
  if (failures.length > 0) throw refusal(failures);
  if (one.resolved.status === "awaiting_family") throw unprocessable(m`A fixed permission is for one's own children`);
  return {
    studentId: body.studentId,
    kind,
    weekdays: maskOf(body.weekdays),
    fromDate: body.fromDate,
    untilDate: body.untilDate,
    routeId: kind === "route_change" ? (one.resolved.target?.routeId ?? null) : null,
    stopId: kind === "route_change" ? (one.resolved.target?.stopId ?? null) : null,
    trustedAddressId: body.trustedAddressId ?? null,
    pickupParentId: one.resolved.snapshot.pickup?.parentId ?? null,
    trustedPersonId: body.trustedPersonId ?? null,
    askedBy: ctx.userId,
    parentId: one.resolved.parentId,
    reason: body.reason ?? null,
  };
}

const todayUtc = (ctx: SchoolCtx) => ctx.deps.clock.now().toISOString().slice(0, 10);

/** The permissions fixed permission `id` made from today on. */
const generatedFrom = (ctx: SchoolCtx, id: number) =>
  and(eq(exitPermissions.fixedId, id), gte(exitPermissions.date, todayUtc(ctx)));

/** Cancels the generated permissions of fixed permission `id` from today on, giving their seats back. */
function withdrawGenerated(ctx: SchoolCtx, id: number): Statement[] {
  const future = and(
    generatedFrom(ctx, id),
    inList(exitPermissions.status, ["awaiting_family", "pending", "confirmed"]),
  );
  const confirmed = ExitPermissions.pick(ctx, exitPermissions.id, future, eq(exitPermissions.status, "confirmed"));
  return [
    ...withdrawEffects(ctx, sql`${confirmed}`),
    ...ExitPermissions.update(ctx, future, { status: "cancelled" }, "cancel"),
  ];
}

function operationsOf<B extends typeof RouteChangeBody | typeof AutoPickupBody>(
  resource: typeof routeChanges,
  kind: "route_change" | "auto_pickup",
  body: B,
) {
  const list = resource.list({
    access: permissions.read,
    summary: `List fixed ${kind.replace("_", " ")}s (paginated)`,
  });
  const created = resource.create({
    access: permissions.write,
    input: body,
    errors: [422],
    examples: {
      422: [
        { name: "own", summary: "Not one's own child", detail: "A fixed permission is for one's own children" },
        {
          name: "rules",
          summary: "A rule that holds on every day refuses it",
          detail: "Route 3 goes to school, not home",
          errors: [{ path: "routeId", message: "Route 3 goes to school, not home" }],
          members: { failures: [{ code: "route-not-home", message: "Route 3 goes to school, not home" }] },
        },
      ],
    },
    values: (ctx, { body: b }) => fixedValues(ctx, kind, b),
  });
  const create = operation(created.route, async (ctx: SchoolCtx, input: { body: z.output<B> }) => {
    const record = await created.run(ctx, input);
    await generateFor(ctx, [record.id]);
    return resource.find(ctx, record.id);
  });
  const removed = resource.delete({
    access: permissions.write,
    summary: `Delete a fixed ${kind.replace("_", " ")}; its permissions from today on are cancelled`,
  });
  // Deleted, it stays on record (deleted_at): the days it made keep their lineage (`fixedId`, and
  // `GET /fixed/generated` still lists them) while those from today on are cancelled.
  const remove = operation(removed.route, async (ctx: SchoolCtx, { params }: { params: { id: number } }) => {
    // Its confirmed days from today on are withdrawn with it: heard as such once the change committed.
    const withdrawn = await ExitPermissions.select(ctx, WITHDRAWN_FIELDS)
      .where(generatedFrom(ctx, params.id), eq(exitPermissions.status, "confirmed"))
      .all();
    await resource.change(ctx, params.id, {
      action: "delete",
      set: { deletedAt: ctx.deps.clock.now().toISOString() },
      before: withdrawGenerated(ctx, params.id),
    });
    await announce(ctx, { withdrawn: withdrawn.map((w) => ({ ...w, status: "cancelled" })) });
  });
  /** The days a decision of the pattern decides with it, prepared before its batch. */
  const days = new WeakMap<Ctx, Awaited<ReturnType<typeof decideDays>>>();
  const decide = resource.action({
    name: "confirm",
    verb: "confirm",
    access: permissions.review,
    input: z.strictObject({
      status: z.enum(["confirmed", "rejected"]).openapi({ example: "confirmed", description: "The school's decision" }),
      reason: text({ max: 500 }).optional().openapi({ example: "Every Tuesday with grandma, all term" }),
    }),
    from: { column: fixedExitPermissions.status, states: ["pending"] },
    summary: `Confirm or reject a fixed ${kind.replace("_", " ")}: decided once for every day it makes`,
    description:
      "Confirmed: the days it made that still wait (pending or needs_review, from today) are decided again as its asker, " +
      "each confirmed when the rules pass on that day (else needs_review with its failures), and the days it makes " +
      "later likewise. Rejected: its waiting days are rejected and it makes no more. Already decided: 409.",
    set: async (ctx, { id, body }) => {
      const fixed = await FixedExitPermissions.select(ctx)
        .where(
          eq(fixedExitPermissions.id, id),
          eq(fixedExitPermissions.kind, kind),
          isNull(fixedExitPermissions.deletedAt),
        )
        .first();
      // Not here, or decided already: the guarded change answers its 404 or 409 without the days.
      if (fixed?.status === "pending") days.set(ctx, await decideDays(ctx, fixed, body.status));
      return {
        status: body.status,
        decidedBy: ctx.userId,
        decidedAt: ctx.deps.clock.now().toISOString(),
        decisionReason: body.reason ?? null,
      };
    },
    also: (ctx) => days.get(ctx)?.statements ?? [],
  });
  const decideOperation = operation(decide.route, async (ctx: SchoolCtx, input: Parameters<typeof decide.run>[1]) => {
    const record = await decide.run(ctx, input);
    const confirmed = days.get(ctx)?.confirmed ?? [];
    if (confirmed.length > 0) await announceDays(ctx, confirmed);
    return record;
  });
  return [list, create, remove, decideOperation];
}

export const fixedOperations = [
  ...operationsOf(routeChanges, "route_change", RouteChangeBody),
  ...operationsOf(autoPickups, "auto_pickup", AutoPickupBody),
];

/**
 * Tells the days a fixed permission's confirmation confirmed, and the permissions they superseded:
 * one read after the batch (the action's batch reads back only the fixed permission).
 */
async function announceDays(ctx: SchoolCtx, ids: readonly number[]) {
  const batch = new Batch(ctx);
  const confirmed = batch.read(
    exitPermission.select(ctx).where(inList(exitPermissions.id, ids), eq(exitPermissions.status, "confirmed")),
  );
  const superseded = readSuperseded(ctx, batch, ids);
  const results = await batch.commit();
  await announce(ctx, {
    withdrawn: results.get(superseded),
    confirmed: results.get(confirmed).map((row) => exitPermission.toRecord(ctx, row)),
  });
}

// --- the permissions made from one ------------------------------------------------------------

const generatedRoute = defineRoute({
  method: "get",
  // The fixed permission is a query parameter: `/fixed/{id}/generated` would be ambiguous with `/fixed/route-change/{id}`.
  path: "/api/v1/exit-permission/fixed/generated",
  tag: "Permissions and tasks",
  operationId: "listGeneratedExitPermissions",
  summary: "The permissions made from a fixed permission, by date",
  access: permissions.read,
  module: "exit-permissions",
  context: actingContext,
  examples: { 404: "Fixed exit permission 42 not found" },
  request: {
    query: z.strictObject({
      fixedId: recordId().openapi({ example: 1, description: "The fixed route change or auto pickup" }),
    }),
  },
  responses: { 200: json(z.array(ExitPermissionRecord), "Its permissions, by date") },
});

export async function listGenerated(ctx: SchoolCtx, { query }: InputOf<typeof generatedRoute>) {
  const params = { id: query.fixedId };
  const batch = new Batch(ctx);
  const fixed = batch.read(
    FixedExitPermissions.select(ctx, { id: fixedExitPermissions.id }).where(
      eq(fixedExitPermissions.id, params.id),
      visibleFixed(ctx),
    ),
  );
  const rows = batch.read(
    exitPermission
      .select(ctx)
      .where(eq(exitPermissions.fixedId, params.id))
      .orderBy(asc(exitPermissions.date), asc(exitPermissions.id))
      .limit(500),
  );
  const results = await batch.commit();
  if (results.get(fixed).length === 0) throw notFound(m`Fixed exit permission ${params.id} not found`);
  return results.get(rows).map((r) => exitPermission.toRecord(ctx, r));
}
export const listGeneratedOperation = operation(generatedRoute, listGenerated);

// --- generation -------------------------------------------------------------------------------

/**
 * Makes the permissions of fixed permissions `ids` (or every one still running) up to the school's
 * horizon, each day decided as its own ask by the fixed permission's asker (a parent's days are the
 * parent's: the deadline holds and a guardian link that changed counts; the school's own are the
 * school's). A day the rules pass is made `pending`, or `confirmed` once the school confirmed the
 * pattern (or confirms automatically); a day they refuse is made `needs_review` with its failures,
 * for the office; a day without school (a holiday, a weekend, no schedule) is not made. Answers how
 * many were made.
 */
export async function generateFor(ctx: SchoolCtx, ids?: readonly number[]): Promise<number> {
  const base = new Batch(ctx);
  const school = base.read(
    Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId ?? 0)),
  );
  const due = base.read(
    FixedExitPermissions.select(ctx).where(
      ids ? inList(fixedExitPermissions.id, ids) : gte(fixedExitPermissions.untilDate, todayUtc(ctx)),
      isNull(fixedExitPermissions.deletedAt),
      ne(fixedExitPermissions.status, "rejected"),
    ),
  );
  const existing = base.read(
    ExitPermissions.select(ctx, { fixedId: exitPermissions.fixedId, date: exitPermissions.date }).where(
      ids ? inList(exitPermissions.fixedId, ids) : sql`${exitPermissions.fixedId} IS NOT NULL`,
      gte(exitPermissions.date, todayUtc(ctx)),
    ),
  );
  const config = base.read(
    ScheduleConfigurations.select(ctx, { weeks: scheduleConfigurations.permissionWeeksInAdvance }).limit(1),
  );
  const results = await base.commit();
  const timeZone = results.get(school)[0]?.timeZone ?? "UTC";
  const weeks = results.get(config)[0]?.weeks ?? DEFAULT_WEEKS;
  const today = dateIn(timeZone, ctx.deps.clock.now());
  const made = new Set(results.get(existing).map((e) => `${e.fixedId}:${e.date}`));
  // The job's own actor writes (audited as the job); the days are still asked as the fixed one's asker.
  const job: SchoolCtx =
    ctx.actor.type === "user" ? { ...ctx, actor: { type: "job", name: "fixed-exit-permissions" }, userId: null } : ctx;
  let count = 0;
  for (const f of results.get(due)) {
    const horizon = [addDays(today, weeks * 7), f.untilDate].sort()[0] ?? f.untilDate;
    const start =
      [today, f.fromDate, f.generatedUntil ? addDays(f.generatedUntil, 1) : f.fromDate].sort().pop() ?? today;
    const asks: Ask[] = [];
    for (let d = start; d <= horizon; d = addDays(d, 1)) {
      if ((f.weekdays & (1 << (isoWeekday(d) - 1))) === 0 || made.has(`${f.id}:${d}`)) continue;
      asks.push(dayOf(f, d));
    }
    const evaluated = asks.length ? await evaluateDays(job, asks) : [];
    if (evaluated === null) continue;
    const batch = new Batch(job);
    // The claim: a run that finds the horizon already reached (another run) matches nothing. A
    // bookkeeping mark of the job, not a change of the record: no audit row.
    batch.add(
      job.deps.db
        .update(fixedExitPermissions)
        .set({ generatedUntil: horizon })
        .where(
          FixedExitPermissions.where(
            job,
            eq(fixedExitPermissions.id, f.id),
            or(isNull(fixedExitPermissions.generatedUntil), lt(fixedExitPermissions.generatedUntil, horizon)),
          ),
        ),
      guard(job.deps.db),
    );
    const queued: Queued[] = [];
    for (const { resolved: r, verdict } of evaluated) {
      const failures = verdict.failures;
      // No school that day: nobody goes home, there is nothing to decide.
      if (failures.some((x) => x.code === "not-school-day")) continue;
      const byPattern = f.status === "confirmed";
      const status = byPattern || r.status === "confirmed" ? "confirmed" : "pending";
      const because = byPattern ? m`Confirmed with its fixed permission`.render() : undefined;
      queued.push(queueAsk(job, batch, { ...r, status }, failures.length > 0 ? failures : undefined, because));
    }
    let results: Results;
    try {
      results = await batch.commit();
    } catch {
      // Claimed by another run, or a seat went meanwhile: the next run tries the days again.
      continue;
    }
    count += queued.length;
    // The days made confirmed (and what they superseded) are heard like the office's confirmation.
    await announceWritten(job, results, queued);
  }
  return count;
}

/** One day of a fixed permission as an ask of its recorded asker. */
function dayOf(f: typeof fixedExitPermissions.$inferSelect, date: string): Ask {
  return {
    studentId: f.studentId,
    date,
    kind: f.kind,
    fixedId: f.id,
    as: { parentId: f.parentId, userId: f.askedBy },
    ...(f.routeId === null ? {} : { routeId: f.routeId }),
    ...(f.stopId === null ? {} : { stopId: f.stopId }),
    ...(f.trustedAddressId === null ? {} : { trustedAddressId: f.trustedAddressId }),
    ...(f.pickupParentId === null ? {} : { pickupParentId: f.pickupParentId }),
    ...(f.trustedPersonId === null ? {} : { trustedPersonId: f.trustedPersonId }),
    ...(f.reason === null ? {} : { reason: f.reason }),
  };
}

/** The rules over a fixed permission's days; null when its student or a target is gone (a 404: no days). */
async function evaluateDays(ctx: SchoolCtx, asks: readonly Ask[]) {
  try {
    return (await evaluate(ctx, asks)).evaluated;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** The daily job: every school with fixed permissions still running. */
export async function generateFixedExitPermissions(deps: Deps): Promise<string> {
  const today = deps.clock.now().toISOString().slice(0, 10);
  const rows = await deps.db
    .selectDistinct({ schoolId: FixedExitPermissions.schoolOf(), language: schools.language })
    .from(fixedExitPermissions)
    .innerJoin(schools, eq(schools.id, FixedExitPermissions.schoolOf()))
    // A school with exit permissions switched off gets none made.
    .where(
      and(
        gte(fixedExitPermissions.untilDate, today),
        moduleOn(jobCtx(deps, "generate-fixed-exit-permissions"), "exit-permissions", FixedExitPermissions.schoolOf()),
      ),
    );
  let made = 0;
  // A job has no request: what it writes (a decision's reason) is in each school's language.
  await forEachSchool(deps, "generate-fixed-exit-permissions", rows, async (job, { language }) => {
    made += await withLanguage(language, () => generateFor(job));
  });
  return `${made} exit permissions made for ${rows.length} schools`;
}
