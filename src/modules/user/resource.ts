/**
 * `/api/v1/user`: the current school's people (docs/domain.md, "Users"). Literal sub-paths are
 * registered before the `{id}` routes (src/modules/user/index.ts keeps that order).
 */

import { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { roles } from "../../db/schema/core";
import { ctxOf } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { PageQuery, pageOf } from "../../lib/pagination";
import { Deleted, DeleteMany } from "../../lib/params";
import { Phone } from "../../lib/phone";
import { IdParams, nonEmpty } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody, noContent } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { permissionCatalogue } from "..";
import { Email } from "../school/api";
import {
  INVITE_COOLDOWN_SECONDS,
  inviteInactive,
  inviteToSchool,
  inviteUsers,
  MAX_RECIPIENTS,
  shareLink,
} from "./invite";
import { hasStatus, holdsRole, LANGUAGES, Language, Member, nameContains, RoleName, RoleRef, Status } from "./members";
import { FirstName, LastName } from "./people";
import { permissions as user } from "./permissions";
import {
  assignPendingToParents,
  createMember,
  deleteMyAccount,
  getMember,
  listMembers,
  MAX_ASSIGNED,
  myRoles,
  profileOf,
  removeMembers,
  updateMember,
  updateMyself,
} from "./service";

const TAG = "People" as const;
const MemberPage = pageOf(Member, "SchoolUserPage");

const Filters = {
  status: Status.optional().openapi({ description: "invited, active or inactive" }),
  name: searchTerm("Part of the first or last name"),
};
const ListQuery = z.strictObject({
  ...PageQuery.shape,
  role: RoleName.optional().openapi({
    description: "Holds this role here: a built-in key (parent, teacher, staff, school-admin) or a role id",
    example: "parent",
  }),
  ...Filters,
});
const ByRoleQuery = z.strictObject({ ...PageQuery.shape, ...Filters });

const filtersOf = (q: { status?: "invited" | "active" | "inactive"; name?: string }) => [
  q.status ? hasStatus(q.status) : undefined,
  q.name ? nameContains(q.name) : undefined,
];

export const listUsers = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user",
    tag: TAG,
    operationId: "listUsers",
    summary: "List the current school's people (paginated), newest member first",
    access: user.read,
    request: { query: ListQuery },
    responses: { 200: json(MemberPage, "A page of the school's people") },
    extensions: { "x-filters": { role: "parent", status: "invited", name: "Ana" }, "x-sort": [] },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const where = [q.role !== undefined ? holdsRole(q.role) : undefined, ...filtersOf(q)];
    return c.json(await listMembers(ctxOf(c), { page: q.page, pageSize: q.pageSize, where }, c.req.url), 200);
  },
);

const RoleParams = z.object({
  role: z
    .string()
    .pipe(RoleName)
    .openapi({
      param: { name: "role", in: "path" },
      example: "parent",
      description: "A built-in role key (parent, teacher, staff, school-admin) or a role id",
    }),
});

export const listUsersByRole = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/by-role/{role}",
    tag: TAG,
    operationId: "listUsersByRole",
    summary: "List the current school's people holding a role (paginated); an unknown role is a 404",
    access: user.read,
    request: { params: RoleParams, query: ByRoleQuery },
    responses: { 200: json(MemberPage, "A page of the role's people") },
    extensions: { "x-filters": { status: "invited", name: "Ana" }, "x-sort": [] },
  }),
  async (c) => {
    const ctx = ctxOf(c);
    const { role } = c.req.valid("param");
    const q = c.req.valid("query");
    const { db } = ctx.deps;
    const [found] = await db
      .select({ id: roles.id })
      .from(roles)
      .where(and(eq(roles.id, role), sql`(${roles.schoolId} IS NULL OR ${roles.schoolId} = ${ctx.schoolId})`))
      .limit(1);
    if (!found) throw notFound("Role", c.req.param("role"));
    const where = [holdsRole(role), ...filtersOf(q)];
    return c.json(await listMembers(ctx, { page: q.page, pageSize: q.pageSize, where }, c.req.url), 200);
  },
);

