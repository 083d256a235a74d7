/**
 * What the app serves, read once from its OpenAPI registry (every operation is registered there by
 * `router.openapi`): which methods each path template serves (for 405 and `allow`) and which
 * operations take a JSON body (for the JSON body checks). Built at the first request that needs it,
 * when every router is mounted; never per request.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";

type Registry = OpenAPIHono["openAPIRegistry"];

export interface RouteTable {
  /**
   * The methods served at `path` (upper case, with HEAD wherever GET is served), or undefined
   * when no operation has this path.
   */
  allowedMethods(path: string): string[] | undefined;
  /** Whether the operation Hono matched as `method` + `routePath` (`/x/:id` form) takes a JSON body. */
  takesJson(method: string, routePath: string): boolean;
}

type Template = { pattern: RegExp; methods: Set<string> };

function build(registry: Registry): RouteTable {
  const templates = new Map<string, Template>();
  const json = new Set<string>();
  for (const definition of registry.definitions) {
    if (definition.type !== "route") continue;
    const { method, path, request } = definition.route;
    const verb = method.toUpperCase();
    let template = templates.get(path);
    if (!template) {
      // `{name}` is one non-empty segment; everything else is literal.
      const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^/}]+\}/g, "[^/]+");
      template = { pattern: new RegExp(`^${source}$`), methods: new Set() };
      templates.set(path, template);
    }
    template.methods.add(verb);
    if (verb === "GET") template.methods.add("HEAD");
    const content = request?.body?.content ?? {};
    if (Object.keys(content).some((type) => /^application\/json$/i.test(type))) {
      // The form Hono routes by (as @hono/zod-openapi registers it).
      json.add(`${verb} ${path.replaceAll(/\/{(.+?)}/g, "/:$1")}`);
    }
  }
  const all = [...templates.values()];
  return {
    allowedMethods(path) {
      const methods = new Set<string>();
      for (const t of all) if (t.pattern.test(path)) for (const m of t.methods) methods.add(m);
      return methods.size ? [...methods].sort() : undefined;
    },
    takesJson: (method, routePath) => json.has(`${method} ${routePath}`),
  };
}

/**
 * The route table of an app, built once on first use.
 * @example
 * const routes = routeTable(app.openAPIRegistry);
 * routes().allowedMethods("/api/v1/documents/1"); // ["DELETE", "GET", "HEAD", "PUT"]
 */
export function routeTable(registry: Registry): () => RouteTable {
  let table: RouteTable | undefined;
  return () => {
    table ??= build(registry);
    return table;
  };
}
