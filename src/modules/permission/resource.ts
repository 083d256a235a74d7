/**
 * Permission: the access-control resource. Named capabilities shared by every school;
 * roles grant them. Built-in permissions (declared by the modules, ids below 1000) cannot be
 * renamed or deleted; custom ones get ids from 1000 on.
 */
import { z } from "@hono/zod-openapi";
import { everyShard } from "../../db/platform-copies";
import { Permissions, permissions as table } from "../../db/schema/core";
import { FIRST_CUSTOM_PERMISSION_ID } from "../../lib/access";
import { unprocessable } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { containsAscii, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { permissions } from "./permissions";

export { FIRST_CUSTOM_PERMISSION_ID };

const Name = z
  .string()
  .max(100)
  .regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/, zodMessage(m`Expected a dotted lowercase name like report.export`))
  .openapi({ example: "report.export", description: "The permission's name: dotted lowercase, unique" });

const Description = text({ max: 500, min: 0 }).openapi({ description: "What it allows" });

const refuseBuiltin = (id: number, what: "renamed" | "deleted") => {
  if (id >= FIRST_CUSTOM_PERMISSION_ID) return;
  throw unprocessable(
    what === "renamed"
      ? m`Permission ${id} is built in and cannot be renamed`
      : m`Permission ${id} is built in and cannot be deleted`,
  );
};

const resource = defineResource({
  name: "permission",
  plural: "permissions",
  label: m`Permission`,
  path: "/api/v1/permission",
  tag: "Access control",
  scope: "platform",
  data: Permissions,
  record: RecordBase.extend({
    name: z
      .string()
      .openapi({ example: "student.read", description: "The permission's name: dotted lowercase, unique" }),
    description: z.string().openapi({ description: "What it allows" }),
    builtIn: z.boolean().openapi({ description: "Defined by the service; cannot be renamed or deleted" }),
  }),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    name: row.name,
    description: row.description,
    builtIn: row.id < FIRST_CUSTOM_PERMISSION_ID,
  }),
  conflictMessage: m`A permission with this name already exists`,
  // Every shard keeps the catalogue (its schools' roles and states point at it): a row written
  // here is copied to each (docs/scaling.md "Anchors").
  anchors: (ctx) => everyShard(ctx),
});

export const listPermissions = resource.list({
  access: permissions.read,
  filters: {
    name: {
      schema: searchTerm("Part of the permission name"),
      where: (_ctx, v: string) => containsAscii(table.name, v),
      example: "read",
    },
  },
  sort: { name: table.name, id: table.id },
  defaultOrder: [{ by: table.name }],
});

export const getPermission = resource.get({ access: permissions.read });

export const createPermission = resource.create({
  access: permissions.manage,
  input: z.object({ name: Name, description: Description.default("") }),
});

export const updatePermission = resource.update({
  access: permissions.manage,
  input: z.object({ name: Name.optional(), description: Description.optional() }),
  values: (_ctx, { id, body }) => {
    if (body.name !== undefined) refuseBuiltin(id, "renamed");
    return body;
  },
  errors: [422],
  examples: { 422: "Permission 3 is built in and cannot be renamed" },
});

export const deletePermission = resource.delete({
  access: permissions.manage,
  check: (_ctx, { id }) => refuseBuiltin(id, "deleted"),
  errors: [422],
  examples: { 422: "Permission 3 is built in and cannot be deleted" },
});
