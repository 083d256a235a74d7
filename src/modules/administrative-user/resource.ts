/**
 * Administrative staff: the people who hold the built-in "staff" role in the current school, with
 * their profile (position, employee number). The resource's `id` is the profile's, `userId` the
 * person's. What creating, editing and removing one does: src/modules/teacher/staff.ts.
 */
import { z } from "@hono/zod-openapi";
import { ctxOf } from "../../lib/context";
import { defineResource, IdParams, nonEmpty, RecordBase } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import {
  createBody,
  createStaff,
  EmployeeNumber,
  joinPerson,
  notRemoved,
  PersonRecord,
  personFields,
  personFilters,
  personUpdate,
  removeStaff,
  updateStaff,
} from "../teacher/staff";
import { permissions } from "./permissions";
import { administrativeUsers } from "./schema";

const Position = text({ max: 100, min: 0 }).openapi({ example: "Registrar", description: "Job title" });

const Record = RecordBase.extend({
  ...PersonRecord,
  position: z.string().openapi({ example: "Registrar" }),
  employeeNumber: z.string().nullable().openapi({ example: "A-0007" }),
}).openapi({ description: "`id` is the staff profile's; `userId` the person's" });

export const administrativeUserResource = defineResource({
  name: "administrativeUser",
  plural: "administrativeUsers",
  label: "Administrative user",
  entity: "administrative-user",
  path: "/api/v1/administrative-user",
  tag: "People",
  scope: "school",
  table: administrativeUsers,
  record: Record,
  view: {
    fields: {
      ...personFields(administrativeUsers),
      position: administrativeUsers.position,
      employeeNumber: administrativeUsers.employeeNumber,
    },
    join: joinPerson(administrativeUsers),
  },
  toRecord: (row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    userId: row.userId,
    firstName: row.firstName,
    lastName: row.lastName,
    email: row.email,
    phone: row.phone,
    status: row.status,
    language: row.language,
    position: row.position,
    employeeNumber: row.employeeNumber,
  }),
  visibleTo: () => notRemoved(administrativeUsers),
  conflictMessage: "This person is already administrative staff of this school, or the employee number is taken",
});

const resource = administrativeUserResource;

const filters = {
  ...personFilters(administrativeUsers),
  position: {
    schema: searchTerm("Part of the position"),
    where: (term: string) => contains(administrativeUsers.position, term),
    example: "Registrar",
  },
};

export const listAdministrativeUsers = resource.list({
  access: permissions.read,
  filters,
  summary: "List the current school's administrative staff (paginated), oldest first",
});

export const getAdministrativeUser = resource.get({ access: permissions.read });

const CreateBody = createBody({
  position: Position.optional(),
  employeeNumber: EmployeeNumber.optional(),
});

export const createAdministrativeUser = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/administrative-user",
    tag: "People",
    operationId: "createAdministrativeUser",
    summary: "Make a person administrative staff of the current school",
    description:
      "Send `userId` (one of this school's people) or `phone` and `firstName` (anyone: the same user when the " +
      "number is known, in any school, keeping their name; a new invited user when not), with the `position` and " +
      "`employeeNumber`. 409 if they already are staff here, or the employee number is taken.",
    access: permissions.write,
    audit: "administrative-user",
    errors: [409],
    request: { body: jsonBody(CreateBody, "AdministrativeUserCreate") },
    responses: { 201: json(resource.record, "The new administrative user") },
  }),
  async (c) => {
    const { position, employeeNumber, ...person } = c.req.valid("json");
    const profile = {
      ...(position !== undefined ? { position } : {}),
      ...(employeeNumber !== undefined ? { employeeNumber } : {}),
    };
    const record = await createStaff(ctxOf(c), resource, "staff", person, profile);
    return c.json(record as z.infer<typeof Record>, 201);
  },
);

const UpdateBody = nonEmpty(
  z.strictObject({
    ...personUpdate,
    position: Position.optional(),
    employeeNumber: EmployeeNumber.nullable().optional(),
  }),
);

export const updateAdministrativeUser = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/administrative-user/{id}",
    tag: "People",
    operationId: "updateAdministrativeUser",
    summary: "Update an administrative user: the person's name or email, position, employee number",
    description:
      "The name and email are the person's (the same user wherever they belong). 409: employee number taken.",
    access: permissions.write,
    audit: "administrative-user",
    errors: [409],
    request: { params: IdParams, body: jsonBody(UpdateBody, "AdministrativeUserUpdate") },
    responses: { 204: noContent },
  }),
  async (c) => {
    const { position, employeeNumber, ...person } = c.req.valid("json");
    const profile = {
      ...(position !== undefined ? { position } : {}),
      ...(employeeNumber !== undefined ? { employeeNumber } : {}),
    };
    await updateStaff(ctxOf(c), resource, c.req.valid("param").id, person, profile);
    return c.body(null, 204);
  },
);

export const deleteAdministrativeUser = operation(
  defineRoute({
    method: "delete",
    path: "/api/v1/administrative-user/{id}",
    tag: "People",
    operationId: "deleteAdministrativeUser",
    summary: "Remove an administrative user (the staff role here; the user stays)",
    access: permissions.write,
    audit: "administrative-user",
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  async (c) => {
    await removeStaff(ctxOf(c), resource, c.req.valid("param").id, "staff");
    return c.body(null, 204);
  },
);

export const exportAdministrativeUsers = resource.export({
  access: permissions.read,
  list: listAdministrativeUsers,
  filename: "administrative-staff.xlsx",
  sheet: "Administrative staff",
  columns: [
    "Id",
    "User id",
    "First name",
    "Last name",
    "Phone",
    "Email",
    "Status",
    "Language",
    "Position",
    "Employee number",
    "Created at",
  ],
  cells: (row, ctx) => {
    const a = resource.toRecord(row, ctx);
    return [
      a.id,
      a.userId,
      a.firstName,
      a.lastName,
      a.phone,
      a.email,
      a.status,
      a.language,
      a.position,
      a.employeeNumber,
      a.createdAt,
    ];
  },
  summary: "Export the current school's administrative staff to Excel (.xlsx), with the list's filters",
  file: "An .xlsx workbook with one sheet of administrative staff, oldest first (streamed)",
});
