/**
 * Route conformance and tenant isolation, generated from the OpenAPI document: every operation the
 * app serves is checked here the day it is added, without editing this file. The operations are
 * dealt into `PARTS` test files (test/conformance-N.test.ts, each calling `conformance(N)`), so the
 * ~3,000 tests run on every core, each part on its own fresh database.
 *
 * For each operation, per its declared access (`x-access`) and scope (`x-scope`):
 * - no token -> 401, a malformed token -> 401 (unless public);
 * - a token without the declared permission (or without any school, for member routes) -> 403;
 * - an `{id}` of 0, -1 or abc -> 400; an unknown id -> 404;
 * - a record of the second school is a 404 for the first school's admin through this operation,
 *   stays untouched, and never appears in the first school's list;
 * - every mutating operation (outside sign-in and development) declares its audit entity
 *   (`x-audit`), and a successful call writes exactly one audit row for that entity and record
 *   (but an `x-destructive` one, the data reset, which would empty the suite's database).
 * - an X-School-Id naming no school -> 404, also for a super-admin.
 * - the 403 and the 404s above say what the operation's examples in the document say (the id aside).
 * - every audit row the suite's calls wrote is an object of `{ old, new }` pairs of typed values.
 * - every array of a request body with a declared `maxItems`, sent at exactly `maxItems` items in
 *   an otherwise valid body, gets past validation and is answered without a 500 (D1 binds at most
 *   100 parameters per statement: lists reach SQL as one JSON parameter).
 * Every response of every test is also checked against the statuses its operation declares
 * (test/helpers.ts `request`), so an undeclared status fails the suite.
 * Records come from each module's fixture.ts; an `{id}` route without a fixture fails here.
 */
import { and, desc, eq, gt } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { auditShapeProblems } from "./audit-shape";
import { fixturePhone } from "./fixture-kit";
import { callOperation as call, derivedFixture, fixtureFor, operationRequest } from "./fixtures";
import { allPages, documentedProblems, makeTestApp, PERMISSION_NAMES, problem, type TestApp } from "./helpers";
import { openApiDocument } from "./openapi-document";

type Operation = {
  operationId: string;
  responses: Record<
    string,
    {
      headers?: Record<string, unknown>;
      content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }>;
    }
  >;
  "x-access": string;
  "x-audit"?: string;
  "x-scope"?: "school" | "platform";
  /** A POST that only reads (a list of ids in its body): no state change, so no audit row. */
  "x-read-only"?: boolean;
  /** Removes the data the suite runs on (the data reset): its own test file checks its audit row. */
  "x-destructive"?: boolean;
  requestBody?: { content: Record<string, { schema?: Schema }> };
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema & { example?: unknown } }[];
};

/** The parts of a JSON schema the generated bodies read. */
type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  maxItems?: number;
  anyOf?: Schema[];
  enum?: unknown[];
  example?: unknown;
  maxLength?: number;
};

/** The record id the document's examples name (src/lib/route.ts). */
const EXAMPLE_ID = 42;
/** The details of an operation's documented examples of a status. */
const documented = (op: Operation, status: number) => documentedProblems(op, status).map((p) => p.detail);

const NORTH = 1;
const SOUTH = 2;
const UNKNOWN_ID = 987654321;
const UNKNOWN_SCHOOL = 999;
const ALL = PERMISSION_NAMES;

const { doc, operations, resolve } = await openApiDocument<Operation, Schema>();

/** A path's fixture: its module's (test/fixtures/modules/), else one derived from the create body's examples. */
const fixtureOf = (path: string) => fixtureFor(path) ?? derivedFixture(doc, path);

const bodySchema = (op: Operation) => resolve(op.requestBody?.content["application/json"]?.schema);

