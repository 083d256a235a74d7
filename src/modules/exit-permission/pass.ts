/**
 * The pickup pass. The public link of a CONFIRMED auto pickup (`/api/v1/exit-permission/public?slug=`,
 * no sign-in) answers a minimal view for the gate: the child's first name, their photo (a presigned
 * GET of a few minutes) if any, the date, who collects them, and a pass: an Ed25519-signed token
 * (./pass-key.ts) valid only for that day's dismissal window (an hour before the child's dismissal
 * to an hour after their after-school program ends, or after dismissal without one), which a gate
 * device verifies offline with the school's public key (`GET /api/v1/exit-permission/pass-key`).
 * Gate devices also fetch the day's revoked passes (`GET .../pass-revocations?date=`, signed with
 * the same key), so a pass withdrawn after it was shown stops working within minutes.
 *
 * Anything else is a 404 that reveals nothing: an unknown slug, a permission not confirmed (pending,
 * rejected, cancelled, superseded), another kind, a day that has ended, a deleted student, or a
 * collector who may no longer take the child (a guardian without pick-up or restricted that day, a
 * trusted person no longer approved). Never the family's data, the asker, or the reason.
 * Rate-limited per client address, like the other public routes.
 */
import { z } from "@hono/zod-openapi";
import { Schools, schools, Users, users } from "../../db/schema/core";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { Parents, parents } from "../../db/schema/parent";
import { SchoolSchedules, schoolSchedules } from "../../db/schema/school-schedule";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, isNotNull, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { notFound } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { limitPublicLookups } from "../../lib/rate-limit";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { addDays, dateIn, zonedInstant } from "../../lib/zoned-time";
import { moduleOn } from "../application-module/api";
import { schoolZone } from "../school/api";
import { copyOf, copyTable, identity } from "../user/api";
import { kidOf, passKey, signPass } from "./pass-key";
import { permissions } from "./permissions";

const PHOTO_SECONDS = 300;

const Slug = z
  .string()
  .min(8)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, zodMessage(m`Letters, digits, - and _`))
  .openapi({ example: "b1946ac92492d2347c6235b4d2611184" });

const Jwk = z
  .object({
    kty: z.literal("OKP").openapi({ description: "The key type (an Edwards curve key)" }),
    crv: z.literal("Ed25519").openapi({ description: "The curve" }),
    x: z.string().openapi({ description: "The public key, base64url" }),
    kid: z.string().openapi({ description: "The key's id, as passes name it" }),
    alg: z.literal("EdDSA").openapi({ description: "The signature algorithm" }),
    use: z.literal("sig").openapi({ description: "For signatures" }),
  })
  .openapi("PassPublicJwk", { description: "The school's public key as a JWK (RFC 8037): verifies passes offline" });

const PickupPass = z
  .object({
    firstName: z.string().openapi({ description: "The child's first name" }),
    photoUrl: z.string().nullable().openapi({ description: "A presigned GET of the child's photo (minutes), or null" }),
    date: z.iso.date().openapi({ description: "The school-local date the pass is for" }),
    collector: z
      .object({
        name: z.string().openapi({ description: "The collector's name" }),
        kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian, or an approved trusted person" }),
        relationship: z.string().nullable(),
      })
      .openapi({ description: "Who collects the child" }),
    validFrom: z.iso.datetime({ offset: true }).openapi({
      description: "The start of the day's dismissal window: an hour before the child's dismissal (ISO 8601)",
    }),
    expiresAt: z.iso.datetime({ offset: true }).openapi({
      description:
        "The end of the dismissal window: an hour after the after-school program ends, or after dismissal without one (ISO 8601)",
    }),
    kid: z.string().openapi({ description: "The school key that signed the pass" }),
    token: z.string().openapi({
      description:
        "A compact JWS (EdDSA): claims typ 'pickup-pass', school, date, child (first name), collector, nbf, exp, jti (the slug)",
    }),
  })
  .openapi("PickupPass");

