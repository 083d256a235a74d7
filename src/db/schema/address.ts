/** Addresses of a school (the school's own address points at one of them). */
import { index, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

/** The columns of a postal address, the same wherever one is stored (a school's, a trusted one). */
export const addressColumns = () => ({
  street: text("street").notNull(),
  number: text("number"),
  neighborhood: text("neighborhood"),
  city: text("city").notNull(),
  state: text("state"),
  postalCode: text("postal_code"),
  /** ISO 3166-1 alpha-2, upper case. */
  country: text("country").notNull(),
  latitude: real("latitude"),
  longitude: real("longitude"),
});

export const addresses = searchable(
  sqliteTable(
    "address",
    {
      ...record,
      schoolId: schoolId(),
      ...addressColumns(),
      citySearch: searchCopy("city"),
    },
    (t) => [index("address_created_idx").on(t.schoolId, t.createdAt), index("address_city_idx").on(t.schoolId, t.city)],
  ),
  { city: "citySearch" },
);

export const Addresses = dataTable(addresses, { entity: "address" });
