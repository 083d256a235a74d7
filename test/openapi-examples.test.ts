/**
 * What the docs page (/api/docs, Swagger UI) shows and sends from the document's examples:
 *
 * - no body it shows holds `additionalProp1`: Swagger UI writes one (three, in fact) for every
 *   object that allows further properties (a record keyed by name, a rule failure with its facts)
 *   unless an example at that schema or above it says what they are;
 * - every date in an example is a real day (`2026-02-30` is not), and every example of a date or
 *   date-time field is one;
 * - "Try it out" pre-fills a header parameter with its example: the headers a client fills from what
 *   it holds (`Idempotency-Key`, `If-Match`, `If-None-Match`) have none, so the page never sends one
 *   fixed key with every write (each later write of that user a 422 for a day) nor a stale tag;
 * - the access-control catalogue (`/api/v1/permission`) is a tag of its own, apart from the exit
 *   permissions a parent asks for.
 */
import { describe, expect, it } from "vitest";
import { makeTestApp } from "./helpers";

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  example?: unknown;
  examples?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Media = { schema?: Schema; example?: unknown; examples?: unknown };
type Parameter = { name: string; in: string; example?: unknown; examples?: unknown; schema?: Schema };
type Operation = {
  operationId: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

const t = makeTestApp();
const doc = (await (await t.request("/api/openapi.json")).json()) as Document;

const named = (ref: string) => doc.components.schemas[ref.split("/").at(-1) ?? ""] ?? {};

/**
 * Where Swagger UI's sample of `schema` would show `additionalProp1`: an object schema that allows
 * further properties (`additionalProperties` true or a schema, `{}` included) with no example of its
 * own or above it. Named schemas are followed once per path.
 */
function additionalProps(schema: Schema | undefined, where: string, seen: readonly string[] = []): string[] {
  if (!schema) return [];
  if (schema.$ref) {
    if (seen.includes(schema.$ref)) return [];
    return additionalProps(named(schema.$ref), `${where} (${schema.$ref.split("/").at(-1)})`, [...seen, schema.$ref]);
  }
  if (schema.example !== undefined || schema.examples !== undefined) return [];
  const extra = schema.additionalProperties;
  const own = extra !== undefined && extra !== false ? [where] : [];
  return [
    ...own,
    ...[...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((s) =>
      additionalProps(s, where, seen),
    ),
    ...Object.entries(schema.properties ?? {}).flatMap(([name, s]) => additionalProps(s, `${where}.${name}`, seen)),
    ...additionalProps(schema.items, `${where}[]`, seen),
    ...(typeof extra === "object" ? additionalProps(extra, `${where}.*`, seen) : []),
  ];
}

const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
);

/** Every body the page shows: request bodies and answers, each media type. */
const bodies = operations.flatMap(({ where, op }) => [
  ...Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => ({ where: `${where} body ${type}`, media })),
  ...Object.entries(op.responses ?? {}).flatMap(([status, answer]) =>
    Object.entries(answer.content ?? {}).map(([type, media]) => ({ where: `${where} ${status} ${type}`, media })),
  ),
]);

/** Every value written as an example (or default) anywhere in the document, with where it is. */
function exampleValues(node: unknown, where: string, inExample = false): { where: string; value: unknown }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => exampleValues(v, `${where}/${i}`, inExample));
  if (node && typeof node === "object") {
    return Object.entries(node).flatMap(([k, v]) =>
      exampleValues(v, `${where}/${k}`, inExample || k === "example" || k === "examples" || k === "default"),
    );
  }
  return inExample ? [{ where, value: node }] : [];
}

/** Whether `yyyy-mm-dd` names a day of the calendar. */
function realDay(text: string): boolean {
  const [y = 0, m = 0, d = 0] = text.split("-").map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** Every schema of the document (named, and written inline in operations), with where it is. */
function schemas(node: unknown, where: string): { where: string; schema: Schema }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => schemas(v, `${where}/${i}`));
  if (!node || typeof node !== "object") return [];
  const own = "type" in node || "format" in node ? [{ where, schema: node as Schema }] : [];
  return [...own, ...Object.entries(node).flatMap(([k, v]) => schemas(v, `${where}/${k}`))];
}

describe("the document's examples, as the docs page uses them", () => {
  it("show no `additionalProp1`: every object with further properties has an example", () => {
    expect(bodies.length).toBeGreaterThan(300);
    const found = bodies.flatMap(({ where, media }) =>
      media.example !== undefined || media.examples !== undefined ? [] : additionalProps(media.schema, where),
    );
    expect(found).toEqual([]);
  });

  it("name real days: every date in an example, and every example of a date or date-time field", () => {
    const values = exampleValues(doc, "");
    const dates = values.flatMap(({ where, value }) =>
      typeof value === "string" ? [...value.matchAll(/\b\d{4}-\d{2}-\d{2}\b/g)].map((m) => ({ where, day: m[0] })) : [],
    );
    expect(dates.length).toBeGreaterThan(50);
    expect(dates.filter(({ day }) => !realDay(day))).toEqual([]);

    const typed = schemas(doc, "").filter(({ schema }) => schema.format === "date" || schema.format === "date-time");
    const wrong = typed.flatMap(({ where, schema }) => {
      const example = schema.example;
      if (example === undefined || example === null) return [];
      const ok =
        typeof example === "string" &&
        (schema.format === "date"
          ? /^\d{4}-\d{2}-\d{2}$/.test(example) && realDay(example)
          : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(example) &&
            realDay(example.slice(0, 10)) &&
            !Number.isNaN(Date.parse(example)));
      return ok ? [] : [`${where}: ${JSON.stringify(example)}`];
    });
    expect(wrong).toEqual([]);
  });

  it("leave Idempotency-Key, If-Match and If-None-Match empty in Try it out (no example to pre-fill)", () => {
    const filled = operations.flatMap(({ where, op }) =>
      (op.parameters ?? [])
        .filter((p) => p.in === "header" && /^(idempotency-key|if-match|if-none-match)$/i.test(p.name))
        .filter((p) => [p.example, p.examples, p.schema?.example, p.schema?.examples].some((e) => e !== undefined))
        .map((p) => `${where} ${p.name}`),
    );
    const declared = operations.flatMap(({ op }) =>
      (op.parameters ?? []).filter((p) => /^(idempotency-key|if-match|if-none-match)$/i.test(p.name)),
    );
    expect(declared.length).toBeGreaterThan(100);
    expect(filled).toEqual([]);
  });

  it("group the permission catalogue apart from exit permissions", () => {
    const tagsOf = (prefix: string) =>
      new Set(
        operations.filter(({ where }) => where.split(" ")[1]?.startsWith(prefix)).flatMap(({ op }) => op.tags ?? []),
      );
    expect([...tagsOf("/api/v1/permission")]).toEqual(["Access control"]);
    expect(tagsOf("/api/v1/exit-permission").has("Access control")).toBe(false);
  });
});
