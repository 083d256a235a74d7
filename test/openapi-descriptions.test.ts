/**
 * A document that teaches: every field of every schema, and every parameter, of the OpenAPI
 * document says what it is. The walk covers the named schemas, the schemas written inline in
 * operations (bodies, answers) and the parameters, so an operation added on any branch is covered
 * the day it is added; a failure names each field (`Student.firstName`, `listStudents query name`).
 *
 * A field's description is its own (`.openapi({ description })` on the zod schema) or, for a name
 * that means the same everywhere (`studentId`, `firstName`, `createdAt`), the glossary's
 * (`FIELD_DESCRIPTIONS` in src/lib/openapi-fields.ts), which the document applies where a field
 * has none. A field that is a named schema (`user: User`) is described by that schema's description
 * (`.openapi("User", { description })`). `sort` is an enum of the list's own keys (test/sort.test.ts).
 */
import { describe, expect, it } from "vitest";
import { makeTestApp } from "./helpers";

type Schema = {
  $ref?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { $ref?: string; name: string; in: string; description?: string; schema?: Schema };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, Parameter> };
};

const t = makeTestApp();
const doc = (await (await t.request("/api/openapi.json")).json()) as Document;

/** The named schema a property refers to, if it is a reference (possibly nullable). */
function referenced(property: Schema): string | undefined {
  const ref = property.$ref ?? [...(property.allOf ?? []), ...(property.anyOf ?? [])].find((s) => s.$ref)?.$ref;
  return ref?.split("/").at(-1);
}

/** Whether a property says what it is: its own description, or the one of the named schema it is. */
function described(property: Schema): boolean {
  if (property.description) return true;
  const name = referenced(property);
  return name !== undefined && !!doc.components.schemas[name]?.description;
}

/** Every property below `schema` without a description, as `where.property` (`[]` for array items). */
function undescribed(schema: Schema | undefined, where: string): string[] {
  if (!schema || schema.$ref) return [];
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [
    ...(described(property)
      ? []
      : [`${where}.${name}${referenced(property) ? ` (or describe the schema ${referenced(property)})` : ""}`]),
    ...undescribed(property, `${where}.${name}`),
  ]);
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  const values = typeof schema.additionalProperties === "object" ? [schema.additionalProperties] : [];
  return [
    ...own,
    ...branches.flatMap((b) => undescribed(b, where)),
    ...undescribed(schema.items, `${where}[]`),
    ...values.flatMap((v) => undescribed(v, `${where}{}`)),
  ];
}

const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));

describe("the OpenAPI document describes every field", () => {
  it("has schemas and operations to walk", () => {
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(100);
    expect(operations.length).toBeGreaterThan(100);
  });

  it("describes every property of every named schema", () => {
    const missing = Object.entries(doc.components.schemas).flatMap(([name, schema]) => undescribed(schema, name));
    expect(missing, "give each a description (.openapi({ description })) or a glossary entry").toEqual([]);
  });

  it("describes every property of the schemas written inline in operations", () => {
    const missing = operations.flatMap((op) => [
      ...Object.values(op.requestBody?.content ?? {}).flatMap((m) => undescribed(m.schema, `${op.operationId} body`)),
      ...Object.entries(op.responses ?? {}).flatMap(([status, r]) =>
        Object.values(r.content ?? {}).flatMap((m) => undescribed(m.schema, `${op.operationId} ${status}`)),
      ),
    ]);
    expect(missing, "give each a description (.openapi({ description })) or a glossary entry").toEqual([]);
  });

  it("describes every parameter", () => {
    const missing = operations.flatMap((op) =>
      (op.parameters ?? [])
        // A parameter declared once among the components (Accept-Language) is described there.
        .map((p) => (p.$ref ? (doc.components.parameters?.[p.$ref.split("/").at(-1) ?? ""] ?? p) : p))
        .filter((p) => !p.description && !p.schema?.description)
        .map((p) => `${op.operationId} ${p.in} ${p.name}`),
    );
    expect(missing, "give each a description").toEqual([]);
  });
});
