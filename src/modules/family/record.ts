/**
 * A family as the API answers it (its parents and students read in the same query), who may see
 * which families, and the school's parent limit.
 *
 * Visibility: `family.read` opens the reads (403 without); holders of `family.read-all` (school
 * admins, staff) see the school's families, everyone else only the family of the parents they act
 * for (`actingFor`: themself and the parents whose valid delegate they are), which the resource's
 * context loader reads once per request.
 */
import { z } from "@hono/zod-openapi";
import { Families, families } from "../../db/schema/family";
import { Parents, parents } from "../../db/schema/parent";
import { SchoolConfigurations, schoolConfigurations } from "../../db/schema/school-configuration";
import { asc, desc, lte, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { parseJson } from "../../lib/json";
import { LEVELS } from "../../lib/levels";
import { m } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { actingLoader } from "../delegate/api";
import { columnsAs, copyJoin, identity } from "../user/api";
import { permissions } from "./permissions";

/** When the school has no configuration at all: the column's default. */
export const DEFAULT_PARENT_LIMIT = 2;

const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
const STUDENT_STATUSES = ["active", "inactive", "graduated"] as const;

const FamilyParent = z
  .object({
    id: z.number().int().openapi({ example: 1, description: "The parent profile's id" }),
    userId: z.number().int().openapi({ example: 4 }),
    firstName: z.string().openapi({ example: "Paula" }),
    lastName: z.string().openapi({ example: "Parent" }),
    relationship: z.enum(RELATIONSHIPS),
  })
  .openapi("FamilyParent");

const FamilyStudent = z
  .object({
    id: z.number().int().openapi({ example: 1 }),
    firstName: z.string().openapi({ example: "Pablo" }),
    lastName: z.string().openapi({ example: "Parent" }),
    level: z.enum(LEVELS).nullable(),
    status: z.enum(STUDENT_STATUSES).openapi({ description: "active, inactive or graduated" }),
  })
  .openapi("FamilyStudent");

const FamilyRecord = RecordBase.extend({
  familyNumber: z.string().openapi({ example: "F-0001" }),
  name: z.string().openapi({ example: "Parent family", description: "The family's name" }),
  parents: z.array(FamilyParent).openapi({ description: "The family's parents, by id" }),
  students: z.array(FamilyStudent).openapi({ description: "The family's students (not deleted ones), by id" }),
  parentCount: z.number().int().openapi({ example: 1, description: "How many parents the family has" }),
  studentCount: z.number().int().openapi({ example: 1, description: "How many students (not deleted) it has" }),
});

/**
 * The outer family row, always qualified: drizzle writes a column of a one-table select unqualified
 * (`"id"`), which inside a sub-select would name the sub-select's own table.
 */
export const FAMILY_ID = sql.raw(`"family"."id"`);

/** The parents of the outer family, counted (`parent_family_idx`). */
export const parentCount = sql<number>`(SELECT count(*) FROM parent AS p WHERE p.family_id = ${FAMILY_ID})`;

/**
 * The family's parents as JSON (their names as this school knows them: src/modules/user/identity.ts),
 * in id order: the index `parent_family_idx (family_id)` holds them so (an ORDER BY inside the
 * aggregate would sort in a temporary B-tree). A parent's copy is the one of the parent's own school
 * (the family's: a family holds parents of its school only).
 */
const p = Parents.alias("p");
const parentName = identity(columnsAs("u"), columnsAs("pc"));
const parentsJson = sql<string>`(SELECT json_group_array(json_object('id', p.id, 'userId', p.user_id, 'firstName', ${parentName.firstName}, 'lastName', ${parentName.lastName}, 'relationship', p.relationship)) FROM parent AS p INNER JOIN "user" AS u ON u.id = p.user_id ${copyJoin("pc", p.table.userId, p.schoolOf())} WHERE p.family_id = ${FAMILY_ID})`;

/** The family's students as JSON, in id order (`student_family_idx`), leaving out deleted ones. */
const studentsJson = sql<string>`(SELECT json_group_array(json_object('id', s.id, 'firstName', s.first_name, 'lastName', s.last_name, 'level', s.level, 'status', s.status)) FROM student AS s WHERE s.family_id = ${FAMILY_ID} AND s.deleted_at IS NULL)`;

const fields = {
  id: families.id,
  createdAt: families.createdAt,
  updatedAt: families.updatedAt,
  familyNumber: families.familyNumber,
  name: families.name,
  parents: parentsJson,
  students: studentsJson,
};

/** The families of the parents the caller acts for (in the current school). */
function ownFamilies(ctx: SchoolCtx): SQL {
  const users = ctx.actingFor ?? (ctx.userId !== null ? [ctx.userId] : []);
  if (!users.length) return sql`0`;
  return inList(families.id, Parents.pick(ctx, parents.familyId, inList(parents.userId, users)));
}

const visibleTo = (ctx: SchoolCtx, access: "read" | "write"): SQL | undefined =>
  access === "write" || ctx.can(permissions.readAll) ? undefined : ownFamilies(ctx);

/** Reads who the caller acts for when their visibility depends on it (not for holders of read-all). */
export const withActing = actingLoader(permissions.readAll);

export const familyResource = defineResource({
  name: "family",
  plural: "families",
  label: m`Family`,
  path: "/api/v1/family",
  tag: "People",
  scope: "school",
  data: Families,
  record: FamilyRecord,
  view: { fields },
  toRecord: (_ctx, row) => {
    const members = parseJson(z.array(FamilyParent), row.parents);
    const children = parseJson(z.array(FamilyStudent), row.students);
    return {
      ...timestamps(row),
      familyNumber: row.familyNumber,
      name: row.name,
      parents: members,
      students: children,
      parentCount: members.length,
      studentCount: children.length,
    };
  },
  visibleTo,
  context: withActing,
  conflictMessage: m`A family with this family number already exists in this school (numbers that differ only in case or accents are the same)`,
});

/** The parent limit of the school year in effect today: the latest begun, else the first to come, else 2. */
export function parentLimit(ctx: SchoolCtx): SQL<number> {
  const today = ctx.deps.clock.now().toISOString().slice(0, 10);
  const c = schoolConfigurations;
  const limit = (order: SQL, when?: SQL) =>
    SchoolConfigurations.select(ctx, { limit: c.maxParentsPerFamily }).where(when).orderBy(order).limit(1);
  return sql<number>`COALESCE(
    ${limit(desc(c.startDate), lte(c.startDate, today))},
    ${limit(asc(c.startDate))},
    ${DEFAULT_PARENT_LIMIT})`;
}
