/**
 * The school's operations besides CRUD: levels, statistics, logo URL, address, and
 * deleting several schools. Their logic is in service.ts.
 */

import { z } from "@hono/zod-openapi";
import { DeleteMany } from "../../lib/params";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { imageUrlBody, signedUrlFields } from "../../lib/signed-url";
import { LEVELS, LevelInfo, LOGO_CONTENT_TYPES, levelInfo } from "./fields";
import { permissions } from "./permissions";
import * as school from "./service";

const Levels = z.array(LevelInfo).openapi("SchoolLevels");

export const listSchoolLevels = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/school/levels",
    tag: "Schools",
    operationId: "listSchoolLevels",
    summary: "Every school level the service knows, with its label",
    access: "user",
    responses: { 200: json(Levels, "preschool, elementary, middle and high, in that order") },
  }),
  () => levelInfo(LEVELS),
);

export const listCurrentSchoolLevels = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/school/levels/current",
    tag: "Schools",
    operationId: "listCurrentSchoolLevels",
    summary: "The levels the current school offers, with their labels",
    access: permissions.read,
    responses: { 200: json(Levels, "The current school's levels, in order") },
  }),
  (ctx) => school.currentLevels(ctx),
);

const count = z.number().int().min(0);
const Statistics = z
  .object({
    schoolId: z.number().int(),
    people: z
      .object({
        total: count.openapi({ description: "People with at least one role in the school" }),
        byRole: z
          .array(
            z.object({
              roleId: z.number().int(),
              key: z
                .string()
                .nullable()
                .openapi({ description: "A built-in role's key; null for the school's own roles" }),
              name: z.string().openapi({ description: "The role's name" }),
              count: count.openapi({ description: "People holding it" }),
            }),
          )
          .openapi({ description: "People per role (someone with two roles counts in both)" }),
      })
      .openapi({ description: "The school's people" }),
    students: z
      .object({
        total: count.openapi({ description: "Students of the school (not deleted)" }),
        byLevel: z
          .object({
            preschool: count.openapi({ description: "Students in preschool" }),
            elementary: count.openapi({ description: "Students in elementary school" }),
            middle: count.openapi({ description: "Students in middle school" }),
            high: count.openapi({ description: "Students in high school" }),
          })
          .openapi({ description: "Students per level (students have no level yet: 0 each)" }),
      })
      .openapi({ description: "The school's students" }),
    groups: count.openapi({ description: "Groups (classes); 0 until groups exist" }),
    routes: count.openapi({ description: "Transport routes" }),
  })
  .openapi("SchoolStatistics");

export const getSchoolStatistics = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/school/{id}/statistics",
    tag: "Schools",
    operationId: "getSchoolStatistics",
    summary: "A school's statistics: people by role, students by level, groups, routes",
    description: "Members: only the school they act in. Counted in one database round trip.",
    access: permissions.statistics,
    scope: "platform",
    request: { params: IdParams },
    responses: { 200: json(Statistics, "The counts") },
  }),
  (ctx, { params }) => school.statistics(ctx, params.id),
);

const LogoUrlBody = imageUrlBody(LOGO_CONTENT_TYPES, "logo");

const LogoUrl = z
  .object({
    logo: z.string().openapi({ example: "1/logo/logo-2f1c.png", description: "The logo's object key" }),
    ...signedUrlFields(school.LOGO_URL_SECONDS),
  })
  .openapi("SchoolLogoUrl");

export const createSchoolLogoUrl = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/school/{id}/logo/signed-url",
    tag: "Schools",
    operationId: "createSchoolLogoUrl",
    summary: "Get a presigned URL to upload (PUT: sets a new logo) or download (GET) the school's logo",
    description:
      "PUT needs school.update: the school's logo becomes a new key `{id}/logo/logo-{uuid}.{ext}` and the URL " +
      "uploads to it (image/png, image/jpeg, image/webp or image/svg+xml; send the returned `headers`). " +
      `GET signs a download of the current logo (404 if none). URLs expire after ${school.LOGO_URL_SECONDS} seconds.`,
    access: permissions.read,
    scope: "platform",
    audit: "school",
    errors: [409],
    examples: { 409: "School 42 changed while it was being written; try again" },
    request: { params: IdParams, body: jsonBody(LogoUrlBody, "SchoolLogoUrlRequest") },
    responses: { 200: json(LogoUrl, "The logo's key and its presigned URL") },
  }),
  (ctx, { params, body }) => school.logoUrl(ctx, params.id, body),
);

export const updateSchoolAddress = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/school/{id}/address",
    tag: "Schools",
    operationId: "updateSchoolAddress",
    summary: "Set the school's address: one of its addresses (or null for none)",
    description:
      "`addressId` must be an address of this school (POST /api/v1/address creates one); another school's is a 404.",
    access: permissions.update,
    scope: "platform",
    audit: "school",
    request: {
      params: IdParams,
      body: jsonBody(
        z.strictObject({
          addressId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable().openapi({ example: 1 }),
        }),
        "SchoolAddressUpdate",
      ),
    },
    responses: { 204: noContent },
  }),
  (ctx, { params, body }) => school.setAddress(ctx, params.id, body.addressId),
);

export const deleteSchool = operation(
  defineRoute({
    method: "delete",
    path: "/api/v1/school/{id}",
    tag: "Schools",
    operationId: "deleteSchool",
    summary: "Delete a school and everything it owns (platform: school.write)",
    description:
      "Deletes the school's rows in every table, in one transaction; users stay (they may belong to other schools). " +
      "The audit trail keeps the school's rows.",
    access: permissions.write,
    scope: "platform",
    audit: "school",
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  (ctx, { params }) => school.deleteSchool(ctx, params.id),
);

export const deleteMultipleSchools = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/school/delete-multiple",
    tag: "Schools",
    operationId: "deleteMultipleSchools",
    summary: "Delete several schools at once (platform: school.write)",
    description:
      "Deletes those of `ids` that exist, each with everything it owns, in one transaction, and answers which " +
      "were deleted and which were not found (nothing else is deleted for them).",
    access: permissions.write,
    scope: "platform",
    audit: "school",
    request: { body: jsonBody(DeleteMany("School"), "SchoolDeleteMultiple") },
    responses: {
      200: json(
        z
          .object({
            deleted: z.array(z.number().int()).openapi({ description: "Deleted, in the order sent" }),
            notFound: z.array(z.number().int()).openapi({ description: "No such school: nothing done for these" }),
          })
          .openapi("SchoolsDeleted"),
        "What was deleted and what was not found",
      ),
    },
  }),
  (ctx, { body }) => school.deleteSchools(ctx, body.ids),
);
