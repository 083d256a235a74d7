/**
 * Groups (classes) of the current school: a name unique per school year, a level the school offers,
 * a grade, an image, and their teachers and students (./participants.ts). Reads answer the group
 * with its teachers and its count of students, in one D1 call (./record.ts). Staff see every group;
 * a teacher the groups they teach (./access.ts); anyone sees their own at `GET /api/v1/group/mine`.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Delegates } from "../../db/schema/delegate";
import { Groups, groups } from "../../db/schema/group";
import { asc, eq, gte, lte, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, notFound, say } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { m, zodMessage } from "../../lib/message";
import { Deleted, DeleteMany, idFilter } from "../../lib/params";
import { type Filter, IdParams } from "../../lib/resource";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { imageUrlBody, signedUrlFields } from "../../lib/signed-url";
import { text } from "../../lib/text";
import { actedForBy, delegationsHere } from "../delegate/api";
import { assertOffered, LEVELS, type Level } from "../school/api";
import { teaches } from "./access";
import { permissions } from "./permissions";
import { fields, groupResource as resource, toGroup } from "./record";

export { addGroupParticipants, getGroupParticipants, removeGroupParticipants } from "./participants";

const delegateAlias = Delegates.alias("d");

const Name = text({ max: 100 }).openapi({
  example: "3rd A",
  description: "The group's name, unique in its school year",
});
const SchoolYear = z
  .string()
  .regex(/^\d{4}-\d{4}$/, zodMessage(m`Expected a school year like 2026-2027`))
  .refine((v) => Number(v.slice(5)) === Number(v.slice(0, 4)) + 1, zodMessage(m`The second year follows the first`))
  .openapi({ example: "2026-2027" });
const Grade = z.number().int().min(1).max(12).openapi({ example: 3, description: "Grade within the level, 1 to 12" });
const LevelInput = z
  .enum(LEVELS)
  .openapi({ example: "elementary", description: "One of the levels the school offers" });
/** An id filter in plain digits ("1e3", "0x10", "1.0" are 400s, as for path ids). */

export const listGroups = resource.list({
  access: permissions.read,
  filters: {
    level: {
      schema: LevelInput.optional(),
      // Unary plus: the level index would serve the filter but not the order (a sort step); the
      // school's groups are read in order through school_group_created_idx instead.
      where: (_ctx, v) => sql`+${groups.level} = ${v}`,
      example: "elementary",
    } satisfies Filter<Level>,
    schoolYear: {
      schema: SchoolYear.optional(),
      where: (_ctx, v) => eq(groups.schoolYear, v),
      example: "2026-2027",
    } satisfies Filter<string>,
    name: {
      schema: searchTerm("Part of the name"),
      where: (_ctx, v) => contains(groups.nameSearch, v),
      example: "3rd",
    } satisfies Filter<string>,
    teacher: {
      schema: idFilter("Groups this teacher (teacher profile id) teaches"),
      where: (_ctx, v) =>
        sql`EXISTS (SELECT 1 FROM "group_teacher" "gt" WHERE "gt"."group_id" = ${groups.id} AND "gt"."teacher_id" = ${v})`,
      example: "1",
    } satisfies Filter<number>,
  },
  sort: { createdAt: groups.createdAt, name: groups.name },
  defaultOrder: [{ by: groups.createdAt }, { by: groups.id }],
  summary: "List the current school's groups (paginated); a teacher without group.read-all: the groups they teach",
});

export const getGroup = resource.get({ access: permissions.read });

export const createGroup = resource.create({
  access: permissions.write,
  input: z.object({ name: Name, level: LevelInput, schoolYear: SchoolYear, grade: Grade.nullable().optional() }),
  values: async (ctx, { body }) => {
    await assertOffered(ctx, body.level);
    return { name: body.name, level: body.level, schoolYear: body.schoolYear, grade: body.grade ?? null };
  },
  summary: "Create a group",
  description: "409 if the school year already has a group of this name; 422 if the school does not offer the level.",
  errors: [422],
  examples: { 422: "The school does not offer the level high; it offers preschool, elementary, middle" },
});

export const updateGroup = resource.update({
  access: permissions.write,
  input: z.object({
    name: Name.optional(),
    level: LevelInput.optional(),
    schoolYear: SchoolYear.optional(),
    grade: Grade.nullable().optional(),
  }),
  values: async (ctx, { body }) => {
    if (body.level !== undefined) await assertOffered(ctx, body.level);
    return body;
  },
  description: "409 if the school year already has a group of this name; 422 if the school does not offer the level.",
  errors: [422],
  examples: { 422: "The school does not offer the level high; it offers preschool, elementary, middle" },
});

export const deleteGroup = resource.delete({
  access: permissions.write,
  summary: "Delete a group (its teacher and student rows go with it)",
});

