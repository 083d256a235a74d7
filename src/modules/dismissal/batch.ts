/**
 * Offline releases: `POST /api/v1/dismissal/release/batch`, a gate device that lost the network
 * sends up to 500 releases it made meanwhile, each with its own `clientId`. Each item is answered on
 * its own: `released`, `duplicate` (this clientId was recorded before, or the child had already
 * left: the first release named; retrying the batch writes nothing twice), or `flagged`: the child
 * left, so it is recorded, but the plan no longer allowed it (a pass withdrawn meanwhile, a
 * collector the plan does not name) and the office sees why. A child of another school, or none,
 * is `unknown` and nothing is written. One read, one write batch.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { DismissalReleases, dismissalReleases } from "../../db/schema/dismissal";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { isNotNull, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { joinMessages } from "../../lib/message";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { type SchoolEvent, schoolEvent } from "../../lib/school-events";
import { text } from "../../lib/text";
import { verifyPickupPass } from "../exit-permission/api";
import { dispatchAll, type Sending } from "../notification/api";
import { schoolToday } from "../transport/api";
import { permissions } from "./permissions";
import { type Collector, dayOf, dayReads } from "./plan";
import { decideRelease, ReleaseInput, releaseRecord, releaseStatements } from "./release";

const Item = z
  .strictObject({
    clientId: text({ max: 100 }).openapi({
      example: "gate-2:2026-11-23:17",
      description: "The device's own id of this release: the same id is recorded once",
    }),
    release: ReleaseInput.openapi({ description: "The release as the device made it" }),
  })
  .openapi("DismissalOfflineRelease");

const Outcome = z
  .object({
    clientId: z.string().openapi({ description: "The device's id of the item" }),
    result: z.enum(["released", "duplicate", "flagged", "unknown"]).openapi({
      description:
        "released; duplicate (recorded before: releaseId names it); flagged (recorded, but the plan no longer allowed it: see reasons); unknown (no such child here, or no collector nor pass: nothing written)",
    }),
    releaseId: z.number().int().nullable().openapi({ description: "The release recorded (or the earlier one)" }),
    reasons: z.array(z.string()).openapi({ description: "Why it was flagged" }),
  })
  .openapi("DismissalOfflineOutcome");

const batchRoute = defineRoute({
  method: "post",
  path: "/api/v1/dismissal/release/batch",
  tag: "Transport",
  operationId: "createDismissalReleaseBatch",
  summary: "Record up to 500 releases a gate made offline, each answered on its own, none twice",
  access: permissions.release,
  module: "dismissal",
  audit: "dismissal-release",
  request: {
    body: jsonBody(
      z.strictObject({
        releases: z.array(Item).min(1).max(500).openapi({ description: "The releases, 1 to 500" }),
      }),
      "DismissalReleaseBatchBody",
    ),
  },
  responses: {
    200: json(
      z
        .object({ results: z.array(Outcome).openapi({ description: "One outcome per item, in order" }) })
        .openapi("DismissalReleaseBatch"),
      "Each item's outcome",
    ),
  },
});

export async function createReleaseBatch(ctx: SchoolCtx, { body }: InputOf<typeof batchRoute>) {
  const date = await schoolToday(ctx);
  const items = body.releases;
  const passes = await Promise.all(
    items.map((i) => (i.release.passToken ? verifyPickupPass(ctx, i.release.passToken, date) : Promise.resolve(null))),
  );
  const studentIds = [...new Set(items.map((i) => i.release.studentId))];
  const read = new Batch(ctx);
  const reads = dayReads(ctx, read, date, { studentIds });
  const known = read.read(
    DismissalReleases.select(ctx, { id: dismissalReleases.id, clientId: dismissalReleases.clientId }).where(
      isNotNull(dismissalReleases.clientId),
      inList(
        dismissalReleases.clientId,
        items.map((i) => i.clientId),
      ),
    ),
  );
  const trustedIds = items.flatMap((i) => (i.release.collector?.kind === "trusted" ? [i.release.collector.id] : []));
  const trusted = read.read(
    TrustedPeople.select(ctx, {
      id: trustedPeople.id,
      studentId: trustedPeople.studentId,
      name: trustedPeople.name,
      relationship: trustedPeople.relationship,
      status: trustedPeople.status,
    }).where(inList(trustedPeople.id, trustedIds)),
  );
  const slugs = passes.flatMap((p) => (p ? [p.slug] : []));
  const permitted = read.read(
    ExitPermissions.select(ctx, {
      id: exitPermissions.id,
      studentId: exitPermissions.studentId,
      slug: exitPermissions.slug,
    }).where(inList(exitPermissions.slug, slugs)),
  );
  const results = await read.commit();
  const day = dayOf(results, reads, date, ctx);
  const entries = new Map(day.entries.map((e) => [e.studentId, e]));
  const byClient = new Map(results.get(known).map((r) => [r.clientId, r.id]));
  const people = results.get(trusted);
  const permissionsBySlug = new Map(results.get(permitted).map((p) => [p.slug, p]));

  const write = new Batch(ctx);
  const sendings: Sending[] = [];
  const taken = new Map<number, number | null>();
  for (const e of day.entries) if (e.release) taken.set(e.studentId, e.release.id);
  const outcomes = items.map((item, i) => {
    const r = item.release;
    const earlier = byClient.get(item.clientId);
    if (earlier !== undefined)
      return { clientId: item.clientId, result: "duplicate" as const, releaseId: earlier, reasons: [] };
    const e = entries.get(r.studentId);
    // No such child here, or no one named: nothing to record.
    if (!e || (r.collector === undefined && r.passToken === undefined))
      return { clientId: item.clientId, result: "unknown" as const, releaseId: null, reasons: [] };
    if (taken.has(e.studentId)) {
      return {
        clientId: item.clientId,
        result: "duplicate" as const,
        releaseId: taken.get(e.studentId) ?? null,
        reasons: [],
      };
    }
    const pass = passes[i] ?? null;
    const person = people.find((p) => p.id === r.collector?.id && p.studentId === e.studentId);
    const verdict = decideRelease(ctx, e, r, date, {
      trusted: r.collector?.kind === "trusted" ? person : undefined,
      pass,
      passPermission: pass ? permissionsBySlug.get(pass.slug) : undefined,
      reunification: day.reunification !== null,
    });
    taken.set(e.studentId, null);
    if (verdict.ok) {
      const { statements, sending } = releaseStatements(ctx, e, r, date, verdict.decided, {
        clientId: item.clientId,
        guard: false,
      });
      write.add(...statements);
      sendings.push(sending);
      return { clientId: item.clientId, result: "released" as const, releaseId: null, reasons: [] };
    }
    // The child left: recorded as the device says, flagged with every reason for the office.
    const reasons = verdict.failures.map((f) => f.message);
    const guardian = e.guardians.find((g) => r.collector?.kind === "guardian" && g.parentId === r.collector.id);
    const collector: Collector = guardian
      ? {
          kind: "guardian",
          id: guardian.parentId,
          name: `${guardian.firstName} ${guardian.lastName}`.trim(),
          relationship: null,
        }
      : person
        ? { kind: "trusted", id: person.id, name: person.name, relationship: person.relationship }
        : {
            kind: r.collector?.kind ?? "trusted",
            id: r.collector?.id ?? 0,
            name: typeof pass?.collector === "string" ? pass.collector : "?",
            relationship: null,
          };
    const { statements, sending } = releaseStatements(
      ctx,
      e,
      r,
      date,
      {
        collector,
        method: r.override ? "override" : r.passToken ? "pass" : "list",
        passId: pass?.slug ?? null,
        permissionId: null,
        broken: sql`0`,
      },
      { clientId: item.clientId, guard: false, flagged: true, flagReason: joinMessages(reasons, "; ").render() },
    );
    write.add(...statements);
    sendings.push(sending);
    return { clientId: item.clientId, result: "flagged" as const, releaseId: null, reasons: reasons.map(String) };
  });
  const made = write.read(
    DismissalReleases.select(ctx).where(
      inList(
        dismissalReleases.clientId,
        items.map((i) => i.clientId),
      ),
    ),
  );
  if (write.size > 1) {
    const rows = new Map((await write.commit()).get(made).map((r) => [r.clientId, r]));
    for (const o of outcomes)
      if (o.releaseId === null && o.result !== "unknown") o.releaseId = rows.get(o.clientId)?.id ?? null;
    const recorded: SchoolEvent[] = outcomes.flatMap((o) => {
      const row = o.result === "released" || o.result === "flagged" ? rows.get(o.clientId) : undefined;
      return row ? [{ type: "dismissal.released", data: { date: row.date, release: releaseRecord(row) } }] : [];
    });
    // The guardians' pushes: one queue call per 100 (not one per release).
    await dispatchAll(ctx, sendings);
    // The school's other systems hear each release recorded here, as one made at the gate (the board logged it).
    await schoolEvent(ctx, ...recorded);
  }
  return { results: outcomes };
}

export const createReleaseBatchOperation = operation(batchRoute, createReleaseBatch);
