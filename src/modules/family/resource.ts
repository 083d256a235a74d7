/**
 * Families: a family number unique in the school, a name, and its members (membership.ts). The
 * reads answer each family with its parents and students; who sees which families is record.ts.
 * Writes need `family.write`.
 */
import { z } from "@hono/zod-openapi";
import { Families, families } from "../../db/schema/family";
import { eq } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { fold } from "../../lib/fold";
import { m } from "../../lib/message";
import { idList } from "../../lib/params";
import { type Filter, IdParams, nonEmpty } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { SAFE_TEXT, text, UNSAFE_TEXT } from "../../lib/text";
import { addFamilyParents, createFamily, removeFamily, updateFamily } from "./membership";
import { permissions } from "./permissions";
import { parentCount, parentLimit, familyResource as resource, withActing } from "./record";

export { addFamilyParents };

/** At most this many ids in one membership list or one validation. */
const MAX_IDS = 50;

const FamilyNumber = text({ max: 50 }).openapi({ example: "F-0042", description: "Unique in the school" });
const Name = text({ max: 200 }).openapi({ example: "García López", description: "The family's name" });
const Ids = (what: string) => idList({ min: 0, max: MAX_IDS, what });

const familyNumberFilter: Filter<string> = {
  schema: text({ max: 50 })
    .optional()
    .openapi({ description: "The family number, whatever its case or accents (f-0001 is F-0001)" }),
  where: (_ctx, v) => eq(families.familyNumberSearch, fold(v)),
  example: "F-0001",
};
const nameFilter: Filter<string> = {
  schema: searchTerm("Part of the family's name"),
  where: (_ctx, v) => contains(families.nameSearch, v),
  example: "Parent",
};

export const listFamilies = resource.list({
  access: permissions.read,
  filters: { familyNumber: familyNumberFilter, name: nameFilter },
  sort: { familyNumber: families.familyNumber, name: families.name, createdAt: families.createdAt },
  summary: "List the current school's families (paginated), oldest first",
  description:
    "With family.read-all, every family of the school; otherwise only the family of the parents the caller " +
    "acts for (themself, and parents whose valid delegate they are). Each family carries its parents and students.",
});

export const getFamily = resource.get({
  access: permissions.read,
  description: "Another school's family, or (without family.read-all) a family not the caller's own, is a 404.",
});

const CreateBody = z.strictObject({
  familyNumber: FamilyNumber,
  name: Name,
  parentIds: Ids("Parent (profile)").optional(),
  studentIds: Ids("Student").optional(),
});

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/family",
  tag: "People",
  operationId: "createFamily",
  summary: "Create a family, optionally with its parents and students",
  description:
    "409 for a family number the school already has, or a parent or student already in another family; " +
    "422 when the parents would exceed the school's parent limit; an id not of this school is a 404.",
  access: permissions.write,
  audit: "family",
  errors: [409, 422],
  examples: {
    409: [
      {
        name: "number",
        summary: "The family number is taken",
        detail:
          "A family with this family number already exists in this school (numbers that differ only in case or accents are the same)",
      },
      {
        name: "member",
        summary: "A parent or student is already in another family",
        detail:
          "Student 42 is already in another family (7); a student in two families is not allowed: take them out of it first",
      },
    ],
    422: "This school allows at most 2 parents per family; the family would have 3",
  },
  request: { body: jsonBody(CreateBody, "FamilyCreate") },
  responses: { 201: json(resource.record, "The new family") },
});

export const createFamilyOperation = operation(createRoute, (ctx, { body }) => createFamily(ctx, body));

const UpdateBody = nonEmpty(
  z.strictObject({
    familyNumber: FamilyNumber.optional(),
    name: Name.optional(),
    parentIds: Ids("Parent (profile)").optional().openapi({ description: "Replaces the family's parents" }),
    studentIds: Ids("Student").optional().openapi({ description: "Replaces the family's students" }),
  }),
);

const updateRoute = defineRoute({
  method: "put",
  path: "/api/v1/family/{id}",
  tag: "People",
  operationId: "updateFamily",
  summary: "Update a family: its number, name, and (replacing them) its parents and students",
  description: "A list given replaces the family's members of that kind (`[]` empties it); the rules of create apply.",
  access: permissions.write,
  audit: "family",
  ifMatch: resource.ifMatch,
  errors: [409, 422],
  examples: {
    409: [
      {
        name: "number",
        summary: "The family number is taken",
        detail:
          "A family with this family number already exists in this school (numbers that differ only in case or accents are the same)",
      },
      {
        name: "member",
        summary: "A parent or student is already in another family",
        detail:
          "Student 42 is already in another family (7); a student in two families is not allowed: take them out of it first",
      },
    ],
    422: "This school allows at most 2 parents per family; the family would have 3",
  },
  request: { params: IdParams, body: jsonBody(UpdateBody, "FamilyUpdate") },
  responses: { 204: noContent },
});

export const updateFamilyOperation = operation(updateRoute, async (ctx, { params, body }) => {
  await updateFamily(ctx, params.id, body);
  return undefined;
});

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/family/{id}",
  tag: "People",
  operationId: "deleteFamily",
  summary: "Delete a family (its parents and students stay, in no family)",
  access: permissions.write,
  audit: "family",
  request: { params: IdParams },
  responses: { 204: noContent },
});