// ---- The caller's groups ---------------------------------------------------------------------

const MINE_LIMIT = 200;
const MyGroups = z
  .object({
    data: z
      .array(resource.record)
      .openapi({ description: "The caller's groups (a teacher's, or a parent's children's)" }),
  })
  .openapi("MyGroups");

const DAY_MS = 24 * 3600 * 1000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The groups of the caller in the current school: the groups they teach, and the groups of the
 * children they are a guardian of, or a parent they are a delegate of today (as `actingFor`
 * decides, in the school's time zone). One D1 call: the delegations (UTC today ±1 day) and the
 * groups linked through any of them, whose link is then checked in the school's time zone.
 */
export async function myGroups(ctx: SchoolCtx) {
  const self = ctx.userId ?? 0;
  const now = ctx.deps.clock.now();
  const from = utcDate(now.getTime() + DAY_MS);
  const until = utcDate(now.getTime() - DAY_MS);
  // The parents the caller may act for: themself, and those whose delegate they may be today
  // (delegate_user_idx); checked in the school's time zone below.
  const d = delegateAlias.table;
  const delegatedBy = delegateAlias
    .select(ctx, { parentId: d.parentId })
    .where(eq(d.userId, self), gte(d.validUntil, until), lte(d.validFrom, from));
  const candidate = sql`("mp"."user_id" = ${self} OR "mp"."id" IN ${delegatedBy})`;
  const links = (select: SQL) =>
    sql`(SELECT ${select} FROM "group_student" "ml" INNER JOIN "student" "ms" ON "ms"."id" = "ml"."student_id" INNER JOIN "guardian" "mg" ON "mg"."student_id" = "ml"."student_id" INNER JOIN "parent" "mp" ON "mp"."id" = "mg"."parent_id" WHERE "ml"."group_id" = ${groups.id} AND "ms"."deleted_at" IS NULL AND ${candidate})`;
  const teaching = teaches(ctx, groups.id);
  const batch = new Batch(ctx);
  const delegations = batch.read(delegationsHere(ctx, self, now));
  const rows = batch.read(
    Groups.select(ctx, {
      ...fields,
      teaching: sql<number>`CASE WHEN ${teaching} THEN 1 ELSE 0 END`,
      via: sql<string>`${links(sql`json_group_array("mp"."user_id")`)}`,
    })
      .where(sql`(${teaching} OR EXISTS ${links(sql`1`)})`)
      .orderBy(asc(groups.createdAt), asc(groups.id))
      .limit(MINE_LIMIT),
  );
  const results = await batch.commit();
  const actingFor = new Set(actedForBy(self, results.get(delegations), now));
  const via = (r: { via: string }) => parseJson(z.array(z.number()), r.via || "[]");
  const data = results
    .get(rows)
    .filter((r) => r.teaching === 1 || via(r).some((u) => actingFor.has(u)))
    .map((r) => toGroup(r));
  return { data };
}

export const listMyGroups = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/group/mine",
    tag: "Groups",
    operationId: "listMyGroups",
    summary: "The caller's groups: those they teach, and their children's (a delegate: the parent's children's)",
    description:
      "Any member of the school. A teacher: the groups they teach; a parent: the groups of the children they are a " +
      "guardian of; a delegate: also those of the parent they act for today. Staff see every group at " +
      `GET /api/v1/group; here they get only their own. Oldest first, at most ${MINE_LIMIT}; one D1 call.`,
    access: "member",
    responses: { 200: json(MyGroups, "The caller's groups") },
  }),
  (ctx) => myGroups(ctx),
);

/** The groups the caller teaches (none when they have no teacher profile here). */
export async function myTeacherGroups(ctx: SchoolCtx) {
  const rows = await Groups.select(ctx, fields)
    .where(teaches(ctx, groups.id))
    .orderBy(asc(groups.createdAt), asc(groups.id))
    .limit(MINE_LIMIT)
    .all();
  return { data: rows.map((r) => toGroup(r)) };
}

export const listMyTeacherGroups = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/group/teacher/mine",
    tag: "Groups",
    operationId: "listMyTeacherGroups",
    summary: "The groups of the current teacher",
    description:
      "The groups whose teachers include the caller's teacher profile in this school; an empty list for a caller " +
      `who teaches no group (or is no teacher). Oldest first, at most ${MINE_LIMIT}; one D1 call.`,
    access: permissions.read,
    responses: { 200: json(MyGroups, "The groups the caller teaches") },
  }),
  (ctx) => myTeacherGroups(ctx),
);

// ---- Delete several ----------------------------------------------------------------------------

