/**
 * The document says what the server enforces, so generated clients and validators agree with it:
 * walked from the OpenAPI document, so an operation added on any branch is checked the day it is.
 *
 * - `X-School-Id` declares the bounds the server checks (1 to 10 digits: maximum 9999999999), and
 *   the server answers so at both ends.
 * - Every integer query parameter declares its bounds; an id (`id`, `xId`, or described as an id)
 *   starts at 1, and 0 is a 400 naming it.
 * - Every update of one record (PUT or PATCH on `/{id}`) whose JSON body has only optional fields
 *   declares `minProperties: 1`, and `{}` is a 400.
 * - Every array of integers in a request body or query declares `uniqueItems`, and a repeated item
 *   is a 400 naming it.
 * - A date or day that an answer gives declares `format: date` (or date-time).
 * - Nullable named schemas: no component is nullable itself, no `allOf` branch allows null (the
 *   other branches refuse it), and no `allOf` redefines a property of another branch (src/lib/nullable.ts).
 */
import { describe, expect, it } from "vitest";
import { fixtureFor, operationRequest } from "./fixtures";
import { makeTestApp, problem, type TestApp } from "./helpers";
import { openApiDocument } from "./openapi-document";

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  uniqueItems?: boolean;
  description?: string;
  example?: unknown;
};
type Parameter = { name: string; in: string; schema?: Schema; description?: string };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};

const NORTH = 1;
/** What src/middleware/current-school.ts accepts: 1 to 10 digits. */
const MAX_SCHOOL_ID = 9_999_999_999;

const { doc, operations, resolve } = await openApiDocument<Operation, Schema>();
const nameOf = (ref: string) => ref.split("/").at(-1) ?? "";
const types = (s: Schema) => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);
const isArray = (s: Schema) => types(s).includes("array") || s.items !== undefined;
const bodyOf = (op: Operation) => op.requestBody?.content["application/json"]?.schema;

/** Every schema below `schema` with where it is, named schemas walked once (`seen`). */
function* walk(schema: Schema | undefined, where: string, seen = new Set<string>()): Generator<[Schema, string]> {
  if (!schema) return;
  if (schema.$ref) {
    const name = nameOf(schema.$ref);
    if (seen.has(name)) return;
    seen.add(name);
    yield* walk(resolve(schema), name, seen);
    return;
  }
  yield [schema, where];
  for (const [key, property] of Object.entries(schema.properties ?? {})) yield* walk(property, `${where}.${key}`, seen);
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    yield* walk(branch, where, seen);
  }
  yield* walk(schema.items, `${where}[]`, seen);
}

/** The integer arrays of an operation's body (top-level properties: their names) and query. */
function integerArrays(op: Operation): { where: string; schema: Schema }[] {
  const found: { where: string; schema: Schema }[] = [];
  for (const [s, where] of walk(bodyOf(op), `${op.operationId} body`)) {
    if (isArray(s) && types(resolve(s.items)).includes("integer")) found.push({ where, schema: s });
  }
  for (const p of op.parameters ?? []) {
    const s = resolve(p.schema);
    if (p.in === "query" && isArray(s) && types(resolve(s.items)).includes("integer")) {
      found.push({ where: `${op.operationId} ?${p.name}`, schema: s });
    }
  }
  return found;
}

/** An id: `id`, `xId`, or a parameter that says it is one ("A route id: its riders"). */
const isId = (p: Parameter) =>
  p.name === "id" || /Id$/.test(p.name) || /\bid\b|\(user id\)/i.test(p.description ?? p.schema?.description ?? "");

const integerQuery = (op: Operation) =>
  (op.parameters ?? []).filter((p) => p.in === "query" && types(resolve(p.schema)).includes("integer"));

/** Updates of one record whose body has only optional fields. */
const optionalUpdates = operations.filter(({ path, method, op }) => {
  if ((method !== "PUT" && method !== "PATCH") || !path.endsWith("/{id}")) return false;
  const body = resolve(bodyOf(op));
  return Object.keys(body.properties ?? {}).length > 0 && (body.required ?? []).length === 0;
});

const northAdmin = (t: TestApp) => t.token(2, { [NORTH]: "all" });

