/**
 * Dates have a range, generated from the OpenAPI document: every operation that takes a date
 * (`format: date`), an instant (`format: date-time`) or a school-local date and time
 * (`format: local-date-time`) in its path, query or body refuses one outside the range of
 * src/lib/dates.ts (9999-12-31, 0001-01-01, the day before the first, the day after the last) with
 * a 400 naming the field, before anything runs: never a 500 (the next local midnight of 9999-12-31
 * is in year 10000), never a record stored as `+010000-...`. The first and the last date are
 * taken: never refused as out of range, never a 500. A route is covered the day it is added, and
 * an input that looks like a date but is not declared as one fails here. Then, by hand, the last
 * day of the range through the afternoon's operations, and the arithmetic past it.
 */
import { describe, expect, it } from "vitest";
import { FIRST_DATE, LAST_DATE } from "../src/lib/dates";
import { addDays, dateIn, endOfDay, nextInstant, timeIn, zonedInstant } from "../src/lib/zoned-time";
import { readJson } from "./fixture-kit";
import { operationRequest } from "./fixtures";
import { makeFamily, PARENT_PERMISSIONS } from "./fixtures/modules/exit-permission";
import { makeTestApp, problem, type TestApp } from "./helpers";
import { openApiDocument } from "./openapi-document";

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  description?: string;
  example?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };
type Operation = {
  operationId: string;
  "x-access": string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
};

const NORTH = 1;
const { operations, resolve } = await openApiDocument<Operation, Schema>();

const branches = (s: Schema) => [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])];

const FORMATS = ["date", "date-time", "local-date-time"] as const;
type Format = (typeof FORMATS)[number];
const formatOf = (s: Schema): Format | undefined => FORMATS.find((f) => f === s.format);

/** Values outside the range, per format; the first and the last inside it. */
const BEFORE = addDays(FIRST_DATE, -1);
const AFTER = addDays(LAST_DATE, 1);
const OUTSIDE: Record<Format, string[]> = {
  date: ["9999-12-31", "0001-01-01", BEFORE, AFTER],
  "date-time": [
    "9999-12-31T23:59:00Z",
    "0001-01-01T00:00:00Z",
    `${BEFORE}T23:59:59Z`,
    `${AFTER}T00:00:00Z`,
    // The last day, but past its end in UTC.
    `${LAST_DATE}T23:00:00-05:00`,
  ],
  "local-date-time": ["9999-12-31T23:59", "0001-01-01T00:00", `${BEFORE}T23:59`, `${AFTER}T00:00`],
};
const INSIDE: Record<Format, string[]> = {
  date: [FIRST_DATE, LAST_DATE],
  "date-time": [`${FIRST_DATE}T00:00:00Z`, `${LAST_DATE}T23:59:59Z`],
  "local-date-time": [`${FIRST_DATE}T00:00`, `${LAST_DATE}T23:59`],
};

/** What a field's refusal says when its value is out of range, or not a date at all. */
const RANGE_MESSAGE = new RegExp(`${FIRST_DATE.slice(0, 4)}|calendar date|date and time like|Invalid`);

/** A value of a schema from its example (objects: their required properties). */
function example(schema: Schema | undefined): unknown {
  const s = resolve(schema);
  if (s.example !== undefined) return s.example;
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const [branch] = branches(s).filter((b) => resolve(b).type !== "null");
  if (branch) return example(branch);
  const type = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  switch (type) {
    case "object":
      return Object.fromEntries(
        Object.entries(s.properties ?? {})
          .filter(([k]) => s.required?.includes(k))
          .map(([k, v]) => [k, example(v)]),
      );
    case "array":
      return [];
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    default:
      return "x";
  }
}

/** A date field of a body: its dotted path, its format, and the body that holds a value there. */
type Field = { path: string; format: Format; body: (value: string) => unknown };

