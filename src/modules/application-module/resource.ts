/**
 * The application module catalogue: platform records shared by every school, managed by super-admins. Built-in modules
 * (src/lib/app-modules.ts, ids below 1000) are what routes are gated by: their key cannot change
 * and they cannot be deleted (422). Created modules gate no route; clients read their state.
 * Keys never change (clients and routes know modules by key): PUT takes name and description.
 */
import { z } from "@hono/zod-openapi";
import { everyShard } from "../../db/platform-copies";
import { ApplicationModules, applicationModules } from "../../db/schema/application-module";
import { FIRST_CUSTOM_MODULE_ID } from "../../lib/app-modules";
import { unprocessable } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { permissions } from "./permissions";

/** A module key: lowercase kebab-case, as routes declare it (`exit-permissions`). */
export const ModuleKey = z
  .string()
  .max(40)
  .regex(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, zodMessage(m`Expected a lowercase kebab-case key like lost-articles`))
  .openapi({ example: "lost-articles", description: "The module's key, lowercase kebab-case, as routes name it" });

const Name = text({ max: 100 }).openapi({
  example: "Lost articles",
  description: "The module's name, as schools see it",
});
const Description = text({ max: 500, min: 0 }).openapi({
  example: "Lost and found: claims, deliveries, donations",
  description: "What the module covers",
});

export const ApplicationModuleRecord = RecordBase.extend({
  key: z.string().openapi({ example: "lost-articles", description: "The module's key, as routes name it" }),
  name: z.string().openapi({ example: "Lost articles", description: "The module's name, as schools see it" }),
  description: z.string().openapi({ description: "What the module covers" }),
  builtIn: z.boolean().openapi({ description: "Defined by the service (routes are gated by it); cannot be deleted" }),
});

export const isBuiltIn = (id: number) => id < FIRST_CUSTOM_MODULE_ID;

export const catalogue = defineResource({
  name: "applicationModule",
  plural: "applicationModules",
  label: m`Application module`,
  path: "/api/v1/application-module",
  tag: "Schools",
  scope: "platform",
  data: ApplicationModules,
  record: ApplicationModuleRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    key: row.key,
    name: row.name,
    description: row.description,
    builtIn: isBuiltIn(row.id),
  }),
  conflictMessage: m`An application module with this key already exists`,
  // Every shard keeps the catalogue (its schools' roles and states point at it): a row written
  // here is copied to each (docs/scaling.md "Anchors").
  anchors: (ctx) => everyShard(ctx),
});

export const listApplicationModules = catalogue.list({
  access: permissions.read,
  filters: {
    name: {
      schema: searchTerm("Part of the module name"),
      where: (_ctx, v: string) => contains(applicationModules.nameSearch, v),
      example: "trans",
    },
  },
  sort: { key: applicationModules.key, name: applicationModules.name },
  defaultOrder: [{ by: applicationModules.key }],
  summary: "List the application module catalogue (paginated), by key",
});

export const getApplicationModule = catalogue.get({ access: permissions.read });

export const createApplicationModule = catalogue.create({
  access: permissions.manage,
  input: z.object({ key: ModuleKey, name: Name, description: Description.default("") }),
  summary: "Add a module to the catalogue (platform); every school has it enabled until switched off",
});

export const updateApplicationModule = catalogue.update({
  access: permissions.manage,
  input: z.object({ name: Name.optional(), description: Description.optional() }),
  summary: "Rename or describe a module of the catalogue (platform); its key never changes",
});

export const deleteApplicationModule = catalogue.delete({
  access: permissions.manage,
  check: async (ctx, { id }) => {
    if (!isBuiltIn(id)) return;
    await catalogue.find(ctx, id); // 404 for an id no module has
    throw unprocessable(m`Application module ${id} is built in and cannot be deleted`);
  },
  errors: [422],
  examples: { 422: "Application module 42 is built in and cannot be deleted" },
  summary: "Delete a created module from the catalogue (platform), with every school's state of it",
});
