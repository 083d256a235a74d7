/**
 * Addresses: the current school's addresses. The school's own address
 * (`PUT /api/v1/school/{id}/address`) points at one of them; that one cannot be deleted while it
 * does (409), checked in the DELETE statement itself so no school is left pointing at nothing.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Addresses, addresses } from "../../db/schema/address";
import { Schools, schools } from "../../db/schema/core";
import { eq, notExists, type SQL } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { conflict, invalidBody } from "../../lib/errors";
import { m } from "../../lib/message";
import { defineResource, IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, noContent, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { permissions } from "./permissions";
import { AddressRecord, addressFields, toAddress } from "./record";

export const addressResource = defineResource({
  name: "address",
  plural: "addresses",
  label: m`Address`,
  path: "/api/v1/address",
  tag: "Schools",
  scope: "school",
  data: Addresses,
  record: AddressRecord,
  toRecord: (_ctx, row) => toAddress(row),
});

/**
 * Latitude and longitude go together: both numbers or both null. An update that sends one sends
 * the other (the pair is written together, never half of a position).
 */
function coordinates(input: { latitude?: number | null; longitude?: number | null }) {
  const has = { latitude: input.latitude != null, longitude: input.longitude != null };
  const sent = { latitude: input.latitude !== undefined, longitude: input.longitude !== undefined };
  if (has.latitude === has.longitude && sent.latitude === sent.longitude) return;
  const path =
    has.latitude !== has.longitude
      ? has.latitude
        ? "longitude"
        : "latitude"
      : sent.latitude
        ? "longitude"
        : "latitude";
  const message = m`Send latitude and longitude together (both numbers, or both null)`;
  throw invalidBody([{ path, message }]);
}

const { street, city, country, ...optional } = addressFields;

export const listAddresses = addressResource.list({
  access: permissions.read,
  filters: {
    // address_city_idx (school_id, city)
    city: {
      schema: searchTerm("Part of the city name"),
      where: (_ctx, v: string) => contains(addresses.citySearch, v),
      example: "Mexico",
    },
  },
  sort: { city: addresses.city, createdAt: addresses.createdAt },
  summary: "List the current school's addresses (paginated)",
});

export const getAddress = addressResource.get({ access: permissions.read });

export const createAddress = addressResource.create({
  access: permissions.write,
  input: z.object({ street, city, country, ...optional }),
  values: (_ctx, { body }) => {
    coordinates(body);
    return body;
  },
  summary: "Create an address of the current school",
});

export const updateAddress = addressResource.update({
  access: permissions.write,
  input: z.object({ street: street.optional(), city: city.optional(), country: country.optional(), ...optional }),
  values: (_ctx, { body }) => {
    coordinates(body);
    return body;
  },
});

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/address/{id}",
  tag: "Schools",
  operationId: "deleteAddress",
  summary: "Delete an address (not the one the school points at: 409)",
  access: permissions.write,
  audit: "address",
  errors: [409],
  examples: {
    409: "Address 42 is the school's address; point the school at another address (PUT /api/v1/school/{id}/address) first",
  },
  request: { params: IdParams },
  responses: { 204: noContent },
});

/** Not the address a school points at (school_address_idx: one lookup). */
const unused = (ctx: SchoolCtx): SQL =>
  notExists(Schools.select(ctx, { id: schools.id }).where(eq(schools.addressId, addresses.id)));

/** Deletes an address of the school unless it is the school's address (409), in one batch. */
export async function removeAddress(ctx: SchoolCtx, { params: { id } }: InputOf<typeof deleteRoute>) {
  try {
    await new Batch(ctx).add(...addressResource.writes.delete(ctx, id, null, unused(ctx))).commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    await addressResource.find(ctx, id); // 404 when it is not (or no longer) here
    throw conflict(
      m`Address ${id} is the school's address; point the school at another address (PUT /api/v1/school/{id}/address) first`,
    );
  }
}

export const deleteAddress = operation(deleteRoute, removeAddress);