describe("the document says what the server enforces", () => {
  it("X-School-Id: minimum 1, maximum 9999999999, on every operation that takes it", () => {
    const headers = operations.flatMap(({ op }) =>
      (op.parameters ?? []).filter((p) => p.in === "header" && p.name.toLowerCase() === "x-school-id"),
    );
    expect(headers.length).toBeGreaterThan(100);
    const wrong = headers.filter((p) => p.schema?.minimum !== 1 || p.schema?.maximum !== MAX_SCHOOL_ID);
    expect(wrong.map((p) => JSON.stringify(p.schema))).toEqual([]);
  });

  it("X-School-Id: the largest declared is looked up (404), one more is a 400", async () => {
    const t = makeTestApp();
    const token = await t.token(1, {}, true);
    const at = await t.request("/api/v1/student", { token, headers: { "x-school-id": String(MAX_SCHOOL_ID) } });
    expect(at.status).toBe(404);
    const past = await t.request("/api/v1/student", { token, headers: { "x-school-id": String(MAX_SCHOOL_ID + 1) } });
    expect(past.status).toBe(400);
    expect((await problem(past)).errors?.map((e) => e.path)).toEqual(["X-School-Id"]);
  });

  it("every integer query parameter declares its bounds, an id from 1", () => {
    const wrong = operations.flatMap(({ op }) =>
      integerQuery(op)
        .filter((p) => {
          const s = resolve(p.schema);
          return s.minimum === undefined || s.maximum === undefined || (isId(p) && s.minimum !== 1);
        })
        .map((p) => `${op.operationId} ?${p.name} ${JSON.stringify(p.schema)}`),
    );
    expect(wrong).toEqual([]);
  });

  it("an id query parameter of 0 is a 400 naming it", { timeout: 120_000 }, async () => {
    const t = makeTestApp();
    const token = await t.token(1, {}, true);
    let checked = 0;
    for (const { path, method, op } of operations) {
      if (method !== "GET") continue;
      for (const p of integerQuery(op).filter(isId)) {
        const { url } = await operationRequest(t, path, op, {});
        const res = await t.request(`${url}${url.includes("?") ? "&" : "?"}${p.name}=0`, { token, school: NORTH });
        expect(res.status, `${op.operationId} ?${p.name}=0`).toBe(400);
        expect(
          (await problem(res)).errors?.map((e) => e.path),
          op.operationId,
        ).toContain(p.name);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it("every update of one record with only optional fields declares minProperties 1", () => {
    expect(optionalUpdates.length).toBeGreaterThan(30);
    const wrong = optionalUpdates
      .filter(({ op }) => resolve(bodyOf(op)).minProperties !== 1)
      .map(({ method, path, op }) => `${method} ${path} (${op.operationId})`);
    expect(wrong).toEqual([]);
  });

  it("an empty body to those updates is a 400", { timeout: 120_000 }, async () => {
    const t = makeTestApp();
    for (const { path, method } of optionalUpdates) {
      const fixture = fixtureFor(path);
      if (!fixture) throw new Error(`no fixture for ${path}`);
      const id = await fixture.create(t, NORTH);
      const url = path.replace("{id}", String(id)).replace(/\{\w+Id\}/g, "1");
      const res = await t.request(url, { method, token: await northAdmin(t), school: NORTH, body: {} });
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(400);
      await problem(res);
    }
  });

  it("every array of integers a request takes declares uniqueItems", () => {
    const wrong = operations.flatMap(({ op }) =>
      integerArrays(op)
        .filter((a) => a.schema.uniqueItems !== true)
        .map((a) => a.where),
    );
    expect(wrong).toEqual([]);
  });

  it("a repeated item in those arrays is a 400 naming the field", { timeout: 120_000 }, async () => {
    const t = makeTestApp();
    const token = await t.token(1, {}, true);
    let checked = 0;
    for (const { path, method, op } of operations) {
      const body = resolve(bodyOf(op));
      for (const [name, property] of Object.entries(body.properties ?? {})) {
        const array = resolve(property);
        if (!isArray(array) || !types(resolve(array.items)).includes("integer")) continue;
        const item = resolve(array.items).minimum ?? 1;
        const hasId = path.includes("{id}");
        const fixture = fixtureFor(path);
        const id = hasId ? await fixture?.create(t, NORTH) : undefined;
        const { url, body: sent } = await operationRequest(t, path, op, { id, extra: { [name]: [item, item] } });
        const res = await t.request(url, { method, token, school: NORTH, body: sent });
        expect(res.status, `${op.operationId} ${name}: ${await res.clone().text()}`).toBe(400);
        expect(
          (await problem(res)).errors?.map((e) => e.path),
          `${op.operationId} ${name}`,
        ).toContain(name);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("a date an answer gives declares its format", () => {
    const DATE = /^(date|day|from|until|validFrom|validUntil)$|Date$|On$/;
    const seen = new Set<string>();
    const wrong: string[] = [];
    for (const { op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!status.startsWith("2")) continue;
        for (const [s, where] of walk(response.content?.["application/json"]?.schema, op.operationId, seen)) {
          for (const [key, property] of Object.entries(s.properties ?? {})) {
            const branches = [resolve(property), ...(property.anyOf ?? []).map(resolve)];
            const text = branches.some((b) => types(b).includes("string"));
            if (DATE.test(key) && text && !branches.some((b) => b.format)) wrong.push(`${where}.${key}`);
          }
        }
      }
    }
    expect(wrong, "z.iso.date() (or z.iso.datetime()) in the answer's schema").toEqual([]);
  });
});

describe("nullable named schemas (src/lib/nullable.ts)", () => {
  it("no component is nullable itself", () => {
    const nullable = Object.entries(doc.components.schemas)
      .filter(([, s]) => types(s).includes("null"))
      .map(([name]) => name);
    expect(nullable, "a field that may be null is orNull(Schema), not Schema.nullable()").toEqual([]);
  });

  it("no allOf has a branch that allows null, nor redefines another branch's property", () => {
    const wrong: string[] = [];
    for (const [name, component] of Object.entries(doc.components.schemas)) {
      for (const [s, where] of walk(component, name)) {
        if (!s.allOf) continue;
        if (s.allOf.some((b) => types(b).includes("null"))) wrong.push(`${where}: a branch allows null`);
        const defined = new Set<string>();
        for (const branch of s.allOf) {
          for (const key of Object.keys(resolve(branch).properties ?? {})) {
            if (defined.has(key)) wrong.push(`${where}.${key}: defined by two branches`);
            defined.add(key);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
