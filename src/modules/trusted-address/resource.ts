/**
 * Trusted addresses (`/api/v1/trusted-address`): where a parent asks the bus to drop a student off.
 * The same life as a trusted person, from the same definition (`defineTrustedRequests`,
 * ../trusted-person/requests.ts): registered by a parent for their own children or by staff, changed
 * while pending, approved or rejected by the school (`PATCH .../status`, which here may also set the
 * route stop). Visibility: ../trusted-person/common.ts. This file declares only the address fields.
 */
import { z } from "@hono/zod-openapi";
import { TrustedAddresses } from "../../db/schema/trusted-address";
import { m } from "../../lib/message";
import { type Address, AddressRecord, addressFields, toAddress } from "../address/api";
import { defineTrustedRequests, RecordId } from "../trusted-person/api";

/** The address fields of a record and of a row (their id and timestamps are the trusted record's). */
const { id: _id, createdAt: _created, updatedAt: _updated, ...addressShape } = AddressRecord.shape;
const ownAddress = ({ id: _, createdAt: _c, updatedAt: _u, ...address }: Address) => address;

const trusted = defineTrustedRequests({
  name: "trustedAddress",
  plural: "trustedAddresses",
  label: m`Trusted address`,
  pluralLabel: "trusted addresses",
  fact: "trusted-address",
  path: "/api/v1/trusted-address",
  tag: "Transport",
  data: TrustedAddresses,
  fields: {
    ...addressShape,
    routeStopId: z.number().int().nullable().openapi({ description: "The route stop serving it, once set" }),
  },
  toRecord: (_ctx, row) => ({ ...ownAddress(toAddress(row)), routeStopId: row.routeStopId }),
  create: addressFields,
  update: z.object({
    street: addressFields.street.optional(),
    number: addressFields.number,
    neighborhood: addressFields.neighborhood,
    city: addressFields.city.optional(),
    state: addressFields.state,
    postalCode: addressFields.postalCode,
    country: addressFields.country.optional(),
    latitude: addressFields.latitude,
    longitude: addressFields.longitude,
  }),
  // The decision may also set the route stop.
  decision: {
    fields: {
      routeStopId: RecordId.nullable()
        .optional()
        .openapi({ description: "The route stop that will serve it (routes come later: not checked yet)" }),
    },
    set: ({ routeStopId }) => (routeStopId === undefined ? {} : { routeStopId }),
  },
});

export const trustedAddressResource = trusted.resource;

export const { operations } = trusted;
