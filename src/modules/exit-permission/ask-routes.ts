/**
 * Asking: `POST /api/v1/exit-permission` (any kind, named by `kind`), one route per kind without
 * `kind` (`/route-change`, `/no-after-school`, `/auto-pickup`, `/absence`), and `/dry-run` (the
 * same verdict, nothing written). At most two D1 round trips: the snapshot, then one batch.
 */
import { z } from "@hono/zod-openapi";
import type { SchoolCtx } from "../../lib/context";
import { m, zodMessage } from "../../lib/message";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { permissions } from "./permissions";
import { ExitPermissionRecord, permissionDate, TOO_LATE } from "./resource";
import { type Ask, askOne, dryRun } from "./service";

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const common = {
  studentId: Id.openapi({ example: 1, description: "A parent: one of their own children (else 404)" }),
  date: permissionDate(),
  reason: text({ max: 500 }).optional().openapi({ example: "Grandma collects her" }),
};

const routeTarget = {
  routeId: Id.optional().openapi({ description: "The route the student takes home that day" }),
  stopId: Id.optional().openapi({
    description: "The stop where the student leaves the bus (alone: another stop of their own route)",
  }),
  trustedAddressId: Id.optional().openapi({ description: "An approved trusted address of the student" }),
};

const pickupTarget = {
  pickupParentId: Id.optional().openapi({
    description: "The parent who collects (a parent asking may leave it out: themself)",
  }),
  trustedPersonId: Id.optional().openapi({ description: "An approved trusted person of the student who collects" }),
};

type Targets = { routeId?: number; stopId?: number; trustedAddressId?: number };
const namesTarget = (v: Targets) =>
  v.routeId !== undefined || v.stopId !== undefined || v.trustedAddressId !== undefined;
const TARGET_MESSAGE = "A route change names a stop (stopId, with routeId for another route) or a trusted address";
const routeRefined = <T extends z.ZodObject>(o: T) =>
  o.refine((v: Targets) => namesTarget(v), { message: TARGET_MESSAGE, path: ["stopId"] });
const pickupRefined = <T extends z.ZodObject>(o: T) =>
  o.refine((v: { pickupParentId?: number; trustedPersonId?: number }) => !(v.pickupParentId && v.trustedPersonId), {
    ...zodMessage(m`Name one collector: pickupParentId or trustedPersonId`),
    path: ["trustedPersonId"],
  });

const RouteChange = routeRefined(z.strictObject({ ...common, ...routeTarget }));
const NoAfterSchool = z.strictObject(common);
const AutoPickup = pickupRefined(z.strictObject({ ...common, ...pickupTarget }));
const Absence = z.strictObject(common);

/** The kind a body of `POST /exit-permission` asks for: it says which other fields it takes. */
const kindOf = <K extends string>(kind: K, what: string) =>
  z.literal(kind).openapi({ description: `${kind}: ${what}` });
const AnyKind = z.discriminatedUnion("kind", [
  routeRefined(
    z.strictObject({
      kind: kindOf("route_change", "another route and stop, or a trusted address"),
      ...common,
      ...routeTarget,
    }),
  ),
  z.strictObject({ kind: kindOf("no_after_school", "skips the after-school program"), ...common }),
  pickupRefined(
    z.strictObject({
      kind: kindOf("auto_pickup", "collected by a guardian or a trusted person"),
      ...common,
      ...pickupTarget,
    }),
  ),
  z.strictObject({ kind: kindOf("absence", "does not come to school"), ...common }),
]);

/** A failed rule with its facts, as the docs page shows one (not `additionalProp1`). */
const RULE_FAILURE_EXAMPLE = TOO_LATE.members.failures[0];

const Failure = z
  .looseObject({
    code: z.string().openapi({ example: "too-late", description: "The rule, stable across versions and languages" }),
    message: z.string().openapi({ description: "Why, in the caller's language" }),
  })
  .openapi("ExitPermissionRuleFailure", {
    description: "A rule the ask did not pass: its code, why, and the facts behind it as further fields",
    example: RULE_FAILURE_EXAMPLE,
  });

const Created = ExitPermissionRecord.extend({
  warnings: z
    .array(Failure)
    .openapi({ description: "Rules staff may pass (too late, too far ahead), kept as warnings" }),
  deadline: z
    .string()
    .nullable()
    .openapi({ example: "2026-11-25T13:00:00-06:00", description: "The day's deadline for changes" }),
}).openapi("ExitPermissionCreated");

// No acting-for loader: the snapshot reads the caller's delegations itself, so a create is two
// round trips for everyone (the snapshot, then the write).
const meta = {
  tag: "Permissions and tasks" as const,
  access: permissions.write,
  module: "exit-permissions" as const,
};