/** Every date field below `schema`, each in a body made of its branch's examples. */
function dateFields(schema: Schema | undefined, path: string[] = []): Field[] {
  const s = resolve(schema);
  const format = formatOf(s);
  if (format) return [{ path: path.join("."), format, body: (v) => v }];
  const inBranches = branches(s).flatMap((b) => dateFields(b, path));
  const inItems = s.items
    ? dateFields(s.items, [...path, "0"]).map((f) => ({ ...f, body: (v: string) => [f.body(v)] }))
    : [];
  const inProperties = Object.entries(s.properties ?? {}).flatMap(([name, property]) =>
    dateFields(property, [...path, name]).map((f) => ({
      ...f,
      body: (v: string) => ({ ...(example({ ...s, example: undefined }) as object), [name]: f.body(v) }),
    })),
  );
  return [...inBranches, ...inItems, ...inProperties];
}

/** Every string of a schema that looks like a date (its example or pattern) without a date format. */
function undeclared(schema: Schema | undefined, where: string): string[] {
  const s = resolve(schema);
  const type = Array.isArray(s.type) ? s.type : [s.type];
  const looks =
    type.includes("string") &&
    !s.enum &&
    ((typeof s.example === "string" && /^\d{4}-\d{2}-\d{2}(T|$)/.test(s.example)) ||
      /\\d\{4\}-\\d\{2\}/.test(s.pattern ?? "") ||
      /YYYY-MM-DD/.test(s.description ?? ""));
  return [
    ...(looks && !formatOf(s) ? [where] : []),
    ...branches(s).flatMap((b) => undeclared(b, where)),
    ...(s.items ? undeclared(s.items, `${where}[]`) : []),
    ...Object.entries(s.properties ?? {}).flatMap(([k, v]) => undeclared(v, `${where}.${k}`)),
  ];
}

/** What an operation takes that is a date: its parameters and its body's fields. */
function targetsOf(op: Operation) {
  const params = (op.parameters ?? [])
    .filter((p) => p.in === "query" || p.in === "path")
    .flatMap((p) => {
      const format =
        formatOf(resolve(p.schema)) ?? branches(resolve(p.schema)).map(resolve).map(formatOf).find(Boolean);
      return format ? [{ param: p, format }] : [];
    });
  const body = op.requestBody ? dateFields(op.requestBody.content["application/json"]?.schema) : [];
  return { params, body };
}

const caller = async (t: TestApp, op: Operation) =>
  op["x-access"] === "public" ? undefined : await t.token(1, {}, true);

/** The operation's request with `value` in the parameter `name` (a query's or a path's). */
async function withParam(t: TestApp, path: string, op: Operation, param: Parameter, value: string) {
  const template = param.in === "path" ? path.replace(`{${param.name}}`, encodeURIComponent(value)) : path;
  const { url, body } = await operationRequest(t, template, op);
  if (param.in === "path") return { url, body };
  const [base, search = ""] = url.split("?");
  const query = new URLSearchParams(search);
  query.set(param.name, value);
  return { url: `${base}?${query}`, body };
}

const dated = operations
  .map(({ path, method, op }) => ({ path, method, op, ...targetsOf(op) }))
  .filter((o) => o.params.length > 0 || o.body.length > 0);

describe("the OpenAPI document", () => {
  it("has operations that take dates, instants and school-local date-times", () => {
    const formats = new Set(dated.flatMap((o) => [...o.params.map((p) => p.format), ...o.body.map((f) => f.format)]));
    expect([...formats].sort()).toEqual([...FORMATS].sort());
    expect(dated.length).toBeGreaterThan(30);
  });

  it("declares every input that looks like a date as one (format date, date-time or local-date-time)", () => {
    const missing = operations.flatMap(({ op }) => [
      ...(op.parameters ?? [])
        .filter((p) => p.in !== "header")
        .flatMap((p) => undeclared(p.schema, `${op.operationId} ${p.in} ${p.name}`)),
      ...undeclared(op.requestBody?.content["application/json"]?.schema, `${op.operationId} body`),
    ]);
    expect(missing, "use schoolDate, dateTime or schoolDateTime of src/lib/dates.ts").toEqual([]);
  });

  it("says the range in the description of every date input", () => {
    const silent = dated.flatMap(({ op, params, body }) => {
      const schemas = [
        ...params.map((p) => ({ where: `${op.operationId} ${p.param.name}`, s: resolve(p.param.schema) })),
        ...body.map((f) => ({ where: `${op.operationId} body ${f.path}`, s: fieldSchema(op, f.path) })),
      ];
      return schemas
        .filter(
          ({ s }) =>
            !(s.description?.includes(String(FIRST_DATE.slice(0, 4))) && s.description.includes(LAST_DATE.slice(0, 4))),
        )
        .map(({ where }) => where);
    });
    expect(silent).toEqual([]);
  });
});