const LanguageList = z.array(z.object({ code: Language, name: z.string() })).openapi("Languages");

export const listLanguages = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/languages",
    tag: TAG,
    operationId: "listLanguages",
    summary: "The languages a user may choose (the app's and the texts' language)",
    access: "public",
    responses: { 200: json(LanguageList, "The languages") },
  }),
  async (c) =>
    c.json(
      LANGUAGES.map((l) => ({ ...l })),
      200,
    ),
);

const MyPermissions = z
  .object({
    schoolId: z.number().int(),
    permissions: z.array(z.string()).openapi({ example: ["user.read", "student.read"] }),
    roles: z.array(RoleRef),
  })
  .openapi("MyPermissions");

export const getMyPermissions = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/me/permissions",
    tag: TAG,
    operationId: "getMyPermissions",
    summary: "The caller's permission names and roles in the current school",
    description:
      "Permissions are those the caller's access token carries (what the API enforces until it is refreshed); roles are read now.",
    access: "member",
    responses: { 200: json(MyPermissions, "The caller's permissions and roles here") },
  }),
  async (c) => {
    const ctx = ctxOf(c);
    const names = permissionCatalogue()
      .filter((p) => ctx.can(p))
      .map((p) => p.name);
    return c.json({ schoolId: ctx.schoolId ?? 0, permissions: names, roles: await myRoles(ctx) }, 200);
  },
);

export const deleteMe = handled(
  defineRoute({
    method: "delete",
    path: "/api/v1/user/me",
    tag: TAG,
    operationId: "deleteCurrentUser",
    summary: "Delete my account (personal data anonymised; refused while I am a school's last administrator)",
    description:
      "Names and email are erased, the phone number is freed, every session and device token ends, and every school " +
      "membership with its roles is removed. Kept: the user id that records refer to, and the audit trail.",
    access: "user",
    audit: "user",
    errors: [404, 422],
    responses: { 204: noContent },
  }),
  async (c) => {
    await deleteMyAccount(ctxOf(c));
    return c.body(null, 204);
  },
);

const MyUpdate = nonEmpty(
  z.strictObject({
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    email: Email.nullable().optional(),
    language: Language.optional(),
  }),
);

export const updateMe = handled(
  defineRoute({
    method: "put",
    path: "/api/v1/user/me",
    tag: TAG,
    operationId: "updateCurrentUser",
    summary: "Update my name, email or language",
    description:
      "The person's own identity: every school they belong to sees it from now on, including schools that had " +
      "named them otherwise (a school's own name for a person is kept until the person edits theirs).",
    access: "user",
    audit: "user",
    errors: [404],
    request: { body: jsonBody(MyUpdate, "CurrentUserUpdate") },
    responses: { 204: noContent },
  }),
  async (c) => {
    await updateMyself(ctxOf(c), c.req.valid("json"));
    return c.body(null, 204);
  },
);

const ShareUrl = z
  .object({
    url: z.url().openapi({ example: "https://app.example.org/join?school=1" }),
    text: z
      .string()
      .openapi({ description: "A ready message to share, naming the school, in the caller's language (es or en)" }),
  })
  .openapi("ShareUrl");

export const getShareUrl = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/share-url",
    tag: TAG,
    operationId: "getShareUrl",
    summary: "The app link to join the current school (no personal data), and a message to share it with",
    access: "member",
    responses: { 200: json(ShareUrl, "The link and message") },
  }),
  async (c) => c.json(await shareLink(ctxOf(c)), 200),
);

const Ids = z.array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).min(1).max(MAX_RECIPIENTS);

export const deleteUsers = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/user/delete-multiple",
    tag: TAG,
    operationId: "deleteUsers",
    summary: "Remove several people from the current school, all or none",
    description:
      "An id that is not a member here is a 404 naming it, and nobody is removed; so is the caller (422) or the " +
      "school's last administrator (422).",
    access: user.write,
    audit: "user",
    errors: [404, 409, 422],
    request: { body: jsonBody(DeleteMany("User"), "UserDeleteMultiple") },
    responses: { 200: json(Deleted, "The ids removed") },
  }),
  async (c) => c.json({ deleted: await removeMembers(ctxOf(c), c.req.valid("json").ids) }, 200),
);