/** Where a schema has arrays (`[]` steps into the items), and whether each declares `maxItems`. */
function arraysOf(schema: Schema, path: string[] = []): { path: string[]; bounded: boolean }[] {
  const s = resolve(schema);
  const here = s.type === "array" || s.items ? [{ path, bounded: s.maxItems !== undefined }] : [];
  const inside = Object.entries(s.properties ?? {}).flatMap(([k, v]) => arraysOf(v, [...path, k]));
  const items = s.items ? arraysOf(s.items, [...path, "[]"]) : [];
  const branches = (s.anyOf ?? []).flatMap((b) => arraysOf(b, path));
  return [...here, ...inside, ...items, ...branches];
}
const boundedArrays = (schema: Schema) =>
  arraysOf(schema)
    .filter((a) => a.bounded)
    .map((a) => a.path);

/**
 * The `i`th of many distinct values a schema takes: enums in turn, unknown ids (so an id list
 * reaches its lookup), fresh phones, the example with a suffix; objects from their properties.
 */
function nth(schema: Schema, i: number): unknown {
  const s = resolve(schema);
  if (s.enum) return s.enum[i % s.enum.length];
  if (s.anyOf) {
    const like = s.anyOf.find((b) => resolve(b).type === typeof s.example) ?? s.anyOf[0];
    return nth({ ...resolve(like), example: s.example }, i);
  }
  switch (s.type) {
    case "integer":
    case "number":
      return UNKNOWN_ID + i;
    case "boolean":
      return i % 2 === 0;
    case "string": {
      if (typeof s.example === "string" && /^\+\d{8,15}$/.test(s.example)) return fixturePhone();
      const suffix = `-${i}`;
      const stem = typeof s.example === "string" ? s.example : "item";
      return `${stem.slice(0, (s.maxLength ?? 100) - suffix.length)}${suffix}`;
    }
    case "object":
      return Object.fromEntries(
        Object.entries(s.properties ?? {})
          .filter(([k]) => s.required?.includes(k))
          .map(([k, v]) => [k, nth(v, i)]),
      );
    default:
      throw new Error(`no value for a schema of type ${s.type}: teach nth() about it`);
  }
}

/** A body of the schema from its examples: its required properties only. */
function exampleBody(schema: Schema): Record<string, unknown> {
  const s = resolve(schema);
  return Object.fromEntries(
    Object.entries(s.properties ?? {})
      .filter(([k]) => s.required?.includes(k))
      .map(([k, v]) => {
        const p = resolve(v);
        return [k, p.example !== undefined ? p.example : p.type === "array" ? [] : nth(p, 0)];
      }),
  );
}

/** The first school's admin with every permission there (not a super-admin). */
const northAdmin = (t: TestApp) => t.token(2, { [NORTH]: "all" });

/** How many test files the operations are dealt into (test/conformance-1.test.ts ... -4). */
export const PARTS = 4;

