import type { SchoolCtx } from "../../lib/context";
/**
 * `/api/v1/user`: the current school's people (docs/domain.md, "Users"). Literal sub-paths are
 * registered before the `{id}` routes (src/modules/user/index.ts keeps that order).
 */

import { z } from "@hono/zod-openapi";
import { Roles, roles, users } from "../../db/schema/core";
import { eq } from "../../db/sql";
import { BUILTIN_ROLES } from "../../lib/access";
import { notFound, say } from "../../lib/errors";
import { m } from "../../lib/message";
import { PageQuery, pageOf } from "../../lib/pagination";
import { Deleted, DeleteMany, idList } from "../../lib/params";
import { Phone } from "../../lib/phone";
import { IdParams, nonEmpty } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { searchTerm } from "../../lib/search";
import { permissionCatalogue } from "..";
import { Email } from "../school/api";
import {
  INVITE_COOLDOWN_SECONDS,
  INVITE_REQUESTS_PER_HOUR,
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
const filtersOf = (ctx: SchoolCtx, q: { status?: "invited" | "active" | "inactive"; name?: string }) => [
  q.status ? hasStatus(q.status) : undefined,
  q.name ? nameContains(ctx, q.name) : undefined,
];

export const listUsers = operation(
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
  (ctx, { query: q }) => {
    const where = [q.role !== undefined ? holdsRole(ctx, q.role) : undefined, ...filtersOf(ctx, q)];
    return listMembers(ctx, { page: q.page, pageSize: q.pageSize, where });
  },
);

/** The role asked for (a query parameter: `/user/by-role/{role}` would be ambiguous with `/user/{id}/roles`). */
const ByRoleQuery = z.strictObject({
  role: z.string().pipe(RoleName).openapi({
    example: "parent",
    description: "A built-in role key (parent, teacher, staff, school-admin) or a role id",
  }),
  ...PageQuery.shape,
  ...Filters,
});

export const listUsersByRole = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/user/by-role",
    tag: TAG,
    operationId: "listUsersByRole",
    summary: "List the current school's people holding a role (paginated); an unknown role is a 404",
    access: user.read,
    examples: { 404: "Role 42 not found" },
    request: { query: ByRoleQuery },
    responses: { 200: json(MemberPage, "A page of the role's people") },
    extensions: { "x-filters": { status: "invited", name: "Ana" }, "x-sort": [] },
  }),
  async (ctx, { query: { role, ...q } }) => {
    // A built-in role, or one of this school's own (read through the index on the school's roles).
    const own = await Roles.select(ctx, { id: roles.id }, "write").where(eq(roles.id, role)).first();
    if (!own && !Object.values(BUILTIN_ROLES).some((r) => r.id === role)) throw notFound(m`Role ${role} not found`);
    const where = [holdsRole(ctx, role), ...filtersOf(ctx, q)];
    return listMembers(ctx, { page: q.page, pageSize: q.pageSize, where });
  },
);

const LanguageList = z
  .array(
    z.object({
      code: Language,
      name: z.string().openapi({ example: "Español", description: "The language's name, in itself" }),
    }),
  )
  .openapi("Languages");

export const listLanguages = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/user/languages",
    tag: TAG,
    operationId: "listLanguages",
    summary: "The languages a user may choose (the app's and the texts' language)",
    access: "public",
    database: false,
    responses: { 200: json(LanguageList, "The languages") },
  }),
  () => LANGUAGES.map((l) => ({ ...l })),
);

const MyPermissions = z
  .object({
    schoolId: z.number().int().openapi({ description: "The current school" }),
    permissions: z
      .array(z.string())
      .openapi({ example: ["user.read", "student.read"], description: "What the user's roles grant here, by name" }),
    roles: z.array(RoleRef).openapi({ description: "The roles the user holds here" }),
  })
  .openapi("MyPermissions");

export const getMyPermissions = operation(
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
  async (ctx) => {
    const names = permissionCatalogue()
      .filter((p) => ctx.can(p))
      .map((p) => p.name);
    return { schoolId: ctx.schoolId ?? 0, permissions: names, roles: await myRoles(ctx) };
  },
);

/** The 404 of the caller's own account: deleted meanwhile (an access token outlives it by minutes). */
const GONE = {
  summary: "The account was deleted after the access token was issued",
  detail: say.notFound("User", 4),
};