const DESCRIPTION =
  "The rules decide (every failed rule in one 422, `failures`); a school that confirms automatically confirms it at once (a route change then takes its seat). A parent asks for their own children; naming another family's child (an auto pickup by themself) waits for that family (`awaiting_family`).";

const createAny = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/exit-permission",
  operationId: "createExitPermission",
  summary: "Ask for an exit permission (any kind)",
  description: DESCRIPTION,
  audit: "exit-permission",
  errors: [409, 422],
  examples: { 409: "The student already has a confirmed exit permission that day", 422: TOO_LATE },
  request: { body: jsonBody(AnyKind, "ExitPermissionCreate") },
  responses: { 201: json(Created, "The permission asked") },
});

export const createExitPermission = (ctx: SchoolCtx, { body }: InputOf<typeof createAny>) => askOne(ctx, body);
export const createExitPermissionOperation = operation(createAny, createExitPermission);

/** The route of one kind: its body without `kind`. */
function kindRoute<B extends z.ZodType>(path: string, operationId: string, summary: string, body: B, name: string) {
  return defineRoute({
    ...meta,
    method: "post",
    path: `/api/v1/exit-permission/${path}`,
    operationId,
    summary,
    description: DESCRIPTION,
    audit: "exit-permission",
    errors: [409, 422],
    examples: { 409: "The student already has a confirmed exit permission that day", 422: TOO_LATE },
    request: { body: jsonBody(body, name) },
    responses: { 201: json(Created, "The permission asked") },
  });
}

const routeChange = kindRoute(
  "route-change",
  "createRouteChangeExitPermission",
  "Ask for a route change (another route and stop, another stop, or a trusted address)",
  RouteChange,
  "RouteChangeCreate",
);
const noAfterSchool = kindRoute(
  "no-after-school",
  "createNoAfterSchoolExitPermission",
  "Ask for no after-school program that day",
  NoAfterSchool,
  "NoAfterSchoolCreate",
);
const autoPickup = kindRoute(
  "auto-pickup",
  "createAutoPickupExitPermission",
  "Ask for a pickup by a parent or an approved trusted person",
  AutoPickup,
  "AutoPickupCreate",
);
const absence = kindRoute("absence", "createAbsenceExitPermission", "Report an absence", Absence, "AbsenceCreate");

// Written, it is told (`writeAsks`): confirmed at once, and the permission it superseded.
const as =
  (kind: Ask["kind"]) =>
  (ctx: SchoolCtx, { body }: { body: Omit<Ask, "kind"> }) =>
    askOne(ctx, { ...body, kind });

export const createRouteChangeOperation = operation(routeChange, as("route_change"));
export const createNoAfterSchoolOperation = operation(noAfterSchool, as("no_after_school"));
export const createAutoPickupOperation = operation(autoPickup, as("auto_pickup"));
export const createAbsenceOperation = operation(absence, as("absence"));

const DryRunAnswer = z
  .object({
    ok: z.boolean().openapi({ description: "Whether the permission would be accepted" }),
    failures: z.array(Failure).openapi({ description: "Every rule that would refuse it; [] when ok" }),
    warnings: z.array(Failure).openapi({ description: "Rules staff may pass (too late, too far ahead)" }),
    deadline: z
      .string()
      .nullable()
      .openapi({ example: "2026-11-25T13:00:00-06:00", description: "The day's deadline for changes" }),
    dismissal: z
      .string()
      .nullable()
      .openapi({ example: "15:00", description: "The student's dismissal that day, HH:mm" }),
    latest: z.string().nullable().openapi({ description: "The last date changes may be asked for now" }),
    status: z
      .enum(["awaiting_family", "pending", "confirmed"])
      .openapi({ description: "The status it would start in" }),
    seats: z
      .object({
        seats: z.number().int().openapi({ description: "Seats of the route's vehicle" }),
        available: z.number().int().openapi({ description: "Seats left that day" }),
      })
      .nullable()
      .openapi({ description: "The route's seats that day (a route change); null otherwise" }),
    others: z
      .array(
        z.object({
          id: z.number().int().openapi({ description: "The other permission's id" }),
          kind: z.string().openapi({ description: "Its kind" }),
          status: z.string().openapi({ description: "Its status" }),
        }),
      )
      .openapi({ description: "The student's other open permissions that day" }),
  })
  .openapi("ExitPermissionDryRun");

const dryRunRoute = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/exit-permission/dry-run",
  operationId: "dryRunExitPermission",
  summary: "Check an exit permission against the rules without asking for it",
  request: { body: jsonBody(AnyKind, "ExitPermissionDryRunBody") },
  responses: { 200: json(DryRunAnswer, "The verdict; nothing is written") },
  extensions: { "x-read-only": true },
});

export const dryRunExitPermission = (ctx: SchoolCtx, { body }: InputOf<typeof dryRunRoute>) => dryRun(ctx, body);
export const dryRunExitPermissionOperation = operation(dryRunRoute, dryRunExitPermission);