const publicRoute = defineRoute({
  method: "get",
  // The slug is a query parameter: `/exit-permission/public/{slug}` would be ambiguous with `/exit-permission/{id}/confirm`.
  path: "/api/v1/exit-permission/public",
  tag: "Permissions and tasks",
  operationId: "getPickupPass",
  summary: "The pickup pass of a confirmed auto pickup, by its public link (no sign-in)",
  access: "public",
  errors: [404, 429],
  examples: { 404: "Pickup pass not found", 429: "Too many pass lookups; try again later" },
  request: {
    query: z.object({ slug: Slug.openapi({ description: "The pass's public link, as the family shares it" }) }),
  },
  responses: { 200: json(PickupPass, "The pass") },
});

const pickupCopy = copyTable("pass_pickup_copy");
const pickupName = identity(users, pickupCopy.table);

/** The permission of the slug in whichever school it is (the slug is unique and unguessable; the row says the school). */
function passRow(ctx: Ctx, slug: string) {
  const school = ExitPermissions.schoolOf();
  const date = exitPermissions.date;
  return (
    ExitPermissions.everySchool(ctx, (s) => ({
      schoolId: s,
      kind: exitPermissions.kind,
      status: exitPermissions.status,
      date,
      firstName: students.firstName,
      photo: students.photo,
      timeZone: schools.timeZone,
      dismissal: schoolSchedules.dismissalTime,
      afterSchoolEnd: schoolSchedules.afterSchoolEndTime,
      pickupParentId: parents.id,
      pickupFirstName: pickupName.firstName,
      pickupLastName: pickupName.lastName,
      pickupRelationship: parents.relationship,
      // The guardian may still pick the child up that day (a restriction counts on the days it covers).
      guardianMay: sql<number>`${guardians.id} IS NOT NULL AND ${guardians.canPickUp} = 1 AND NOT (${guardians.restricted} = 1 AND (${guardians.restrictionFrom} IS NULL OR ${guardians.restrictionFrom} <= ${date}) AND (${guardians.restrictionUntil} IS NULL OR ${guardians.restrictionUntil} >= ${date}))`,
      trustedName: trustedPeople.name,
      trustedRelationship: trustedPeople.relationship,
      trustedStatus: trustedPeople.status,
    }))
      .join(
        joinTable(students),
        sql`${eq(students.id, exitPermissions.studentId)} AND ${Students.ofSchool(school)} AND ${students.deletedAt} IS NULL`,
      )
      .join(Schools, eq(schools.id, school))
      // The child's level's schedule on the date's ISO weekday: the day's dismissal window.
      .join(
        joinTable(schoolSchedules),
        sql`${eq(schoolSchedules.level, students.level)} AND ${schoolSchedules.weekday} = (CAST(strftime('%w', ${date}) AS INTEGER) + 6) % 7 + 1 AND ${SchoolSchedules.ofSchool(school)}`,
        "left",
      )
      .join(
        joinTable(parents),
        sql`${eq(parents.id, exitPermissions.pickupParentId)} AND ${Parents.ofSchool(school)}`,
        "left",
      )
      .join(Users, eq(users.id, parents.userId), "left")
      // The copy's own condition is the permission's school (`copyOf`): there is no current school here.
      .join(joinTable(pickupCopy.table), copyOf(pickupCopy, users.id, school), "left")
      .join(
        joinTable(guardians),
        sql`${eq(guardians.studentId, exitPermissions.studentId)} AND ${eq(guardians.parentId, exitPermissions.pickupParentId)} AND ${Guardians.ofSchool(school)}`,
        "left",
      )
      .join(
        joinTable(trustedPeople),
        sql`${eq(trustedPeople.id, exitPermissions.trustedPersonId)} AND ${eq(trustedPeople.studentId, exitPermissions.studentId)} AND ${TrustedPeople.ofSchool(school)}`,
        "left",
      )
      // A school with exit permissions switched off shows no pass (as its other public pages do).
      .where(eq(exitPermissions.slug, slug), moduleOn(ctx, "exit-permissions", school))
      .limit(1)
  );
}