export const deleteMe = operation(
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
    examples: {
      404: GONE,
      422: "You are the only administrator of school 1; give another user the school-admin role first",
    },
    responses: { 204: noContent },
  }),
  async (ctx) => {
    await deleteMyAccount(ctx);
    return undefined;
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

export const updateMe = operation(
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
    examples: { 404: GONE },
    request: { body: jsonBody(MyUpdate, "CurrentUserUpdate") },
    responses: { 204: noContent },
  }),
  async (ctx, { body }) => {
    await updateMyself(ctx, body);
    return undefined;
  },
);

const ShareUrl = z
  .object({
    url: z
      .url()
      .openapi({ example: "https://app.example.org/join?school=1", description: "The app link to join the school" }),
    text: z
      .string()
      .openapi({ description: "A ready message to share, naming the school, in the caller's language (es or en)" }),
  })
  .openapi("ShareUrl");

export const getShareUrl = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/user/share-url",
    tag: TAG,
    operationId: "getShareUrl",
    summary: "The app link to join the current school (no personal data), and a message to share it with",
    access: "member",
    responses: { 200: json(ShareUrl, "The link and message") },
  }),
  (ctx) => shareLink(ctx),
);

const Ids = idList({ max: MAX_RECIPIENTS, what: "User" });

export const deleteUsers = operation(
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
    examples: {
      409: "The users changed while they were being removed; try again",
      422: "You cannot remove yourself from the school; to delete your own account use DELETE /api/v1/user/me",
    },
    request: { body: jsonBody(DeleteMany("User"), "UserDeleteMultiple") },
    responses: { 200: json(Deleted, "The ids removed") },
  }),
  async (ctx, { body }) => ({ deleted: await removeMembers(ctx, body.ids) }),
);

const InviteResult = z
  .object({
    sent: z.number().int().openapi({ description: "People texted" }),
    skipped: z
      .array(
        z.object({
          userId: z.number().int().nullable().openapi({ description: "The person's user id, if known" }),
          phone: z.string().openapi({ description: "The number not texted" }),
          reason: z
            .enum(["inactive", "recently-invited", "delivery-failed"])
            .openapi({ description: "Why: an inactive user, texted lately, or the SMS provider refused it" }),
        }),
      )
      .openapi({ description: "People not texted, and why" }),
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
    examples: { 429: `At most ${INVITE_REQUESTS_PER_HOUR} invitation requests per school per hour` },
    request: { body: jsonBody(body, name) },
    responses: { 200: json(InviteResult, "Who was texted") },
  });

const InviteSchoolBody = z.strictObject({
  phones: z
    .array(Phone)
    .min(1)
    .max(MAX_RECIPIENTS)
    .openapi({ description: `The numbers to invite, 1 to ${MAX_RECIPIENTS}` }),
});
export const inviteSchool = operation(
  inviteRoute(
    "/api/v1/user/invite/school",
    "inviteToSchool",
    "Invite people by phone to join the school (unknown numbers become invited users; all become members)",
    InviteSchoolBody,
    "InviteToSchool",
  ),
  (ctx, { body }) => inviteToSchool(ctx, body.phones),
);

const InviteInactiveBody = z.strictObject({
  role: z
    .union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), RoleName])
    .openapi({ description: "A built-in role key or a role id (number or string)", example: "parent" }),
});
export const inviteInactiveUsers = operation(
  inviteRoute(
    "/api/v1/user/invite/inactive",
    "inviteInactiveUsers",
    "Invite the members of a role who have never signed in (status invited); a role the school does not have is a 404",
    InviteInactiveBody,
    "InviteInactiveUsers",
  ),
  (ctx, { body }) => inviteInactive(ctx, body.role),
);

const InviteUsersBody = z.strictObject({
  userIds: Ids.openapi({ description: `Members of the school to text, 1 to ${MAX_RECIPIENTS}` }),
});
export const inviteSomeUsers = operation(
  inviteRoute(
    "/api/v1/user/invite/users",
    "inviteUsers",
    "Invite specific members of the school",
    InviteUsersBody,
    "InviteUsers",
  ),
  (ctx, { body }) => inviteUsers(ctx, body.userIds),
);

