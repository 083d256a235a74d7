/**
 * How the generated suites (test/conformance-suite.ts) make a real record of each resource: every
 * module's fixture (`test/fixtures/modules/<name>.ts`), keyed by collection path. An operation uses the fixture whose path is the
 * longest prefix of its own; a route with an `{id}` whose resource has no fixture fails the suite,
 * so every new resource adds one beside its module.
 */
import type { Fixture, Fixtures } from "./fixture-kit";
import type { TestApp } from "./helpers";

const modules = import.meta.glob<{ fixtures: Fixtures }>("./fixtures/modules/*.ts", { eager: true });

export const FIXTURES: Record<string, Fixture> = Object.assign({}, ...Object.values(modules).map((m) => m.fixtures));

export { asSuperAdmin, createVia, uniq } from "./fixture-kit";
export type { Fixture };

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