/** The schema of a body field by its dotted path (the first branch that has it). */
function fieldSchema(op: Operation, path: string): Schema {
  const find = (schema: Schema | undefined, steps: string[]): Schema | undefined => {
    const s = resolve(schema);
    if (steps.length === 0) return s;
    const [step, ...rest] = steps;
    for (const b of branches(s)) {
      const found = find(b, steps);
      if (found) return found;
    }
    if (step === "0" && s.items) return find(s.items, rest);
    const property = step === undefined ? undefined : s.properties?.[step];
    return property ? find(property, rest) : undefined;
  };
  return find(op.requestBody?.content["application/json"]?.schema, path.split(".")) ?? {};
}

for (const { path, method, op, params, body } of dated) {
  describe(`${method} ${path} (${op.operationId})`, () => {
    it("refuses a date outside the range with a 400 naming the field", async () => {
      const t = makeTestApp();
      const token = await caller(t, op);
      for (const { param, format } of params) {
        for (const value of OUTSIDE[format]) {
          const { url, body: sent } = await withParam(t, path, op, param, value);
          const res = await t.request(url, { method, token, school: NORTH, body: sent });
          const said = await res.clone().text();
          expect(res.status, `${param.name}=${value}: ${said}`).toBe(400);
          expect(
            (await problem(res)).errors?.map((e) => e.path),
            `${param.name}=${value}`,
          ).toContain(param.name);
        }
      }
      for (const field of body) {
        for (const value of OUTSIDE[field.format]) {
          const { url } = await operationRequest(t, path, op);
          const res = await t.request(url, { method, token, school: NORTH, body: field.body(value) });
          const said = await res.clone().text();
          expect(res.status, `${field.path}: ${value}: ${said}`).toBe(400);
          expect(
            (await problem(res)).errors?.map((e) => e.path),
            `${field.path}: ${value}`,
          ).toContain(field.path);
        }
      }
    });

    it("takes the first and the last date: never refused as out of range, never a 500", async () => {
      const t = makeTestApp();
      const token = await caller(t, op);
      // Another rule may still refuse the field (an end before the example's start, a day after today).
      const answers = async (res: Response, field: string, value: string) => {
        const said = await res.clone().text();
        expect(res.status, `${field}: ${value}: ${said}`).toBeLessThan(500);
        if (res.status !== 400) return;
        const refusals = ((await problem(res)).errors ?? []).filter((e) => e.path === field).map((e) => e.message);
        expect(
          refusals.filter((r) => RANGE_MESSAGE.test(r)),
          `${field}: ${value}: ${said}`,
        ).toEqual([]);
      };
      for (const { param, format } of params) {
        for (const value of INSIDE[format]) {
          const { url, body: sent } = await withParam(t, path, op, param, value);
          await answers(await t.request(url, { method, token, school: NORTH, body: sent }), param.name, value);
        }
      }
      for (const field of body) {
        for (const value of INSIDE[field.format]) {
          const { url } = await operationRequest(t, path, op);
          await answers(
            await t.request(url, { method, token, school: NORTH, body: field.body(value) }),
            field.path,
            value,
          );
        }
      }
    });
  });
}