/** How long before the dismissal a pass opens, and after the day's end (after-school, or dismissal) it closes. */
export const PASS_OPENS_BEFORE_MINUTES = 60;
export const PASS_CLOSES_AFTER_MINUTES = 60;

/** A school-local `HH:mm` on `date` moved by `minutes` (across midnight too), as an instant. */
function localInstant(date: string, time: string, minutes: number, timeZone: string): Date {
  const [h = 0, m = 0] = time.split(":").map(Number);
  const total = h * 60 + m + minutes;
  const days = Math.floor(total / 1440);
  const rest = total - days * 1440;
  const hhmm = `${String(Math.floor(rest / 60)).padStart(2, "0")}:${String(rest % 60).padStart(2, "0")}`;
  return zonedInstant(addDays(date, days), hhmm, timeZone);
}

/** The day's dismissal window of a pass: when a gate accepts it. */
export function dismissalWindow(date: string, dismissal: string, afterSchoolEnd: string | null, timeZone: string) {
  return {
    validFrom: localInstant(date, dismissal, -PASS_OPENS_BEFORE_MINUTES, timeZone),
    expiresAt: localInstant(date, afterSchoolEnd ?? dismissal, PASS_CLOSES_AFTER_MINUTES, timeZone),
  };
}

/** The same 404 for every refusal: nothing tells a pending pass from an unknown link. */
const noPass = () => notFound(m`Pickup pass not found`);

export async function getPickupPass(ctx: Ctx, { query: params }: InputOf<typeof publicRoute>) {
  const now = ctx.deps.clock.now();
  await limitPublicLookups(ctx, "pickup-pass", m`Too many pass lookups; try again later`);
  const row = await passRow(ctx, params.slug).first();
  if (row?.status !== "confirmed" || row.kind !== "auto_pickup") throw noPass();
  // No schedule for the child that day: no dismissal, no window (the rules never confirm such a day).
  if (row.dismissal === null) throw noPass();
  const { validFrom, expiresAt } = dismissalWindow(row.date, row.dismissal, row.afterSchoolEnd, row.timeZone);
  if (now.getTime() >= expiresAt.getTime()) throw noPass();
  const collector =
    row.pickupParentId !== null && row.guardianMay
      ? {
          name: `${row.pickupFirstName ?? ""} ${row.pickupLastName ?? ""}`.trim(),
          kind: "guardian" as const,
          relationship: row.pickupRelationship,
        }
      : row.trustedName !== null && row.trustedStatus === "approved"
        ? { name: row.trustedName, kind: "trusted" as const, relationship: row.trustedRelationship }
        : null;
  if (!collector) throw noPass();
  const token = await signPass(ctx.deps.config.authSecret, row.schoolId, {
    typ: "pickup-pass",
    school: row.schoolId,
    date: row.date,
    child: row.firstName,
    collector: collector.name,
    collectorKind: collector.kind,
    jti: params.slug,
    iat: Math.floor(now.getTime() / 1000),
    nbf: Math.floor(validFrom.getTime() / 1000),
    exp: Math.floor(expiresAt.getTime() / 1000),
  });
  const photo =
    row.photo === null
      ? null
      : await ctx.deps.signer.sign({ key: row.photo, method: "GET", expiresIn: PHOTO_SECONDS, now });
  return {
    firstName: row.firstName,
    photoUrl: photo?.url ?? null,
    date: row.date,
    collector,
    validFrom: validFrom.toISOString(),
    expiresAt: expiresAt.toISOString(),
    kid: kidOf(row.schoolId),
    token,
  };
}

export const getPickupPassOperation = operation(publicRoute, getPickupPass);

