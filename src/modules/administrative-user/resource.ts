/**
 * Administrative staff: the people who hold the built-in "staff" role in the current school, with
 * their profile (position, employee number). The resource's `id` is the profile's, `userId` the
 * person's. What creating, editing and removing one does: src/modules/teacher/staff.ts.
 */
import { z } from "@hono/zod-openapi";
import { AdministrativeUsers, administrativeUsers } from "../../db/schema/administrative-user";
import type { Ctx } from "../../lib/context";
import { m } from "../../lib/message";
import { defineResource, RecordBase } from "../../lib/resource";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import {
  joinPerson,
  notRemovedHere,
  PersonRecord,
  personFields,
  personFilters,
  personRecord,
  staffCells,
  staffColumns,
  staffOperations,
} from "../teacher/api";
import { permissions } from "./permissions";

const Position = text({ max: 100, min: 0 }).openapi({ example: "Registrar", description: "Job title" });

const Record = RecordBase.extend({
  ...PersonRecord,
  position: z.string().openapi({ example: "Registrar", description: "Their position in the school's office" }),
  employeeNumber: z.string().nullable().openapi({ example: "A-0007" }),
}).openapi({ description: "`id` is the staff profile's; `userId` the person's" });

export const administrativeUserResource = defineResource({
  name: "administrativeUser",
  plural: "administrativeUsers",
  label: m`Administrative user`,
  path: "/api/v1/administrative-user",
  tag: "People",
  scope: "school",
  data: AdministrativeUsers,
  record: Record,
  view: {
    fields: {
      id: administrativeUsers.id,
      createdAt: administrativeUsers.createdAt,
      updatedAt: administrativeUsers.updatedAt,
      userId: administrativeUsers.userId,
      ...personFields(),
      position: administrativeUsers.position,
      employeeNumber: administrativeUsers.employeeNumber,
    },
    join: joinPerson(administrativeUsers),
  },
  toRecord: (ctx, row) => ({
    ...personRecord(ctx, row),
    position: row.position,
    employeeNumber: row.employeeNumber,
  }),
  visibleTo: (ctx) => notRemovedHere(ctx, administrativeUsers),
  conflictMessage: m`This person is already administrative staff of this school, or the employee number is taken`,
});

const resource = administrativeUserResource;

const filters = {
  ...personFilters(administrativeUsers),
  position: {
    schema: searchTerm("Part of the position"),
    where: (_ctx: Ctx, term: string) => contains(administrativeUsers.positionSearch, term),
    example: "Registrar",
  },
};

export const listAdministrativeUsers = resource.list({
  access: permissions.read,
  filters,
  summary: "List the current school's administrative staff (paginated), oldest first",
});

export const getAdministrativeUser = resource.get({ access: permissions.read });

const staff = staffOperations(resource, {
  role: "staff",
  write: permissions.write,
  entity: "administrative-user",
  field: { key: "position", schema: Position },
  profile: ({ value, employeeNumber }) => ({ position: value, employeeNumber }),
  create: {
    summary: "Make a person administrative staff of the current school",
    description:
      "with the `position` and `employeeNumber`. 409 if they already are staff here, or the employee number is taken.",
    created: "The new administrative user",
  },
  update: { summary: "Update an administrative user: the person's name or email, position, employee number" },
  remove: { summary: "Remove an administrative user (the staff role here; the user stays)" },
});

export const createAdministrativeUser = staff.create;
export const updateAdministrativeUser = staff.update;
export const deleteAdministrativeUser = staff.delete;
export const exportAdministrativeUsers = resource.export({
  access: permissions.read,
  list: listAdministrativeUsers,
  filename: m`administrative-staff.xlsx`,
  sheet: m`Administrative staff`,
  columns: staffColumns(m`Position`),
  cells: (ctx, row) => {
    const r = resource.toRecord(ctx, row);
    return staffCells(r, r.position);
  },
  summary: "Export the current school's administrative staff to Excel (.xlsx), with the list's filters",
  file: "An .xlsx workbook with one sheet of administrative staff, oldest first (streamed)",
});