export const deleteFamily = operation(deleteRoute, async (ctx, { params }) => {
  await removeFamily(ctx, params.id);
  return undefined;
});

/** The family number asked for (a query parameter: `/family/members/{familyNumber}` would be ambiguous with `/family/{id}/parent-limit`). */
const NumberQuery = z.strictObject({
  familyNumber: z.string().min(1).max(50).regex(SAFE_TEXT, UNSAFE_TEXT).openapi({
    example: "F-0001",
    description: "A family number, whatever its case or accents (f-0001 is F-0001)",
  }),
});

/** The family with this number (whatever its case or accents), if the caller may see it. */
const byNumber = (ctx: SchoolCtx, familyNumber: string) =>
  resource.scoped(ctx, eq(families.familyNumberSearch, fold(familyNumber)), "read");

const membersRoute = defineRoute({
  method: "get",
  path: "/api/v1/family/members",
  tag: "People",
  operationId: "getFamilyMembers",
  summary: "Get a family and its members by family number",
  description: "404 when the school has no such family, or (without family.read-all) it is not the caller's.",
  access: permissions.read,
  context: withActing,
  examples: { 404: "Family F-0001 not found" },
  request: { query: NumberQuery },
  responses: { 200: json(resource.record, "The family with its parents and students") },
});

/** A family by its number, with its members. */
export async function familyByNumber(ctx: SchoolCtx, { query }: InputOf<typeof membersRoute>) {
  const row = await resource.select(ctx).where(byNumber(ctx, query.familyNumber)).first();
  if (!row) throw notFound(m`Family ${query.familyNumber} not found`);
  return resource.toRecord(ctx, row);
}

export const familyMembers = operation(membersRoute, familyByNumber);

const existsRoute = defineRoute({
  method: "get",
  path: "/api/v1/family/exists",
  tag: "People",
  operationId: "familyExists",
  summary: "Whether the current school has a family with this number",
  description:
    "Only the current school's families count (another school's never shows); without family.read-all, " +
    "only the caller's own family.",
  access: permissions.read,
  context: withActing,
  request: { query: NumberQuery },
  responses: {
    200: json(
      z
        .object({ exists: z.boolean().openapi({ description: "Whether the school has a family with this number" }) })
        .openapi("FamilyExists"),
      "Whether it exists",
    ),
  },
});

export const familyExists = operation(existsRoute, async (ctx, { query }) => {
  const row = await Families.select(ctx, { id: families.id }).where(byNumber(ctx, query.familyNumber)).first();
  return { exists: row !== undefined };
});

const ParentLimit = z
  .object({
    limit: z.number().int().openapi({ example: 2, description: "The school's parent limit per family" }),
    parents: z.number().int().openapi({ example: 1, description: "The family's parents now" }),
    canAdd: z.boolean().openapi({ description: "Whether one more parent may join" }),
  })
  .openapi("FamilyParentLimit");

const parentLimitRoute = defineRoute({
  method: "get",
  path: "/api/v1/family/{id}/parent-limit",
  tag: "People",
  operationId: "getFamilyParentLimit",
  summary: "The school's parent limit for a family, and how many parents it has",
  access: permissions.read,
  context: withActing,
  request: { params: IdParams },
  responses: { 200: json(ParentLimit, "The limit and the count") },
});

export const familyParentLimit = operation(parentLimitRoute, async (ctx, { params }) => {
  const row = await Families.select(ctx, { limit: parentLimit(ctx), parents: parentCount })
    .where(resource.scoped(ctx, eq(families.id, params.id), "read"))
    .first();
  if (!row) throw notFound(m`Family ${params.id} not found`);
  return { limit: row.limit, parents: row.parents, canAdd: row.parents < row.limit };
});

const ValidateBody = z.strictObject({
  ids: idList({ max: 100, what: "Family" }).openapi({
    example: [1, 2],
    description: "Family ids, at most 100, each once",
  }),
});

const validateRoute = defineRoute({
  method: "post",
  path: "/api/v1/family/validate",
  tag: "People",
  operationId: "validateFamilies",
  summary: "Which of these family ids exist in the current school",
  description:
    "Reads only (a POST for the list in the body). Another school's ids, and (without family.read-all) " +
    "families not the caller's, are missing.",
  access: permissions.read,
  context: withActing,
  request: { body: jsonBody(ValidateBody, "FamilyValidate") },
  responses: {
    200: json(
      z
        .object({
          valid: z.array(z.number().int()).openapi({ description: "The ids that are families of this school" }),
          missing: z.array(z.number().int()).openapi({ description: "The ids that are not" }),
        })
        .openapi("FamilyValidation"),
      "The ids found and the ids missing, in the order given",
    ),
  },
  extensions: { "x-read-only": true },
});

export const validateFamilies = operation(validateRoute, async (ctx, { body }) => {
  const rows = await Families.select(ctx, { id: families.id })
    .where(resource.scoped(ctx, inList(families.id, body.ids), "read"))
    .all();
  const found = new Set(rows.map((r) => r.id));
  return { valid: body.ids.filter((i) => found.has(i)), missing: body.ids.filter((i) => !found.has(i)) };
});