/** Registers the checks of the operations dealt to `part` (0-based); the document's own checks go with part 0. */
export function conformance(part: number) {
  if (part === 0) {
    describe("the OpenAPI document", () => {
      it("has operations to check", () => {
        expect(operations.length).toBeGreaterThan(10);
      });

      it("is dealt into PARTS test files, each of them there", () => {
        const files = Object.keys(import.meta.glob("./conformance-*.test.ts")).sort();
        expect(files).toEqual(Array.from({ length: PARTS }, (_, i) => `./conformance-${i + 1}.test.ts`));
      });

      it("declares a retry-after header on every 429", () => {
        for (const { path, method, op } of operations) {
          const limited = op.responses["429"];
          if (!limited) continue;
          const headers = Object.keys(limited.headers ?? {}).map((h) => h.toLowerCase());
          expect(headers, `${method} ${path} (${op.operationId})`).toContain("retry-after");
        }
      });
    });
  }

  for (const { path, method, op } of operations.filter((_, i) => i % PARTS === part)) {
    const access = op["x-access"];
    const hasId = path.includes("{id}");

    describe(`${method} ${path} (${op.operationId}, ${access})`, () => {
      it("declares its access", () => {
        expect(access, "every operation goes through defineRoute").toBeTypeOf("string");
      });

      if (access !== "public") {
        it("answers 401 without a token, or with a malformed one", async () => {
          const t = makeTestApp();
          for (const token of [undefined, "not-a-jwt", `${await northAdmin(t)}x`]) {
            const res = await call(t, method, path, op, { token });
            expect(res.status, `token ${token?.slice(0, 10)}`).toBe(401);
            await problem(res);
          }
        });
      }

      if (access === "member" || ALL.includes(access)) {
        it("answers 404 to an X-School-Id naming no school, also for a super-admin", async () => {
          const t = makeTestApp();
          for (const token of [await t.token(1, {}, true), await northAdmin(t)]) {
            const res = await call(t, method, path, op, { token, school: UNKNOWN_SCHOOL });
            expect(res.status).toBe(404);
            const { detail } = await problem(res);
            expect(detail).toBe(`School ${UNKNOWN_SCHOOL} not found`);
            expect(documented(op, 404), "the document shows it").toContain(detail);
          }
        });

        it("answers 403 to a caller without the permission or the school", async () => {
          const t = makeTestApp();
          const token =
            access === "member" ? await t.token(2, {}) : await t.token(2, { [NORTH]: ALL.filter((p) => p !== access) });
          const res = await call(t, method, path, op, { token });
          expect(res.status).toBe(403);
          const { detail } = await problem(res);
          expect(documented(op, 403), "the document shows what it answers").toContain(detail);
        });
      }

      if (op.requestBody) {
        it("refuses a field its body does not have (400 naming it): nothing can be mass-assigned", async () => {
          const t = makeTestApp();
          const token =
            access === "public" ? undefined : access === "user" ? await t.token(2, {}) : await northAdmin(t);
          const res = await call(t, method, path, op, { token, extra: { schoolId: SOUTH, createdBy: 1 } });
          expect(res.status, await res.clone().text()).toBe(400);
          const paths = (await problem(res)).errors?.map((e) => e.path).join(", ") ?? "";
          expect(paths).toMatch(/schoolId/);
        });
      }

      if (op.requestBody) {
        it("declares maxItems on every array of its body", () => {
          const unbounded = arraysOf(bodySchema(op)).filter((a) => !a.bounded);
          expect(
            unbounded.map((a) => a.path.join(".")),
            "give each array a maxItems",
          ).toEqual([]);
        });
      }

      const arrays = op.requestBody ? boundedArrays(bodySchema(op)) : [];
      const queryArrays = (op.parameters ?? []).filter((p) => p.in === "query" && resolve(p.schema).type === "array");
      if (arrays.length > 0 || queryArrays.length > 0) {
        it("takes each array at its declared maxItems: past validation, and never a 500", {
          timeout: 60_000,
        }, async () => {
          const t = makeTestApp();
          for (const param of queryArrays) {
            // A comma-separated list (`style: form, explode: false`, as `sort` is): distinct values of its enum.
            const schema = resolve(param.schema);
            const max = schema.maxItems ?? 0;
            const values = [...new Set((resolve(schema.items).enum ?? []).map(String))].filter(
              (v, i, all) => !all.slice(0, i).some((w) => w.replace(/^-/, "") === v.replace(/^-/, "")),
            );
            expect(values.length, `${param.name}: teach this test to fill its items`).toBeGreaterThanOrEqual(max);
            const { url } = await operationRequest(t, path, op, {});
            const sep = url.includes("?") ? "&" : "?";
            const res = await t.request(`${url}${sep}${param.name}=${values.slice(0, max).join(",")}`, {
              token: await t.token(1, {}, true),
              school: NORTH,
            });
            const said = await res.clone().text();
            expect(res.status, `${param.name}: ${max} items -> ${said}`).toBeLessThan(500);
            expect(res.status, `${param.name}: ${max} items is valid -> ${said}`).not.toBe(400);
          }
          const nested = arrays.filter((path) => path.length !== 1);
          expect(nested, "arrays below the body's top level: teach this test to fill them").toEqual([]);
          const fixture = fixtureOf(path);
          const given = fixture?.bodies?.[op.operationId];
          const made = typeof given === "function" ? await given(t, NORTH) : given;
          const base = (made ?? exampleBody(bodySchema(op))) as Record<string, unknown>;
          const id = hasId ? await fixture?.create(t, NORTH) : undefined;
          for (const [name] of arrays as [string][]) {
            const array = resolve(bodySchema(op).properties?.[name]);
            const max = array.maxItems ?? 0;
            // The fixture's own items (records that exist) first, then distinct values up to the limit.
            const items = Array.isArray(base[name]) ? [...(base[name] as unknown[])].slice(0, max) : [];
            const seen = new Set(items.map((v) => JSON.stringify(v)));
            for (let i = 0; items.length < max && i < 10 * max; i++) {
              const value = nth(array.items ?? {}, i);
              if (!seen.has(JSON.stringify(value))) items.push(value);
              seen.add(JSON.stringify(value));
            }
            expect(items, `${name}: ${max} distinct items`).toHaveLength(max);
            const res = await call(t, method, path, op, {
              token: await t.token(1, {}, true),
              id,
              base,
              extra: { [name]: items },
            });
            const said = await res.clone().text();
            expect(res.status, `${name}: ${max} items -> ${said}`).toBeLessThan(500);
            expect(res.status, `${name}: ${max} items is valid -> ${said}`).not.toBe(400);
          }
        });
      }

      if (hasId) {
        const fixture = fixtureOf(path);

        it("has a fixture, so its records can be made", () => {
          expect(fixture, `add an entry for ${path} to test/fixtures.ts`).toBeDefined();
          if (op.requestBody) {
            expect(fixture?.bodies?.[op.operationId], `add bodies.${op.operationId} to its fixture`).toBeDefined();
          }
        });

        it("answers 400 to an id of 0, -1, abc or any non-digits form", async () => {
          const t = makeTestApp();
          const token = await northAdmin(t);
          for (const id of ["0", "-1", "abc", "1.5", "1e3", "0x10"]) {
            const res = await call(t, method, path, op, { token, id });
            expect(res.status, `id ${id}`).toBe(400);
            const body = await problem(res);
            expect(body.errors?.map((e) => e.path)).toContain("id");
          }
        });

        it("answers 404 to an unknown id", async () => {
          const t = makeTestApp();
          const res = await call(t, method, path, op, { token: await northAdmin(t), id: UNKNOWN_ID });
          expect(res.status).toBe(404);
          const { detail } = await problem(res);
          expect(documented(op, 404), "the document names the record it answers").toContain(
            detail.replace(String(UNKNOWN_ID), String(EXAMPLE_ID)),
          );
        });

        if (op["x-scope"] !== "platform") {
          it("hides the other school's record (404) and leaves it untouched", async () => {
            const t = makeTestApp();
            if (!fixture) throw new Error(`no fixture for ${path}`);
            const id = await fixture.create(t, SOUTH);
            const res = await call(t, method, path, op, { token: await northAdmin(t), id });
            expect(res.status).toBe(404);
            await problem(res);
            const itemGet = doc.paths[path]?.get;
            if (itemGet) {
              const again = await t.request(path.replace("{id}", String(id)), {
                token: await t.token(1, {}, true),
                school: SOUTH,
              });
              expect(again.status, "still there for its own school").toBe(200);
            }
          });
        }
      }

      const mutating = method !== "GET";
      const exempt = /^\/api\/v1\/(auth|dev)\//.test(path) || op["x-read-only"] === true;
      if (mutating && !exempt) {
        it("declares the audit entity it writes (x-audit)", () => {
          expect(op["x-audit"], "a state change without an audit row").toBeTypeOf("string");
        });

        it.skipIf(op["x-destructive"] === true)(
          "writes exactly one audit row for its record when it succeeds",
          async () => {
            const t = makeTestApp();
            const fixture = fixtureOf(path);
            if (!fixture) throw new Error(`no fixture for ${path}`);
            const entity = op["x-audit"] ?? "";
            const [last] = await t.db.select({ id: auditLog.id }).from(auditLog).orderBy(desc(auditLog.id)).limit(1);
            const since = last?.id ?? 0;
            let recordId: number;
            if (hasId) {
              const id = await fixture.create(t, NORTH);
              const rows = await t.db.select({ id: auditLog.id }).from(auditLog).orderBy(desc(auditLog.id)).limit(1);
              const before = rows[0]?.id ?? 0;
              const res = await call(t, method, path, op, { token: await northAdmin(t), id });
              expect(res.status, await res.clone().text()).toBeLessThan(300);
              // The record the call answers, if another than the path's (an accept answers the acceptance).
              const answered = (await res.json().catch(() => ({}))) as { id?: number };
              recordId = answered.id ?? id;
              const written = await t.db
                .select()
                .from(auditLog)
                .where(and(gt(auditLog.id, before), eq(auditLog.entity, entity)));
              expect(written.map((r) => r.recordId)).toEqual([recordId]);
              // A `user` route resolves no school: what it writes is the user's own, a platform row.
              const schoolId = access === "user" ? null : NORTH;
              expect(written[0]).toMatchObject({ schoolId, actorType: "user", actorId: 2 });
            } else if (method === "POST" && op.operationId.startsWith("create") && !op.requestBody) {
              throw new Error("a create without a body");
            } else if (fixture.bodies?.[op.operationId] !== undefined) {
              const res = await call(t, method, path, op, { token: await northAdmin(t) });
              expect(res.status, await res.clone().text()).toBeLessThan(300);
              const body = (await res.json().catch(() => ({}))) as { id?: number };
              const written = await t.db
                .select()
                .from(auditLog)
                .where(and(gt(auditLog.id, since), eq(auditLog.entity, entity)));
              expect(written).toHaveLength(1);
              if (body.id !== undefined) expect(written[0]?.recordId).toBe(body.id);
            } else {
              // The collection's own create: the fixture makes the record through it.
              recordId = await fixture.create(t, NORTH);
              const written = await t.db
                .select()
                .from(auditLog)
                .where(
                  and(
                    gt(auditLog.id, since),
                    eq(auditLog.entity, entity),
                    eq(auditLog.recordId, recordId),
                    eq(auditLog.action, "create"),
                  ),
                );
              expect(written).toHaveLength(1);
              expect(written[0]?.action).toBe("create");
            }
          },
        );
      }

      const collection = !hasId && method === "GET" && doc.paths[`${path}/{id}`] !== undefined;
      if (collection && op["x-scope"] !== "platform") {
        it("never lists the other school's records", async () => {
          const t = makeTestApp();
          const fixture = fixtureOf(path);
          if (!fixture) throw new Error(`no fixture for ${path}`);
          const theirs = await fixture.create(t, SOUTH);
          const ours = await fixture.create(t, NORTH);
          // Every page: the demo seed alone fills several pages of some lists.
          const all = await allPages(t, path, { token: await northAdmin(t), school: NORTH });
          const ids = all.data.map((r) => r.id);
          expect(ids).not.toContain(theirs);
          expect(ids).toContain(ours);
        });
      }
    });
  }

  // Last in the file (its tests run in order, on one database): the rows every call above wrote.
  describe("the audit rows of every operation", () => {
    it("are objects of { old, new } pairs, each value typed as its column keeps it", async () => {
      const t = makeTestApp();
      const rows = await t.db.select().from(auditLog);
      expect(rows.length).toBeGreaterThan(100);
      expect(auditShapeProblems(rows)).toEqual([]);
    });
  });
}
