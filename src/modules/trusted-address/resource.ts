/**
 * Trusted addresses (`/api/v1/trusted-address`): where a parent asks the bus to drop a student off.
 * The same life as a trusted person (src/modules/trusted-person/resource.ts): registered by a
 * parent for their own children or by staff, changed while pending, approved or rejected by the
 * school (`PATCH .../status`, which may also set the route stop). Visibility: ../trusted-person/common.ts.
 */
import { z } from "@hono/zod-openapi";
import { defineResource, type Filter, RecordBase, timestamps } from "../../lib/resource";
import { operation } from "../../lib/route";
import { addressFields } from "../address/record";
import {
  type ActingCtx,
  actingCtx,
  DecisionBody,
  decided,
  decisionFields,
  decisionOf,
  notPending,
  RecordId,
  registrant,
  statusFilter,
  studentIdFilter,
  visibleThrough,
} from "../trusted-person/common";
import { permissions } from "../trusted-person/permissions";
import { trustedAddresses } from "./schema";

const Record = RecordBase.extend({
  studentId: z.number().int().openapi({ example: 1 }),
  parentId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The parent profile that registered it; null when the school did" }),
  street: z.string(),
  number: z.string().nullable(),
  neighborhood: z.string().nullable(),
  city: z.string(),
  state: z.string().nullable(),
  postalCode: z.string().nullable(),
  country: z.string().openapi({ example: "MX" }),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
  routeStopId: z.number().int().nullable().openapi({ description: "The route stop serving it, once set" }),
  ...decisionFields,
});

export const trustedAddressResource = defineResource({
  name: "trustedAddress",
  plural: "trustedAddresses",
  label: "Trusted address",
  entity: "trusted-address",
  path: "/api/v1/trusted-address",
  tag: "Transport",
  scope: "school",
  table: trustedAddresses,
  record: Record,
  toRecord: (row) => ({
    ...timestamps(row),
    studentId: row.studentId,
    parentId: row.parentId,
    street: row.street,
    number: row.number,
    neighborhood: row.neighborhood,
    city: row.city,
    state: row.state,
    postalCode: row.postalCode,
    country: row.country,
    latitude: row.latitude,
    longitude: row.longitude,
    routeStopId: row.routeStopId,
    status: row.status,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
    reason: row.reason,
  }),
  visibleTo: visibleThrough(trustedAddresses.studentId),
});

const resource = trustedAddressResource;

const filters = {
  studentId: studentIdFilter(trustedAddresses.studentId) satisfies Filter<number>,
  status: statusFilter(trustedAddresses.status) satisfies Filter<string>,
};

const list = resource.list({
  access: permissions.read,
  filters,
  summary: "List trusted addresses (paginated), oldest first",
  description: "Staff see the school's; a parent (or their delegate) those of their own children.",
});
export const listTrustedAddresses = operation(list.route, async (c) =>
  c.json(await list.run(await actingCtx(c), c.req.valid("query"), c.req.url), 200),
);

const get = resource.get({ access: permissions.read });
export const getTrustedAddress = operation(get.route, async (c) =>
  c.json(await get.run(await actingCtx(c), c.req.valid("param").id), 200),
);

const CreateBody = z.object({
  studentId: RecordId.openapi({ example: 1, description: "A parent: one of their own children (else 404)" }),
  parentId: RecordId.optional().openapi({
    description: "The registering parent: staff may name a guardian of the student; a parent is that themself",
  }),
  ...addressFields,
});

const create = resource.create({
  access: permissions.write,
  input: CreateBody,
  values: async ({ studentId, parentId, ...address }, ctx) => ({
    studentId,
    parentId: await registrant(ctx as ActingCtx, studentId, parentId),
    ...address,
  }),
  summary: "Register a trusted address for a student (pending until the school decides)",
  description: "A parent for their own children only (another student is a 404), staff for any student of the school.",
  errors: [422],
});
export const createTrustedAddress = operation(create.route, async (c) =>
  c.json(await create.run(await actingCtx(c), c.req.valid("json")), 201),
);

const UpdateBody = z.object({
  street: addressFields.street.optional(),
  number: addressFields.number,
  neighborhood: addressFields.neighborhood,
  city: addressFields.city.optional(),
  state: addressFields.state,
  postalCode: addressFields.postalCode,
  country: addressFields.country.optional(),
  latitude: addressFields.latitude,
  longitude: addressFields.longitude,
});

const update = resource.update({
  access: permissions.write,
  input: UpdateBody,
  summary: "Change a pending trusted address (409 once decided)",
});
/** Changes the fields sent, only while pending: the state is part of the UPDATE's condition. */
export async function updateTrustedAddress(ctx: ActingCtx, id: number, input: z.output<typeof UpdateBody>) {
  await resource.change(ctx, id, {
    action: "update",
    set: input,
    from: { column: trustedAddresses.status, states: ["pending"] },
    conflict: notPending("Trusted address", id),
  });
}
export const updateTrustedAddressOperation = operation(update.route, async (c) => {
  await updateTrustedAddress(await actingCtx(c), c.req.valid("param").id, c.req.valid("json"));
  return c.body(null, 204);
});

const remove = resource.delete({ access: permissions.write, summary: "Delete (withdraw) a trusted address" });
export const deleteTrustedAddress = operation(remove.route, async (c) => {
  await remove.run(await actingCtx(c), c.req.valid("param").id);
  return c.body(null, 204);
});

const AddressDecision = DecisionBody.extend({
  routeStopId: RecordId.nullable()
    .optional()
    .openapi({ description: "The route stop that will serve it (routes come later: not checked yet)" }),
});

const decide = resource.action({
  name: "status",
  verb: "decide",
  method: "patch",
  access: permissions.review,
  input: AddressDecision,
  from: { column: trustedAddresses.status, states: ["pending"] },
  conflict: (id) => notPending("Trusted address", id),
  set: (ctx, { routeStopId, ...input }) => ({
    ...decided(ctx, input),
    ...(routeStopId === undefined ? {} : { routeStopId }),
  }),
  summary: "Approve or reject a pending trusted address (update status)",
  description:
    "Records who decided, when and why. A request already decided is a 409; of two racing decisions one wins.",
});
export const decideTrustedAddress = operation(decide.route, async (c) =>
  c.json(await decide.run(await actingCtx(c), c.req.valid("param").id, decisionOf(c, AddressDecision)), 200),
);
