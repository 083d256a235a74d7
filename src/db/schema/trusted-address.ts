/**
 * Trusted addresses: where a parent asks the bus to drop a student off (the address columns of
 * src/db/schema/address.ts). The school decides like for trusted people; only approved ones
 * count. `route_stop_id` links the stop once routes exist (no foreign key until then).
 */
import { integer, sqliteTable } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { addressColumns } from "./address";
import { record } from "./core";
import { decision, requestColumns, requestIndexes } from "./trusted-person";

export const trustedAddresses = sqliteTable(
  "trusted_address",
  {
    ...record,
    ...requestColumns(),
    ...addressColumns(),
    /** The route stop serving it (routes come later: no foreign key yet). */
    routeStopId: integer("route_stop_id"),
    ...decision(),
  },
  (t) => requestIndexes("trusted_address", t),
);

export const TrustedAddresses = dataTable(trustedAddresses, { entity: "trusted-address" });