const InviteResult = z
  .object({
    sent: z.number().int(),
    skipped: z.array(
      z.object({
        userId: z.number().int().nullable(),
        phone: z.string(),
        reason: z.enum(["inactive", "recently-invited", "delivery-failed"]),
      }),
    ),
    remaining: z
      .number()
      .int()
      .openapi({ description: `Matched beyond the ${MAX_RECIPIENTS} per request: ask again` }),
  })
  .openapi("InviteResult");

const inviteRoute = <B extends z.ZodType>(path: string, operationId: string, summary: string, body: B, name: string) =>
  defineRoute({
    method: "post",
    path,
    tag: TAG,
    operationId,
    summary,
    description:
      `Texts each person once with the school's name and the app link. Skipped: inactive people, and people this ` +
      `school texted in the last ${INVITE_COOLDOWN_SECONDS / 60} minutes. Rate-limited per school (429).`,
    access: user.invite,
    audit: "user-invite",
    errors: [404, 429],
    request: { body: jsonBody(body, name) },
    responses: { 200: json(InviteResult, "Who was texted") },
  });

const InviteSchoolBody = z.strictObject({ phones: z.array(Phone).min(1).max(MAX_RECIPIENTS) });
export const inviteSchool = handled(
  inviteRoute(
    "/api/v1/user/invite/school",
    "inviteToSchool",
    "Invite people by phone to join the school (unknown numbers become invited users; all become members)",
    InviteSchoolBody,
    "InviteToSchool",
  ),
  async (c) => c.json(await inviteToSchool(ctxOf(c), c.req.valid("json").phones), 200),
);

const InviteInactiveBody = z.strictObject({
  role: z
    .union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), RoleName])
    .openapi({ description: "A built-in role key or a role id (number or string)", example: "parent" }),
});
export const inviteInactiveUsers = handled(
  inviteRoute(
    "/api/v1/user/invite/inactive",
    "inviteInactiveUsers",
    "Invite the members of a role who have never signed in (status invited); a role the school does not have is a 404",
    InviteInactiveBody,
    "InviteInactiveUsers",
  ),
  async (c) => c.json(await inviteInactive(ctxOf(c), c.req.valid("json").role), 200),
);

const InviteUsersBody = z.strictObject({ userIds: Ids });
export const inviteSomeUsers = handled(
  inviteRoute(
    "/api/v1/user/invite/users",
    "inviteUsers",
    "Invite specific members of the school",
    InviteUsersBody,
    "InviteUsers",
  ),
  async (c) => c.json(await inviteUsers(ctxOf(c), c.req.valid("json").userIds), 200),
);

export const assignPending = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/user/assign-pending-to-parents",
    tag: TAG,
    operationId: "assignPendingUsersToParents",
    summary: "Give the parent role to the school's members who hold no role yet",
    description: `"Pending": a member of the school with no role here (invited to the school, or added without one). By default only pending members who have signed in (their invitation reached them) become parents; \`userIds\` names members to assign whether or not they have signed in. At most ${MAX_ASSIGNED} per call, oldest members first; \`remaining\` says how many wait.`,
    access: user.write,
    audit: "role-user",
    errors: [404],
    request: {
      body: jsonBody(
        z.strictObject({
          userIds: Ids.optional().openapi({
            description: "Only these members, signed in or not (default: every pending member who has signed in)",
          }),
        }),
        "AssignPendingToParents",
      ),
    },
    responses: {
      200: json(
        z.object({ assigned: z.array(z.number().int()), remaining: z.number().int() }).openapi("PendingAssigned"),
        "Who became a parent",
      ),
    },
  }),
  async (c) => c.json(await assignPendingToParents(ctxOf(c), c.req.valid("json").userIds), 200),
);

