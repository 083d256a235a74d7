/**
 * How the generated suites (test/conformance-suite.ts) make a real record of each resource: every
 * module's fixture (`test/fixtures/modules/<name>.ts`), keyed by collection path. An operation uses the fixture whose path is the
 * longest prefix of its own; a route with an `{id}` whose resource has no fixture fails the suite,
 * so every new resource adds one beside its module.
 */
import { createVia, type Fixture, type Fixtures } from "./fixture-kit";
import type { TestApp } from "./helpers";

const modules = import.meta.glob<{ fixtures: Fixtures }>("./fixtures/modules/*.ts", { eager: true });

export const FIXTURES: Record<string, Fixture> = Object.assign({}, ...Object.values(modules).map((m) => m.fixtures));

export { asSuperAdmin, createVia, uniq } from "./fixture-kit";
export type { Fixture };

/** The parts of an OpenAPI document a derived fixture reads. */
interface BodySchema {
  $ref?: string;
  properties?: Record<string, BodySchema>;
  required?: string[];
  example?: unknown;
}
export type Doc = {
  paths: Record<
    string,
    Record<string, { operationId: string; requestBody?: { content: Record<string, { schema?: BodySchema }> } }>
  >;
  components: { schemas: Record<string, BodySchema> };
};

/**
 * The fixture of a resource no module fixture names (test/fixtures/modules/): a record made by its
 * collection's POST with a body of the create schema's examples, and
 * each other operation's body from its own schema's examples (every property that has one). Undefined when the collection has no
 * such POST or a required property has no example (then the resource needs a fixture of its own:
 * its create names records of others).
 */
export function derivedFixture(doc: Doc, path: string): Fixture | undefined {
  const collection = path.replace(/\/\{id\}.*$/, "");
  const resolve = (schema: BodySchema | undefined): BodySchema => {
    let s = schema ?? {};
    while (s.$ref) s = doc.components.schemas[s.$ref.split("/").at(-1) ?? ""] ?? {};
    return s;
  };
  // Every property that has an example (an update's are all optional), as long as the required ones have.
  const example = (schema: BodySchema | undefined): Record<string, unknown> | undefined => {
    const s = resolve(schema);
    const given = Object.entries(s.properties ?? {})
      .map(([k, v]) => [k, resolve(v).example] as const)
      .filter(([, v]) => v !== undefined);
    const names = new Set(given.map(([k]) => k));
    return (s.required ?? []).every((k) => names.has(k)) ? Object.fromEntries(given) : undefined;
  };
  const body = (op: Doc["paths"][string][string] | undefined) =>
    example(op?.requestBody?.content["application/json"]?.schema);
  const create = body(doc.paths[collection]?.post);
  if (!create) return undefined;
  const bodies: Record<string, unknown> = {};
  for (const [p, item] of Object.entries(doc.paths)) {
    if (!p.startsWith(`${collection}/`)) continue;
    for (const op of Object.values(item)) {
      const made = op.requestBody ? body(op) : undefined;
      if (made) bodies[op.operationId] = made;
    }
  }
  return { create: (t, school) => createVia(t, collection, school, create), bodies };
}

/** The fixture of an operation's path: the one whose collection path is the longest prefix of it. */
export function fixtureFor(path: string): Fixture | undefined {
  const key = Object.keys(FIXTURES)
    .filter((p) => path === p || path.startsWith(`${p}/`))
    .sort((a, b) => b.length - a.length)[0];
  return key ? FIXTURES[key] : undefined;
}

/**
 * The request of an operation of the OpenAPI document (`path` a template) with its fixture's body
 * and path parameters, made now (records they refer to are made in the first school): `{id}` is
 * `init.id` (default 1), `{...Id}` is `init.parentId` (default 1), `extra` fields are added to the body.
 * A required query parameter (a lookup by another key: `?familyNumber=`) is the fixture's `params`
 * value for it, else its example.
 */
export async function operationRequest(
  t: TestApp,
  path: string,
  op: {
    operationId: string;
    requestBody?: unknown;
    parameters?: { name: string; in: string; required?: boolean; schema?: { example?: unknown } }[];
  },
  init: {
    id?: string | number;
    parentId?: number;
    extra?: Record<string, unknown>;
    /** The body to start from instead of the fixture's (still under `extra`). */
    base?: unknown;
  } = {},
) {
  const fixture = fixtureFor(path);
  let url = path.replace("{id}", String(init.id ?? 1)).replace(/\{(\w+Id)\}/g, String(init.parentId ?? 1));
  for (const [, name] of url.matchAll(/\{(\w+)\}/g)) {
    const make = name ? fixture?.params?.[name] : undefined;
    url = url.replace(`{${name}}`, make ? await make(t, 1) : "documents");
  }
  const query = new URLSearchParams();
  for (const p of op.parameters ?? []) {
    if (p.in !== "query" || !p.required) continue;
    const make = fixture?.params?.[p.name];
    query.set(p.name, make ? await make(t, 1) : String(p.schema?.example ?? ""));
  }
  if (query.size > 0) url = `${url}?${query}`;
  const given = op.requestBody ? (init.base ?? fixture?.bodies?.[op.operationId] ?? {}) : undefined;
  const made = typeof given === "function" ? await given(t, 1) : given;
  const body = init.extra && made !== undefined ? { ...(made as object), ...init.extra } : made;
  return { url, body };
}

/** Calls an operation with its fixture's request (`operationRequest`), in `init.school` (default the first). */
export async function callOperation(
  t: TestApp,
  method: string,
  path: string,
  op: Parameters<typeof operationRequest>[2],
  init: {
    token?: string;
    id?: string | number;
    parentId?: number;
    school?: number;
    extra?: Record<string, unknown>;
    base?: unknown;
  },
) {
  const { url, body } = await operationRequest(t, path, op, init);
  return t.request(url, { method, token: init.token, school: init.school ?? 1, body });
}
