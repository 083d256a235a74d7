/**
 * Releases at the gate: `POST /api/v1/dismissal/release` hands a child to a collector today's
 * effective plan names (or whose pickup pass verifies), or, by a school admin with a reason, to a
 * guardian or approved trusted person the plan does not name; never to a restricted or unknown
 * one. Read -> decide -> one batch: the release row (the unique index per child and day decides a
 * race: exactly one of two gates wins, the other gets the 409 naming it), its audit row, the day's
 * event, guards that the plan it stood on still holds when the batch runs, and the guardians' push.
 */

import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  DismissalReleases,
  DismissalReunifications,
  dismissalReleases,
  dismissalReunifications,
} from "../../db/schema/dismissal";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { Guardians, guardians } from "../../db/schema/student";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, isNull, type SQL, sql } from "../../db/sql";
import { abortIf, GuardFailed, isUniqueViolation, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { dateTime } from "../../lib/dates";
import { ApiError, conflict, forbidden, notFound } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { schoolEvent } from "../../lib/school-events";
import { text } from "../../lib/text";
import { verifyPickupPass } from "../exit-permission/api";
import { notify } from "../notification/api";
import { restrictedOn } from "../student/api";
import { schoolToday } from "../transport/api";
import { eventOf } from "./events";
import { permissions } from "./permissions";
import { type Collector, dayOf, dayReads, type Entry, guardianMay } from "./plan";
import { type Failure, refusal } from "./refusal";

const PATH = "/api/v1/dismissal/release";

export const CollectorRef = z
  .strictObject({
    kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian (parent profile) or a trusted person" }),
    id: z.number().int().min(1).openapi({ description: "The parent profile's id, or the trusted person's" }),
  })
  .openapi("DismissalCollectorRef");

export const ReleaseInput = z
  .strictObject({
    studentId: z.number().int().min(1).openapi({ description: "The child released" }),
    collector: CollectorRef.optional().openapi({ description: "Who takes the child (or `passToken`)" }),
    passToken: z
      .string()
      .min(20)
      .max(2000)
      .optional()
      .openapi({ description: "The collector's pickup pass (its token), instead of `collector`" }),
    gate: text({ max: 60 }).optional().openapi({ example: "North gate", description: "Where" }),
    releasedAt: dateTime("When the gate device says it happened").optional(),
    override: z
      .strictObject({
        reason: text({ max: 500 }).openapi({
          example: "Mother called the office: the grandmother collects today",
          description: "Why the plan is overridden",
        }),
      })
      .optional()
      .openapi({
        description:
          "A school admin (dismissal.manage) releases to a guardian or approved trusted person the plan does not name; never a restricted one",
      }),
    identityCheck: text({ max: 200 }).optional().openapi({
      example: "INE checked, photo matches",
      description: "The identity check (required in a reunification)",
    }),
  })
  .openapi({ description: "Give either `collector` or `passToken` (both or neither: 422)" });

export const ReleaseRecord = z
  .object({
    id: z.number().int().openapi({ description: "The release's id" }),
    date: z.iso.date().openapi({ description: "The school-local date" }),
    studentId: z.number().int().openapi({ description: "The child released" }),
    collector: z
      .object({
        kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian or a trusted person" }),
        id: z.number().int().openapi({ description: "The parent profile's id, or the trusted person's" }),
        name: z.string().openapi({ description: "Their name at the release" }),
      })
      .openapi({ description: "Who took the child" }),
    method: z
      .enum(["list", "pass", "override"])
      .openapi({ description: "list: named by the plan; pass: a pickup pass; override: an admin's, with a reason" }),
    gate: z.string().nullable().openapi({ description: "Where" }),
    releasedBy: z.number().int().nullable().openapi({ description: "The staff member who released" }),
    releasedAt: z.string().openapi({ description: "The server's instant (ISO 8601)" }),
    deviceReleasedAt: z.string().nullable().openapi({ description: "The gate device's instant, as it said" }),
    reason: z.string().nullable().openapi({ description: "An override's reason" }),
    identityCheck: z.string().nullable().openapi({ description: "The identity check recorded" }),
    flagged: z
      .boolean()
      .openapi({ description: "Recorded though the plan no longer allowed it (offline): for the office" }),
    flagReason: z.string().nullable().openapi({ description: "Why it was flagged" }),
  })
  .openapi("DismissalRelease");

const releaseRoute = defineRoute({
  method: "post",
  path: PATH,
  tag: "Transport",
  operationId: "createDismissalRelease",
  summary: "Release a child at a gate to a collector today's plan names (or a verifying pickup pass)",
  access: permissions.release,
  module: "dismissal",
  audit: "dismissal-release",
  errors: [404, 409, 422],
  examples: {
    409: "Pablo Parent already left with Ana García at 2026-11-23T21:07:00.000Z (release 12)",
    422: "Ana García may not collect Pablo Parent: restricted until 2026-12-31",
  },
  request: { body: jsonBody(ReleaseInput, "DismissalReleaseBody") },
  responses: { 201: json(ReleaseRecord, "The release") },
});

export type ReleaseBody = z.output<typeof ReleaseInput>;

/** What a release stands on: the collector, how they were verified, and the guard of that fact. */
interface Decided {
  collector: Collector;
  method: "list" | "pass" | "override";
  passId: string | null;
  permissionId: number | null;
  /** When true at commit, the plan no longer allows it: the batch aborts. */
  broken: SQL;
}

const nameOf = (e: Entry) => `${e.firstName} ${e.lastName}`.trim();

/** The reads a release decides on besides the day: the trusted person named, the pass's permission, a reunification. */
export function releaseReads(ctx: SchoolCtx, batch: Batch, body: ReleaseBody, pass: { slug: string } | null) {
  const ref = body.collector;
  const trusted =
    ref?.kind === "trusted"
      ? batch.read(
          TrustedPeople.select(ctx, {
            id: trustedPeople.id,
            name: trustedPeople.name,
            relationship: trustedPeople.relationship,
            status: trustedPeople.status,
          }).where(eq(trustedPeople.id, ref.id), eq(trustedPeople.studentId, body.studentId)),
        )
      : undefined;
  const permission = pass
    ? batch.read(
        ExitPermissions.select(ctx, { id: exitPermissions.id, studentId: exitPermissions.studentId }).where(
          eq(exitPermissions.slug, pass.slug),
        ),
      )
    : undefined;
  const reunion = batch.read(
    DismissalReunifications.select(ctx, { id: dismissalReunifications.id })
      .where(isNull(dismissalReunifications.endedAt))
      .limit(1),
  );
  return (results: Results, p: { slug: string } | null) => ({
    trusted: trusted ? results.get(trusted)[0] : undefined,
    pass: p,
    passPermission: permission ? results.get(permission)[0] : undefined,
    reunification: results.get(reunion).length > 0,
  });
}

type Results = Awaited<ReturnType<Batch["commit"]>>;

/** A guardian link that may collect on `date`, as SQL over `guardian` (the guard at commit). */
const mayCollectSql = (date: string) =>
  sql`(${guardians.canPickUp} = 1 AND (${guardians.restricted} = 0 OR (${guardians.restrictionFrom} IS NOT NULL AND ${guardians.restrictionFrom} > ${date}) OR (${guardians.restrictionUntil} IS NOT NULL AND ${guardians.restrictionUntil} < ${date})))`;

/** The permission still confirmed when the batch runs. */
const permissionGone = (ctx: SchoolCtx, id: number) =>
  sql`NOT ${ExitPermissions.exists(ctx, eq(exitPermissions.id, id), eq(exitPermissions.status, "confirmed"))}`;

/**
 * Decides a release of `e`: the collector and how, or every reason it is refused. `trusted` is the
 * named trusted person of the child (any state), `passPermission` the pass's permission.
 */
export function decideRelease(
  ctx: SchoolCtx,
  e: Entry,
  body: ReleaseBody,
  date: string,
  facts: {
    trusted: { id: number; name: string; relationship: string; status: string } | undefined;
    pass: { slug: string } | null;
    passPermission: { id: number; studentId: number } | undefined;
    reunification: boolean;
  },
): { ok: true; decided: Decided } | { ok: false; failures: Failure[] } {
  const child = nameOf(e);
  const fail = (code: string, path: string, message: Message, facts: Record<string, unknown> = {}) => ({
    ok: false as const,
    failures: [{ code, path, message, studentId: e.studentId, ...facts }],
  });
  if (e.status === "no-school") return fail("no-school", "studentId", m`${child} has no school today`);
  if (e.status === "absent") return fail("absent", "studentId", m`${child} is absent today`);
  if (facts.reunification && !body.identityCheck) {
    return fail(
      "identity-check-required",
      "identityCheck",
      m`The school is in a reunification: record the identity check of whoever collects ${child}`,
    );
  }
  if (body.passToken !== undefined) {
    if (!facts.pass) return fail("pass-invalid", "passToken", m`The pickup pass does not verify`);
    const permission = facts.passPermission;
    if (!permission || permission.studentId !== e.studentId) {
      return fail("pass-invalid", "passToken", m`The pickup pass is not ${child}'s`);
    }
    const [named] = e.collectors;
    if (e.way !== "auto_pickup" || e.permissionId !== permission.id || !named) {
      return fail("pass-withdrawn", "passToken", m`The pickup pass was withdrawn: ${child}'s plan changed`);
    }
    return {
      ok: true,
      decided: {
        collector: named,
        method: "pass",
        passId: facts.pass.slug,
        permissionId: permission.id,
        broken: permissionGone(ctx, permission.id),
      },
    };
  }
  const ref = body.collector;
  if (!ref) return fail("collector-required", "collector", m`Give either collector or passToken`);
  const listed = e.collectors.find((c) => c.kind === ref.kind && c.id === ref.id);
  // Who the collector is, whatever the plan says: a guardian of the child, or their trusted person.
  let known: Collector | undefined;
  if (ref.kind === "guardian") {
    const g = e.guardians.find((x) => x.parentId === ref.id);
    if (!g) {
      return fail("unknown-collector", "collector", m`Parent ${ref.id} is not a guardian of ${child}`, {
        collector: ref,
      });
    }
    const who = `${g.firstName} ${g.lastName ?? ""}`.trim();
    if (restrictedOn(g, date)) {
      const until = g.restrictionUntil;
      return fail(
        "restricted",
        "collector",
        until
          ? m`${who} may not collect ${child}: restricted until ${until}`
          : m`${who} may not collect ${child}: restricted`,
        { collector: ref },
      );
    }
    if (!guardianMay(g, date)) {
      return fail("may-not-pick-up", "collector", m`${who} may not pick ${child} up`, { collector: ref });
    }
    known = { kind: "guardian", id: g.parentId, name: who, relationship: g.relationship };
  } else {
    const p = facts.trusted;
    if (p?.status !== "approved") {
      return fail("unknown-collector", "collector", m`Trusted person ${ref.id} is not approved for ${child}`, {
        collector: ref,
      });
    }
    known = { kind: "trusted", id: p.id, name: p.name, relationship: p.relationship };
  }
  const guardianHolds = (parentId: number) =>
    sql`NOT ${Guardians.exists(ctx, eq(guardians.studentId, e.studentId), eq(guardians.parentId, parentId), mayCollectSql(date))}`;
  const trustedHolds = (id: number) =>
    sql`NOT ${TrustedPeople.exists(ctx, eq(trustedPeople.id, id), eq(trustedPeople.status, "approved"))}`;
  const personGone = ref.kind === "guardian" ? guardianHolds(ref.id) : trustedHolds(ref.id);
  if (listed) {
    const broken =
      e.way === "auto_pickup" && e.permissionId !== null
        ? sql`(${permissionGone(ctx, e.permissionId)} OR ${personGone})`
        : personGone;
    return {
      ok: true,
      decided: { collector: listed, method: "list", passId: null, permissionId: e.permissionId, broken },
    };
  }
  // Named by no plan of today: only an admin's override, with a reason.
  if (body.override) {
    if (!ctx.can(permissions.manage)) throw forbidden(m`Only a school admin may release against the day's plan`);
    return {
      ok: true,
      decided: { collector: known, method: "override", passId: null, permissionId: null, broken: personGone },
    };
  }
  if (e.route) {
    const route = e.route.name;
    return fail("rides-home", "collector", m`${child} goes home on route ${route} today`, { collector: ref });
  }
  const named = e.collectors.map((c) => c.name).join(", ");
  return fail(
    "not-in-plan",
    "collector",
    named ? m`Today's plan names ${named} to collect ${child}` : m`Today's plan names no one to collect ${child}`,
    { collector: ref },
  );
}

/** The statements of one release: its row, audit row, guard, event and the guardians' push. */
export function releaseStatements(
  ctx: SchoolCtx,
  e: Entry,
  body: ReleaseBody,
  date: string,
  d: Decided,
  extra: { clientId?: string; flagged?: boolean; flagReason?: string | null; guard?: boolean } = {},
) {
  const now = ctx.deps.clock.now();
  const statements: Statement[] = [];
  // Online, the fact it stood on must still hold at commit; an offline release already happened.
  if (extra.guard !== false) statements.push(abortIf(ctx.deps.db, d.broken));
  statements.push(
    ...DismissalReleases.insert(ctx, {
      date,
      studentId: e.studentId,
      collectorKind: d.collector.kind,
      collectorId: d.collector.id,
      collectorName: d.collector.name,
      method: d.method,
      passId: d.passId,
      permissionId: d.permissionId,
      gate: body.gate ?? null,
      releasedBy: ctx.userId,
      releasedAt: now.toISOString(),
      deviceReleasedAt: body.releasedAt ?? null,
      reason: body.override?.reason ?? null,
      identityCheck: body.identityCheck ?? null,
      clientId: extra.clientId ?? null,
      flagged: extra.flagged ?? false,
      flagReason: extra.flagReason ?? null,
    }),
    eventOf(ctx, date, "released", e.studentId, {
      collector: { kind: d.collector.kind, id: d.collector.id, name: d.collector.name },
      method: d.method,
      gate: body.gate ?? null,
    }),
  );
  const sending = notify(ctx, {
    category: "afternoon",
    title: { en: `${e.firstName} left school`, es: `${e.firstName} salió de la escuela` },
    body: { en: `${e.firstName} left with ${d.collector.name}`, es: `${e.firstName} salió con ${d.collector.name}` },
    about: { entity: "dismissal-release", id: DismissalReleases.insertedId() },
    audience: { guardiansOf: [e.studentId] },
  });
  statements.push(...sending.statements);
  return { statements, sending };
}

/** The release row as the API answers it. */
export function releaseRecord(r: typeof dismissalReleases.$inferSelect) {
  return {
    id: r.id,
    date: r.date,
    studentId: r.studentId,
    collector: { kind: r.collectorKind, id: r.collectorId, name: r.collectorName },
    method: r.method,
    gate: r.gate,
    releasedBy: r.releasedBy,
    releasedAt: r.releasedAt,
    deviceReleasedAt: r.deviceReleasedAt,
    reason: r.reason,
    identityCheck: r.identityCheck,
    flagged: Boolean(r.flagged),
    flagReason: r.flagReason,
  };
}

/** The 409 of a child already released today: it names the first release. */
export async function alreadyReleased(ctx: SchoolCtx, e: Entry, date: string): Promise<ApiError> {
  const first = await DismissalReleases.select(ctx)
    .where(eq(dismissalReleases.date, date), eq(dismissalReleases.studentId, e.studentId))
    .first();
  const child = nameOf(e);
  if (!first) return conflict(m`${child} was released meanwhile`);
  const { collectorName: who, releasedAt: when, id } = first;
  return conflict(m`${child} already left with ${who} at ${when} (release ${id})`);
}

export async function createRelease(ctx: SchoolCtx, { body }: InputOf<typeof releaseRoute>) {
  const date = await schoolToday(ctx);
  const pass = body.passToken ? await verifyPickupPass(ctx, body.passToken, date) : null;
  const read = new Batch(ctx);
  const reads = dayReads(ctx, read, date, { studentIds: [body.studentId] });
  const factsOf = releaseReads(ctx, read, body, pass);
  const results = await read.commit();
  const day = dayOf(results, reads, date, ctx);
  const e = day.entries[0];
  if (!e) throw notFound(m`Student ${body.studentId} not found`);
  if ((body.collector === undefined) === (body.passToken === undefined)) {
    throw refusal([
      {
        code: "collector-required",
        path: "collector",
        studentId: e.studentId,
        message: m`Give either collector or passToken`,
      },
    ]);
  }
  if (e.release) throw await alreadyReleased(ctx, e, date);
  const verdict = decideRelease(ctx, e, body, date, factsOf(results, pass));
  if (!verdict.ok) throw refusal(verdict.failures);
  const { statements, sending } = releaseStatements(ctx, e, body, date, verdict.decided);
  const batch = new Batch(ctx).add(...statements);
  const made = batch.read(
    DismissalReleases.select(ctx).where(eq(dismissalReleases.date, date), eq(dismissalReleases.studentId, e.studentId)),
  );
  try {
    const [row] = (await batch.commit()).get(made);
    await sending.dispatch();
    if (!row) throw new Error("a release was not read back");
    const record = releaseRecord(row);
    // The school's other systems hear it too (a webhook endpoint that asked for it; never throws).
    await schoolEvent(ctx, { type: "dismissal.released", data: { date, release: record } });
    return record;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) throw await alreadyReleased(ctx, e, date);
    if (isUniqueViolation(err)) throw await alreadyReleased(ctx, e, date);
    if (err instanceof GuardFailed) {
      // The plan changed between the read and the write (a permission withdrawn, a restriction).
      const child = nameOf(e);
      throw refusal([
        {
          code: "plan-changed",
          path: "collector",
          studentId: e.studentId,
          message: m`${child}'s plan changed meanwhile`,
        },
      ]);
    }
    throw err;
  }
}

export const createReleaseOperation = operation(releaseRoute, createRelease);