const CreateBody = z.strictObject({
  phone: Phone,
  firstName: FirstName,
  lastName: LastName.optional(),
  email: Email.nullable().optional(),
  language: Language.optional(),
  roleIds: z
    .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
    .max(10)
    .optional()
    .openapi({ description: "Roles to give here (default none: a pending member)" }),
});

export const createUser = handled(
  defineRoute({
    method: "post",
    path: "/api/v1/user",
    tag: TAG,
    operationId: "createUser",
    summary: "Add a person to the current school (a known phone is the same user)",
    description:
      "An unknown number becomes a new, invited user with the name sent; for a known one the name and email sent are " +
      "this school's own for them (another school's are never shown nor changed). 409 when they " +
      "are already a member here; an unknown role id is a 404; a role granting a permission the caller does not hold " +
      "is a 403 (as for role memberships).",
    access: user.write,
    audit: "user",
    errors: [403, 404, 409],
    request: { body: jsonBody(CreateBody, "UserCreate") },
    responses: { 201: json(Member, "The new member") },
  }),
  async (c) => c.json(await createMember(ctxOf(c), c.req.valid("json")), 201),
);

export const getUser = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/{id}",
    tag: TAG,
    operationId: "getUser",
    summary: "Get a person of the current school by user id",
    access: user.read,
    request: { params: IdParams },
    responses: { 200: json(Member, "The person") },
  }),
  async (c) => c.json(await getMember(ctxOf(c), c.req.valid("param").id), 200),
);

const UpdateBody = nonEmpty(
  z.strictObject({
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    email: Email.nullable().optional(),
    language: Language.optional(),
    status: z
      .enum(["active", "inactive"])
      .optional()
      .openapi({ description: "inactive: may not sign in (sessions end). Only for someone of no other school" }),
  }),
);

export const updateUser = handled(
  defineRoute({
    method: "put",
    path: "/api/v1/user/{id}",
    tag: TAG,
    operationId: "updateUser",
    summary: "Update a person's name, email, language or status",
    access: user.write,
    audit: "user",
    errors: [409, 422],
    request: { params: IdParams, body: jsonBody(UpdateBody, "UserUpdate") },
    responses: { 204: noContent },
  }),
  async (c) => {
    await updateMember(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
    return c.body(null, 204);
  },
);

export const deleteUser = handled(
  defineRoute({
    method: "delete",
    path: "/api/v1/user/{id}",
    tag: TAG,
    operationId: "deleteUser",
    summary: "Remove a person from the current school (their roles here go; other schools untouched)",
    access: user.write,
    audit: "user",
    errors: [409, 422],
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  async (c) => {
    await removeMembers(ctxOf(c), [c.req.valid("param").id]);
    return c.body(null, 204);
  },
);

const Profile = z
  .object({
    user: Member,
    teacher: z
      .object({ id: z.number().int(), subjects: z.array(z.string()), employeeNumber: z.string().nullable() })
      .nullable(),
    parent: z
      .object({ id: z.number().int(), familyId: z.number().int().nullable(), relationship: z.string() })
      .nullable(),
    administrativeStaff: z
      .object({ id: z.number().int(), position: z.string(), employeeNumber: z.string().nullable() })
      .nullable(),
    delegations: z.object({
      actsFor: z.array(
        z.object({
          id: z.number().int(),
          parentId: z.number().int(),
          userId: z.number().int(),
          validFrom: z.string(),
          validUntil: z.string(),
        }),
      ),
      delegates: z.array(
        z.object({
          id: z.number().int(),
          parentId: z.number().int(),
          userId: z.number().int(),
          validFrom: z.string(),
          validUntil: z.string(),
        }),
      ),
    }),
  })
  .openapi("UserProfile");

export const getUserProfile = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/user/{id}/profile",
    tag: TAG,
    operationId: "getUserProfile",
    summary: "A person's profile in the current school: roles, teacher / parent / staff rows, delegations",
    access: user.read,
    request: { params: IdParams },
    responses: { 200: json(Profile, "The profile") },
  }),
  async (c) => c.json(await profileOf(ctxOf(c), c.req.valid("param").id), 200),
);