const keyRoute = defineRoute({
  method: "get",
  path: "/api/v1/exit-permission/pass-key",
  tag: "Permissions and tasks",
  operationId: "getPickupPassKey",
  summary: "The current school's public key for verifying pickup passes offline (a gate device's set-up)",
  access: permissions.read,
  module: "exit-permissions",
  database: false,
  responses: {
    200: json(
      z
        .object({
          schoolId: z.number().int(),
          kid: z.string().openapi({ description: "The key's id, as passes name it" }),
          alg: z.literal("EdDSA").openapi({ description: "The signature algorithm" }),
          jwk: Jwk,
        })
        .openapi("PassKey"),
      "The school's public key (JWK)",
    ),
  },
});

export async function getPickupPassKey(ctx: SchoolCtx) {
  const school = ctx.schoolId;
  const key = await passKey(ctx.deps.config.authSecret, school);
  return { schoolId: school, kid: key.kid, alg: "EdDSA" as const, jwk: key.jwk };
}

export const getPickupPassKeyOperation = operation(keyRoute, getPickupPassKey);

// --- revocations ------------------------------------------------------------------------------

const Revocations = z
  .object({
    schoolId: z.number().int(),
    date: z.iso.date().openapi({ description: "The school-local date the list is for" }),
    revoked: z.array(z.string()).openapi({
      description:
        "The passes (their jti: the slug) of that day no longer valid: auto pickups confirmed and then withdrawn, cancelled or superseded",
    }),
    issuedAt: z.string().openapi({ description: "When the list was made (ISO 8601): a gate keeps the newest" }),
    kid: z.string().openapi({ description: "The school key that signed it (the passes' key)" }),
    token: z.string().openapi({
      description:
        "The same list as a compact JWS (EdDSA, the passes' key): claims typ 'pass-revocations', school, date, revoked, iat, exp (the end of that school-local day). A gate verifies it like a pass and refuses a pass whose jti it names",
    }),
  })
  .openapi("PickupPassRevocations");

const revocationsRoute = defineRoute({
  method: "get",
  path: "/api/v1/exit-permission/pass-revocations",
  tag: "Permissions and tasks",
  operationId: "listPickupPassRevocations",
  summary: "The day's revoked pickup passes, signed with the passes' key (gate devices fetch it every few minutes)",
  description:
    "A pass verifies offline until its window ends; a decision withdrawn after the family showed it (a restriction, a trusted person withdrawn, the school's withdrawal, a later permission) is named here. Staff (exit-permission.manage) only.",
  access: permissions.manage,
  module: "exit-permissions",
  request: {
    query: z.strictObject({
      date: schoolDate("School-local date; default the school's today", "2026-11-27").optional(),
    }),
  },
  responses: { 200: json(Revocations, "The revoked passes of the day, signed") },
});

export async function listPickupPassRevocations(ctx: SchoolCtx, { query }: InputOf<typeof revocationsRoute>) {
  const school = ctx.schoolId;
  const now = ctx.deps.clock.now();
  // The school's zone is kept per isolate (school/zone.ts): one D1 round trip, the list.
  const timeZone = await schoolZone(ctx);
  const date = query.date ?? dateIn(timeZone, now);
  // exit_permission_date_idx (school_id, date, status): the states as constants, so the index serves them.
  const rows = await ExitPermissions.select(ctx, { slug: exitPermissions.slug })
    .where(
      eq(exitPermissions.date, date),
      sql`${exitPermissions.status} IN ('cancelled', 'superseded', 'withdrawn')`,
      eq(exitPermissions.kind, "auto_pickup"),
      isNotNull(exitPermissions.decidedAt),
    )
    .all();
  const revoked = rows.map((r) => r.slug).sort();
  const end = zonedInstant(addDays(date, 1), "00:00", timeZone);
  const iat = Math.floor(now.getTime() / 1000);
  const token = await signPass(ctx.deps.config.authSecret, school, {
    typ: "pass-revocations",
    school,
    date,
    revoked,
    iat,
    exp: Math.max(iat + 1, Math.floor(end.getTime() / 1000)),
  });
  return { schoolId: school, date, revoked, issuedAt: now.toISOString(), kid: kidOf(school), token };
}

export const listPickupPassRevocationsOperation = operation(revocationsRoute, listPickupPassRevocations);
