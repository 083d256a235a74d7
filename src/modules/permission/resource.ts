/**
 * Permission (spec 4.5): the access-control resource. Named capabilities shared by every school;
 * roles grant them. Built-in permissions (the code's catalogue) cannot be renamed or deleted.
 */
import { z } from "@hono/zod-openapi";
import { asc } from "drizzle-orm";
import { permissions } from "../../db/core";
import { PERMISSIONS } from "../../lib/access";
import { unprocessable } from "../../lib/errors";
import { defineResource, RecordBase, readWrite, timestamps } from "../../lib/resource";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";

const MAX_BUILTIN_ID = Math.max(...Object.values(PERMISSIONS));

const Name = z
  .string()
  .max(100)
  .regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/, "Expected a dotted lowercase name like report.export")
  .openapi({ example: "report.export" });

const refuseBuiltin = (id: number, what: string) => {
  if (id <= MAX_BUILTIN_ID) throw unprocessable(`Permission ${id} is built in and cannot be ${what}`);
};

export const permissionResource = defineResource({
  name: "permission",
  plural: "permissions",
  label: "Permission",
  path: "/api/v1/permission",
  tag: "Permissions and tasks",
  scope: "platform",
  table: permissions,
  record: RecordBase.extend({
    name: z.string().openapi({ example: "student.read" }),
    description: z.string(),
    builtIn: z.boolean().openapi({ description: "Defined by the service; cannot be renamed or deleted" }),
  }),
  toRecord: (row) => ({
    ...timestamps(row),
    name: row.name,
    description: row.description,
    builtIn: row.id <= MAX_BUILTIN_ID,
  }),
  access: readWrite("permission.read", "permission.manage"),
  create: z.object({ name: Name, description: text({ max: 500, min: 0 }).default("") }),
  update: z.object({ name: Name.optional(), description: text({ max: 500, min: 0 }).optional() }),
  filters: {
    name: { schema: searchTerm("Part of the permission name"), where: (v: string) => contains(permissions.name, v) },
  },
  sort: { name: permissions.name, id: permissions.id },
  defaultOrder: [asc(permissions.name)],
  beforeUpdate: (input, _caller, id) => {
    if (input.name !== undefined) refuseBuiltin(id, "renamed");
    return input;
  },
  beforeDelete: (_caller, id) => refuseBuiltin(id, "deleted"),
  conflictMessage: "A permission with this name already exists",
  errors: { update: [422], delete: [422] },
});
