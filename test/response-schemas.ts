/**
 * Every 2xx JSON answer of every test checked against the schema its operation declares in the
 * app's own OpenAPI document (3.1: JSON Schema 2020-12, `$ref`s to `#/components/schemas/...`).
 * test/helpers.ts `request` calls `assertAnswerShape` after it checked the status.
 *
 * The validator is @cfworker/json-schema: it interprets schemas (no `eval` / `new Function`, which
 * workerd refuses, so not Ajv). The document is indexed once per document (per test file and set
 * of routes): its component schemas are dereferenced then, each operation's response schema the
 * first time a test meets it; a valid answer costs one walk of its body (short-circuiting), an
 * invalid one a second walk that gathers every error for the message.
 */
import { dereference, type OutputUnit, type Schema, validate } from "@cfworker/json-schema";

/** The parts of the document this module reads. */
export interface AnswerDocument {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, DeclaredResponse> }>>;
  components?: { schemas?: Record<string, unknown> };
}
interface DeclaredResponse {
  content?: Record<string, { schema?: unknown }>;
}

/** The document's base: `$ref`s (`#/components/schemas/X`) resolve against it. */
const BASE = new URL("https://school-api.test/api/openapi.json");
const DRAFT = "2020-12";

/** The validators of one document: its dereferenced components and each response met so far. */
export interface AnswerSchemas {
  lookup: Record<string, Schema | boolean>;
  responses: Map<string, Schema | null>;
}

const indexed = new WeakMap<AnswerDocument, AnswerSchemas>();

function schemasOf(doc: AnswerDocument): AnswerSchemas {
  let found = indexed.get(doc);
  if (!found) {
    const lookup: Record<string, Schema | boolean> = Object.create(null);
    // Only the components are walked: every `$ref` of the document points there. (Walking the whole
    // document would index every example as if it were a schema.)
    const root = { components: { schemas: doc.components?.schemas ?? {} } } as Schema;
    dereference(root, lookup, BASE);
    found = { lookup, responses: new Map() };
    indexed.set(doc, found);
  }
  return found;
}

/** `/api/v1/x/{id}` as a JSON pointer token. */
const token = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** The dereferenced JSON schema of an operation's answer of `status`, or null when it declares no JSON. */
function responseSchema(doc: AnswerDocument, path: string, verb: string, status: number): Schema | null {
  const schemas = schemasOf(doc);
  const key = `${verb} ${path} ${status}`;
  if (schemas.responses.has(key)) return schemas.responses.get(key) ?? null;
  const declared = doc.paths[path]?.[verb]?.responses[String(status)];
  const schema = declared?.content?.["application/json"]?.schema;
  let ready: Schema | null = null;
  if (schema !== undefined && schema !== null && typeof schema === "object") {
    ready = schema as Schema;
    // Its own `$ref`s resolved against the document's base, under a pointer of its own.
    const pointer = `/paths/${token(path)}/${verb}/responses/${status}/content/application~1json/schema`;
    dereference(ready, schemas.lookup, BASE, pointer);
  }
  schemas.responses.set(key, ready);
  return ready;
}

/** How many validation errors a failure message shows. */
const SHOWN = 6;

/** The errors worth reading: the innermost ones (a `$ref` or `properties` wrapper says only "a subschema had errors"). */
function readable(errors: OutputUnit[]): string[] {
  const leaves = errors.filter((e) => !/subschema|had errors|Property .* does not match schema/i.test(e.error));
  const shown = (leaves.length > 0 ? leaves : errors).slice(0, SHOWN);
  return shown.map((e) => `  ${e.instanceLocation}: ${e.error} (${e.keywordLocation})`);
}

/**
 * Fails the test when a 2xx JSON answer is not what its operation declares: the body against the
 * declared `application/json` schema of that status, or JSON where the operation declares none.
 * `path` is the document's template, `verb` its lower-case method.
 */
export async function assertAnswerShape(
  doc: AnswerDocument,
  op: { operationId: string },
  path: string,
  verb: string,
  res: Response,
): Promise<void> {
  if (res.status < 200 || res.status >= 300 || res.status === 204) return;
  const type = res.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) return;
  const schema = responseSchema(doc, path, verb, res.status);
  const where = `${op.operationId} (${verb.toUpperCase()} ${path}) ${res.status}`;
  if (!schema) throw new Error(`${where} answered application/json, but the operation declares no JSON for it`);
  const text = await res.clone().text();
  if (text === "") throw new Error(`${where} answered an empty application/json body`);
  const body: unknown = JSON.parse(text);
  const { lookup } = schemasOf(doc);
  if (validate(body, schema, DRAFT, lookup, true).valid) return;
  const { errors } = validate(body, schema, DRAFT, lookup, false);
  throw new Error(
    `${where}: the answer is not what the document declares:\n${readable(errors).join("\n")}\n` +
      `  body: ${text.length > 600 ? `${text.slice(0, 600)}...` : text}`,
  );
}