export async function deleteGroups(ctx: SchoolCtx, ids: number[]) {
  const listed = inList(groups.id, ids);
  const found = await Groups.select(ctx, { id: groups.id }, "write").where(listed).all();
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length)
    throw notFound(
      missing.length > 1 ? m`Groups ${missing.join(", ")} not found` : m`Group ${missing.join(", ")} not found`,
    );
  await new Batch(ctx).add(...Groups.delete(ctx, listed)).commit();
}

/** "Delete several groups": DELETE, and POST (the same operation) for clients that send no body with a DELETE. */
const deleteSeveral = (method: "delete" | "post", operationId: string) =>
  operation(
    defineRoute({
      method,
      path: "/api/v1/group/delete-multiple",
      tag: "Groups",
      operationId,
      summary: method === "delete" ? "Delete several groups at once" : "Delete several groups at once (POST form)",
      description:
        "All or nothing: if any id is not a group of this school, 404 naming those ids and nothing is deleted. " +
        "Otherwise one batch deletes them (with their teacher and student rows), each with its audit row. " +
        "`DELETE` and `POST` on this path do the same.",
      access: permissions.write,
      audit: "group",
      request: { body: jsonBody(DeleteMany("Group"), "GroupDeleteMultiple") },
      responses: { 200: json(Deleted, "The ids deleted") },
    }),
    async (ctx, { body }) => {
      await deleteGroups(ctx, body.ids);
      return { deleted: body.ids };
    },
  );

export const deleteMultipleGroups = deleteSeveral("delete", "deleteMultipleGroups");
export const deleteMultipleGroupsPost = deleteSeveral("post", "deleteMultipleGroupsPost");

// ---- Image -----------------------------------------------------------------------------------

export const IMAGE_URL_SECONDS = 5 * 60;
const IMAGE_TYPES = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" } as const;
type ImageType = keyof typeof IMAGE_TYPES;

const IMAGE_TYPE_NAMES: [ImageType, ...ImageType[]] = ["image/png", "image/jpeg", "image/webp"];
const ImageUrlBody = imageUrlBody(IMAGE_TYPE_NAMES, "image");

const ImageUrl = z
  .object({
    image: z.string().openapi({ example: "1/groups/7/image-2f1c.png", description: "The image's object key" }),
    ...signedUrlFields(IMAGE_URL_SECONDS),
  })
  .openapi("GroupImageUrl");

export async function imageUrl(ctx: SchoolCtx, id: number, input: z.infer<typeof ImageUrlBody>) {
  const now = ctx.deps.clock.now();
  let key: string;
  if (input.method === "PUT") {
    if (!ctx.can(permissions.write)) {
      throw new ApiError(403, say.missingPermission(permissions.write.name, ctx.schoolId));
    }
    const contentType = input.contentType ?? "image/png";
    key = `${ctx.schoolId}/groups/${id}/image-${crypto.randomUUID()}.${IMAGE_TYPES[contentType]}`;
    await resource.commit(ctx, id, new Batch(ctx).add(...resource.writes.update(ctx, id, { image: key }, "image")));
  } else {
    // Whoever sees the group: staff and its teachers through the resource, a parent (or delegate)
    // through their children's groups (404 for a group they do not see).
    const group = ctx.can(permissions.read)
      ? await resource.find(ctx, id)
      : (await myGroups(ctx)).data.find((g) => g.id === id);
    if (!group) throw notFound(m`Group ${id} not found`);
    if (group.image === null) throw new ApiError(404, m`Group ${id} has no image; upload one with method PUT`);
    key = group.image;
  }
  const contentType = input.method === "PUT" ? input.contentType : undefined;
  const signed = await ctx.deps.signer.sign({
    key,
    method: input.method,
    contentType,
    expiresIn: IMAGE_URL_SECONDS,
    now,
  });
  return { image: key, ...signed };
}

export const createGroupSignedUrl = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/group/{id}/signed-url",
    tag: "Groups",
    operationId: "createGroupSignedUrl",
    summary: "Get a presigned URL to upload (PUT: sets a new image) or download (GET) the group's image",
    description:
      "PUT needs group.write: the group's image becomes a new key `{schoolId}/groups/{id}/image-{uuid}.{ext}` and " +
      "the URL uploads to it (image/png, image/jpeg or image/webp; another type is a 400; send the returned " +
      `\`headers\`). GET signs a download of the current image (404 if none) for anyone who sees the group: staff, ` +
      `its teachers, and the parents (and delegates) of its students. URLs expire after ${IMAGE_URL_SECONDS} s.`,
    access: "member",
    audit: "group",
    request: { params: IdParams, body: jsonBody(ImageUrlBody, "GroupImageUrlRequest") },
    responses: { 200: json(ImageUrl, "The image's key and its presigned URL") },
  }),
  (ctx, { params, body }) => imageUrl(ctx, params.id, body),
);