export const assignPending = operation(
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
        z
          .object({
            assigned: z.array(z.number().int()).openapi({ description: "User ids who became parents" }),
            remaining: z.number().int().openapi({ description: "Pending members left for another call" }),
          })
          .openapi("PendingAssigned"),
        "Who became a parent",
      ),
    },
  }),
  (ctx, { body }) => assignPendingToParents(ctx, body.userIds),
);

const CreateBody = z.strictObject({
  phone: Phone,
  firstName: FirstName,
  lastName: LastName.optional(),
  email: Email.nullable().optional(),
  language: Language.optional(),
  roleIds: idList({ min: 0, max: 10, what: "Role" })
    .optional()
    .openapi({ description: "Roles to give here (default none: a pending member)" }),
});

export const createUser = operation(
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
    examples: { 409: "The user with phone +15550000003 is already a member of this school", 404: "Role 42 not found" },
    request: { body: jsonBody(CreateBody, "UserCreate") },
    responses: { 201: json(Member, "The new member") },
  }),
  (ctx, { body }) => createMember(ctx, body),
);

export const getUser = operation(
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
  (ctx, { params }) => getMember(ctx, params.id),
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

export const updateUser = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/user/{id}",
    tag: TAG,
    operationId: "updateUser",
    summary: "Update a person's name, email, language or status",
    access: user.write,
    audit: "user",
    // The person as GET /user/{id} answers them; the writes guarded by the user row's updated_at.
    ifMatch: { label: m`User`, read: (ctx, { id }) => getMember(ctx, id), table: users },
    errors: [409, 422],
    examples: {
      409: "Another user already has this value",
      422: "User 42 belongs to other schools too: only their own account decides their status",
    },
    request: { params: IdParams, body: jsonBody(UpdateBody, "UserUpdate") },
    responses: { 204: noContent },
  }),
  async (ctx, { params, body }) => {
    await updateMember(ctx, params.id, body);
    return undefined;
  },
);

export const deleteUser = operation(
  defineRoute({
    method: "delete",
    path: "/api/v1/user/{id}",
    tag: TAG,
    operationId: "deleteUser",
    summary: "Remove a person from the current school (their roles here go; other schools untouched)",
    access: user.write,
    audit: "user",
    errors: [409, 422],
    examples: {
      409: "The users changed while they were being removed; try again",
      422: "This would leave the school without an administrator; give another user the school-admin role first",
    },
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  async (ctx, { params }) => {
    await removeMembers(ctx, [params.id]);
    return undefined;
  },
);

const Delegation = z.object({
  id: z.number().int().openapi({ description: "The delegation's id" }),
  parentId: z.number().int().openapi({ description: "The parent profile the delegate acts for" }),
  userId: z.number().int().openapi({ description: "The delegate's user id" }),
  validFrom: z.iso.date().openapi({ example: "2026-11-23", description: "The first day it holds (school-local)" }),
  validUntil: z.iso.date().openapi({ example: "2026-11-30", description: "The last day it holds (school-local)" }),
});

const Profile = z
  .object({
    user: Member,
    teacher: z
      .object({
        id: z.number().int().openapi({ description: "The teacher profile's id" }),
        subjects: z.array(z.string()).openapi({ description: "What they teach" }),
        employeeNumber: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "Their teacher profile here; null if they are no teacher here" }),
    parent: z
      .object({
        id: z.number().int().openapi({ description: "The parent profile's id" }),
        familyId: z.number().int().nullable(),
        relationship: z.string(),
      })
      .nullable()
      .openapi({ description: "Their parent profile here; null if they are no parent here" }),
    administrativeStaff: z
      .object({
        id: z.number().int().openapi({ description: "The staff profile's id" }),
        position: z.string().openapi({ description: "Their position in the school's office" }),
        employeeNumber: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "Their administrative staff profile here; null if they have none" }),
    delegations: z
      .object({
        actsFor: z.array(Delegation).openapi({ description: "The parents this person is a delegate of" }),
        delegates: z.array(Delegation).openapi({ description: "The delegates acting for this person (a parent)" }),
      })
      .openapi({ description: "Delegations in the current school, either way" }),
  })
  .openapi("UserProfile");

export const getUserProfile = operation(
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
  (ctx, { params }) => profileOf(ctx, params.id),
);
