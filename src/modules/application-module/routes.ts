/**
 * The current school's application modules (the per-school
 * operations) and `POST /api/v1/school/{id}/initialize-modules`. Handlers
 * parse nothing and query nothing: they call the verbs of service.ts.
 *
 * The per-school paths sit under `/api/v1/application-module/school`, beside the catalogue's
 * `/{id}`: a literal segment is matched before a template (OpenAPI 3.1 path matching), and the
 * module registers these operations first so its router does too.
 */
import { z } from "@hono/zod-openapi";
import { m, zodMessage } from "../../lib/message";
import { PageQuery, pageOf } from "../../lib/pagination";
import { recordId } from "../../lib/params";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { permissions } from "./permissions";
import { ApplicationModuleRecord, ModuleKey } from "./resource";
import { initializeModules, listSchoolModules, moduleStatus, setModules } from "./service";

const BASE = "/api/v1/application-module/school";

const SchoolApplicationModule = ApplicationModuleRecord.extend({
  enabled: z.boolean().openapi({ description: "Whether the current school has it enabled (default true)" }),
  statusUpdatedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When the school's state of it was last written; null if never" }),
  statusUpdatedBy: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "Who last switched it; null for the initial state" }),
}).openapi("SchoolApplicationModule");

const Page = pageOf(SchoolApplicationModule, "SchoolApplicationModulePage");

const BooleanString = z
  .enum(["true", "false"])
  .transform((v) => v === "true")
  .optional()
  .openapi({ description: "true: only enabled modules; false: only disabled ones" });

const KeyParams = z.object({
  key: ModuleKey.openapi({ param: { name: "key", in: "path" }, description: "The module's key" }),
});

const Status = z
  .object({
    key: z.string().openapi({ example: "transport", description: "The module's key" }),
    enabled: z.boolean().openapi({ description: "Whether the current school has it enabled" }),
  })
  .openapi("ApplicationModuleStatus");

const MAX_BULK = 100;

const BulkToggle = z
  .strictObject({
    modules: z
      .array(
        z.strictObject({
          key: ModuleKey,
          enabled: z.boolean().openapi({ description: "true to switch it on, false to switch it off" }),
        }),
      )
      .min(1)
      .max(MAX_BULK)
      .refine((items) => new Set(items.map((i) => i.key)).size === items.length, zodMessage(m`Name each module once`))
      .openapi({ description: "The modules to switch, each once" }),
  })
  .openapi({
    example: {
      modules: [
        { key: "transport", enabled: false },
        { key: "events", enabled: true },
      ],
    },
  });

const listRoute = defineRoute({
  method: "get",
  path: BASE,
  tag: "Schools",
  operationId: "listSchoolApplicationModules",
  summary: "List every application module with the current school's state of it (paginated, by key)",
  access: permissions.read,
  request: { query: z.strictObject({ ...PageQuery.shape, enabled: BooleanString }) },
  responses: { 200: json(Page, "A page of the catalogue, with the school's state of each module") },
  extensions: { "x-filters": { enabled: "false" }, "x-sort": [] },
});

const enabledRoute = defineRoute({
  method: "get",
  path: `${BASE}/enabled`,
  tag: "Schools",
  operationId: "listEnabledSchoolApplicationModules",
  summary: "List the application modules the current school has enabled (paginated, by key)",
  description: "What the app shows. The same records as the full list with `enabled=true`.",
  access: permissions.read,
  request: { query: PageQuery.strict() },
  responses: { 200: json(Page, "A page of the enabled modules") },
  extensions: { "x-filters": {}, "x-sort": [] },
});

const statusRoute = defineRoute({
  method: "get",
  path: `${BASE}/{key}/enabled`,
  tag: "Schools",
  operationId: "getSchoolApplicationModuleStatus",
  summary: "Check whether the current school has an application module enabled",
  access: permissions.read,
  request: { params: KeyParams },
  responses: { 200: json(Status, "The module's state in the current school") },
});

const toggleRoute = defineRoute({
  method: "put",
  path: `${BASE}/{key}/enabled`,
  tag: "Schools",
  operationId: "toggleSchoolApplicationModule",
  summary: "Enable or disable an application module for the current school",
  description:
    "Sets the state (idempotent: sending the current state changes nothing and writes no audit row). " +
    "Routes of a disabled module answer 403 naming it; members see a change at their next token refresh " +
    "(at most 10 minutes), super-admins at once.",
  access: permissions.toggle,
  audit: "school-module",
  request: {
    params: KeyParams,
    body: jsonBody(
      z.strictObject({ enabled: z.boolean().openapi({ description: "true to switch it on, false to switch it off" }) }),
      "ApplicationModuleToggle",
    ),
  },
  responses: { 204: noContent },
});

const bulkRoute = defineRoute({
  method: "put",
  path: BASE,
  tag: "Schools",
  operationId: "bulkToggleSchoolApplicationModules",
  summary: `Enable or disable several application modules for the current school (at most ${MAX_BULK}), all or none`,
  access: permissions.toggle,
  audit: "school-module",
  request: { body: jsonBody(BulkToggle, "ApplicationModuleBulkToggle") },
  responses: { 204: noContent },
});

const Initialized = z
  .object({
    schoolId: z.number().int().openapi({ example: 1 }),
    created: z
      .array(z.string())
      .openapi({ description: "Keys of the modules whose state this call created (enabled); [] if none" }),
  })
  .openapi("InitializedModules");

const initializeRoute = defineRoute({
  method: "post",
  path: "/api/v1/school/{id}/initialize-modules",
  tag: "Schools",
  operationId: "initializeSchoolModules",
  summary: "Initialise the application modules of a school: a state (enabled) for every catalogue module it lacks",
  description:
    "Idempotent: states that exist are left as they are. `id` is the current school (X-School-Id); " +
    "another school is a 404.",
  access: permissions.toggle,
  audit: "school",
  request: {
    params: z.object({
      id: recordId().openapi({ param: { name: "id", in: "path" }, example: 1, description: "The current school's id" }),
    }),
  },
  responses: { 200: json(Initialized, "The keys whose state was created") },
});

export const listSchoolApplicationModules = operation(listRoute, (ctx, { query }) => listSchoolModules(ctx, query));

export const listEnabledSchoolApplicationModules = operation(enabledRoute, (ctx, { query }) =>
  listSchoolModules(ctx, { ...query, enabled: true }),
);

export const getSchoolApplicationModuleStatus = operation(statusRoute, (ctx, { params }) =>
  moduleStatus(ctx, params.key),
);

export const toggleSchoolApplicationModule = operation(toggleRoute, (ctx, { params, body }) =>
  setModules(ctx, [{ key: params.key, enabled: body.enabled }]),
);

export const bulkToggleSchoolApplicationModules = operation(bulkRoute, (ctx, { body }) =>
  setModules(ctx, body.modules),
);

export const initializeSchoolModules = operation(initializeRoute, (ctx, { params }) =>
  initializeModules(ctx, params.id),
);
