/**
 * Schools: the tenants themselves. The `school` table is the platform's
 * registry of tenants, so its operations are platform-scoped and narrow the rows per caller:
 * holders of `school.write` (the platform's super-admins) reach every school; everyone else only
 * the school they act in (another school's id is a 404). Creating, listing and deleting schools
 * need `school.write`; updating one's own school needs `school.update` (school admins).
 */
import { z } from "@hono/zod-openapi";
import { placeSchool } from "../../db/placement";
import { columnsOf } from "../../db/query";
import { Addresses, addresses } from "../../db/schema/address";
import { Schools, schools } from "../../db/schema/core";
import { openForNewSchools, otherDatabases, PLATFORM, shardOf } from "../../db/shards";
import { eq, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { type Ctx, now } from "../../lib/context";
import { invalidBody } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { LANGUAGES } from "../../lib/language";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { Listing } from "../../lib/pagination";
import { Phone } from "../../lib/phone";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { serve } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { AddressRecord } from "../address/api";
import { Email, LevelSchema, LevelsInput, LogoKey, logoOf, readLevels, storeLevels, TimeZone } from "./fields";
import { permissions } from "./permissions";
import { forgetZone } from "./zone";

/** The school's language (src/lib/language.ts): its people's default, and the answers' when no one names one. */
const SchoolLanguage = z.enum(LANGUAGES).openapi({
  example: "es",
  description:
    "The language of answers to its members when neither the request (Accept-Language) nor the user names one, and of new people it adds; default es. Members' tokens carry it from their next refresh",
});

export const SchoolRecord = RecordBase.extend({
  name: z.string().openapi({ example: "Northside Demo School", description: "The school's name" }),
  timeZone: z.string().openapi({ example: "America/Mexico_City", description: "IANA time zone" }),
  language: SchoolLanguage,
  levels: z
    .array(LevelSchema)
    .openapi({ description: "Levels offered, in order: preschool, elementary, middle, high" }),
  email: z.string().nullable().openapi({ example: "office@school.example", description: "The school's contact email" }),
  phone: z.string().nullable().openapi({ example: "+525555550100", description: "E.164" }),
  logo: z.string().nullable().openapi({
    example: "1/logo/logo-2f1c.png",
    description: "Object key of the logo (PUT /api/v1/school/{id}/logo/signed-url gives URLs for it); null: none",
  }),
  addressId: z.number().int().nullable().openapi({ description: "The school's address (an address of the school)" }),
  address: orNull(AddressRecord),
});

export type School = z.infer<typeof SchoolRecord>;

/**
 * The school's address as one JSON value, read by primary key in the same query. The address must
 * be the school's own: `address_id` has no foreign key (see src/db/schema/core.ts), so the join says so.
 */
const addressJson = sql<string | null>`(SELECT json_object(${sql.join(
  Object.entries(columnsOf(addresses)).map(([key, column]) => sql`${key}, ${column}`),
  sql`, `,
)}) FROM ${addresses} WHERE ${addresses.id} = ${schools.addressId} AND ${Addresses.ofSchool(schools.id)})`;

type SchoolRow = typeof schools.$inferSelect & { address: string | null };

export function toSchool(row: SchoolRow): School {
  return {
    ...timestamps(row),
    name: row.name,
    timeZone: row.timeZone,
    language: row.language,
    levels: readLevels(row.levels),
    email: row.email,
    phone: row.phone,
    logo: row.logo,
    addressId: row.addressId,
    // The sub-select builds the address row; the record is its columns but the school.
    address: row.address === null ? null : parseJson(AddressRecord, row.address),
  };
}

/** Holders of school.write reach every school; everyone else the school they act in. */
export function visibleSchools(ctx: Ctx): SQL | undefined {
  if (ctx.can(permissions.write)) return undefined;
  // A platform route resolves the school a member acts in; without one they see none.
  return ctx.schoolId === null ? sql`0` : eq(schools.id, ctx.schoolId);
}

export const schoolResource = defineResource({
  name: "school",
  plural: "schools",
  label: m`School`,
  path: "/api/v1/school",
  tag: "Schools",
  scope: "platform",
  data: Schools,
  record: SchoolRecord,
  view: { fields: { ...columnsOf(schools), address: addressJson } },
  toRecord: (_ctx, row) => toSchool(row),
  visibleTo: visibleSchools,
  // The school's own row is kept in its shard too (its anchor: docs/scaling.md "Anchors"); the
  // platform's row is written first, then the whole row there (nothing when it is on `DB`).
  anchors: async (ctx, id) => [await shardOf(ctx.deps, id)],
});

const Name = text({ max: 200 }).openapi({ example: "Northside Demo School" });

const listOnPlatform = schoolResource.list({
  access: permissions.write,
  filters: {
    name: {
      schema: searchTerm("Part of the school name"),
      where: (_ctx, v: string) => contains(schools.nameSearch, v),
      example: "Demo",
    },
  },
  sort: { name: schools.name, createdAt: schools.createdAt },
  summary: "List every school (paginated; platform: school.write)",
});

/**
 * The platform's list, and the addresses of its schools on shards: a school's addresses are its
 * rows, in its database, so the platform's statement finds none there. One read per shard of the
 * page's missing addresses (by id: each database's ids are its own), in parallel, merged
 * (docs/scaling.md "Shards", group F); none when the page misses none.
 */
async function listWithAddresses(ctx: Ctx, input: Parameters<typeof listOnPlatform.run>[1]) {
  const page = await listOnPlatform.run(ctx, input);
  const missing = new Map<number, number>();
  for (const school of page.data) {
    if (school.addressId !== null && school.address === null) missing.set(school.addressId, school.id);
  }
  if (missing.size === 0) return page;
  const ids = [...missing.keys()];
  const found = (
    await Promise.all(
      otherDatabases(ctx).map((on) =>
        Addresses.everySchool(on, () => columnsOf(addresses))
          .where(inList(addresses.id, ids))
          .all(),
      ),
    )
  ).flat();
  // The address must be the school's own, as the platform's sub-select says.
  const byId = new Map(found.filter((row) => missing.get(row.id) === row.schoolId).map((row) => [row.id, row]));
  const data = page.data.map((school) => {
    const row = school.addressId === null ? undefined : byId.get(school.addressId);
    return row && school.address === null
      ? { ...school, address: parseJson(AddressRecord, JSON.stringify(row)) }
      : school;
  });
  return new Listing(data, page.total, page.page);
}

export const listSchools = {
  ...serve(listOnPlatform.route, listWithAddresses),
  route: listOnPlatform.route,
  run: listWithAddresses,
};

const getOnPlatform = schoolResource.get({
  access: permissions.read,
  summary: "Get a school by id (members: only the school they act in)",
});

/**
 * A school on a shard has its addresses there (a school's rows), its row in `DB`: the row read from
 * the platform's, then its address from the school's database (docs/scaling.md "Shards", group C).
 */
async function readSchool(ctx: Ctx, input: Parameters<typeof getOnPlatform.run>[1]): Promise<School> {
  const school = await getOnPlatform.run(ctx, input);
  if (school.addressId === null || school.address !== null) return school;
  if ((await shardOf(ctx.deps, school.id)) === PLATFORM) return school;
  const row = await Addresses.select({ ...ctx, schoolId: school.id })
    .where(eq(addresses.id, school.addressId))
    .first();
  return row ? { ...school, address: parseJson(AddressRecord, JSON.stringify(row)) } : school;
}

export const getSchool = { ...serve(getOnPlatform.route, readSchool), route: getOnPlatform.route, run: readSchool };

export const createSchool = schoolResource.create({
  access: permissions.write,
  input: z.object({
    name: Name,
    timeZone: TimeZone,
    language: SchoolLanguage.optional(),
    levels: LevelsInput,
    email: Email.nullable().optional(),
    phone: Phone.nullable().optional(),
  }),
  values: (_ctx, { body }) => ({ ...body, levels: storeLevels(body.levels) }),
  // Its database: the least-loaded shard that takes new schools (docs/scaling.md "Shards").
  also: (ctx, { id }) => [placeSchool(ctx.deps.db, id, now(ctx), openForNewSchools(ctx.deps))],
  summary: "Create a school (platform: school.write)",
  description:
    "Its address is an address of the new school: create it with POST /api/v1/address (X-School-Id: the new id), " +
    "then PUT /api/v1/school/{id}/address. Its logo: PUT /api/v1/school/{id}/logo/signed-url.",
});

export const updateSchool = schoolResource.update({
  access: permissions.update,
  input: z.object({
    name: Name.optional(),
    timeZone: TimeZone.optional(),
    language: SchoolLanguage.optional(),
    levels: LevelsInput.optional(),
    email: Email.nullable().optional(),
    phone: Phone.nullable().optional(),
    logo: LogoKey.nullable().optional(),
  }),
  values: (_ctx, { id, body: { levels, ...input } }) => {
    if (input.timeZone !== undefined) forgetZone(id);
    if (input.logo != null && !logoOf(input.logo, id)) {
      const message = m`Must start with ${id}/logo/ (this school's logos)`;
      throw invalidBody([{ path: "logo", message }]);
    }
    return levels === undefined ? input : { ...input, levels: storeLevels(levels) };
  },
  summary: "Update a school (school admins: their own; platform: any)",
});