describe("the last day of the range", () => {
  it("is a day like any other: asked for, read and printed, and computed past (its next midnight, weeks ahead)", async () => {
    const t = makeTestApp();
    // Wednesday 2099-12-30, 09:00 in Mexico City: the last date is tomorrow, and four weeks ahead is in 2100.
    t.clock.current = new Date(`${addDays(LAST_DATE, -1)}T15:00:00.000Z`);
    const family = await makeFamily(t, NORTH);
    const parent = await t.token(family.userId, { [NORTH]: [...PARENT_PERMISSIONS, "route.family"] });
    const admin = await t.token(2, { [NORTH]: "all" });

    const dry = await t.request("/api/v1/exit-permission/dry-run", {
      method: "POST",
      token: parent,
      school: NORTH,
      body: { kind: "no_after_school", studentId: family.studentId, date: LAST_DATE },
    });
    expect(dry.status, await dry.clone().text()).toBe(200);
    const verdict = await readJson<{ latest: string; deadline: string | null; failures: { code: string }[] }>(dry);
    expect(verdict.latest > LAST_DATE, verdict.latest).toBe(true);
    expect(verdict.deadline).toMatch(new RegExp(`^${LAST_DATE}T`));

    for (const path of [
      `/api/v1/transportation-summary?date=${LAST_DATE}`,
      `/api/v1/transportation-summary/pending?date=${LAST_DATE}`,
      `/api/v1/school-schedule/day?date=${LAST_DATE}&level=elementary`,
      `/api/v1/route-availability/school?date=${LAST_DATE}`,
      `/api/v1/route-availability-student/final-status/pdf?date=${LAST_DATE}`,
      `/api/v1/transportation-summary?date=${FIRST_DATE}`,
    ]) {
      const res = await t.request(path, { token: admin, school: NORTH });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }
    const mine = await t.request(`/api/v1/route/mine?date=${LAST_DATE}`, { token: parent, school: NORTH });
    expect(mine.status, await mine.clone().text()).toBe(200);

    // An invitation for the last day expires at its end, the first instant of the next year (in UTC too).
    const invitation = await t.request("/api/v1/invitation", {
      method: "POST",
      token: admin,
      school: NORTH,
      body: { kind: "general", title: "New year", date: LAST_DATE, studentIds: [family.studentId] },
    });
    expect(invitation.status, await invitation.clone().text()).toBe(201);
    expect((await readJson<{ expiresAt: string }>(invitation)).expiresAt).toBe(
      zonedInstant(addDays(LAST_DATE, 1), "00:00", "America/Mexico_City").toISOString(),
    );
  });

  it("computes past it in every zone without leaving four-digit years", () => {
    for (const zone of ["Pacific/Kiritimati", "Pacific/Pago_Pago", "America/Mexico_City", "Asia/Kathmandu", "UTC"]) {
      // The next midnight on the zone's clocks: 2100-01-01 00:00 there (10:00 the day before in UTC at +14).
      const end = endOfDay(LAST_DATE, zone);
      expect([dateIn(zone, end), timeIn(zone, end)], zone).toEqual(["2100-01-01", "00:00"]);
      const next = nextInstant(zone, new Date(`${LAST_DATE}T23:59:59.000Z`), "08:00");
      expect([dateIn(zone, next), timeIn(zone, next)], zone).toEqual([dateIn(zone, next), "08:00"]);
      expect(next.getTime()).toBeGreaterThan(Date.parse(`${LAST_DATE}T23:59:59.000Z`));
      const first = endOfDay(addDays(FIRST_DATE, -1), zone);
      expect([dateIn(zone, first), timeIn(zone, first)], zone).toEqual([FIRST_DATE, "00:00"]);
    }
    expect(addDays(LAST_DATE, 4 * 7)).toBe("2100-01-28");
    expect(addDays(FIRST_DATE, -1)).toBe("1999-12-31");
    expect(() => addDays("9999-12-31", 1)).toThrow(RangeError);
    expect(() => addDays("2027-02-30", 1)).toThrow(RangeError);
  });
});
