/**
 * The document declares the headers clients use, on every operation where they apply, so the typed
 * client (client/api.d.ts) types them: `Accept-Language` on every operation; `content-language` on
 * every problem and every file written in the request's language, with the file's
 * `content-disposition`; `idempotent-replayed` on the answers of every operation that takes
 * `Idempotency-Key`; `ETag` on every GET's JSON 200; `x-d1-bookmark` taken by every operation and
 * on every answer (optional: libSQL answers none). Each declaration is checked against an answer
 * the API really gives.
 */
import { describe, expect, it } from "vitest";
import { makeTestApp } from "./helpers";

type Header = { $ref?: string; required?: boolean };
type Answer = { $ref?: string; headers?: Record<string, Header>; content?: Record<string, unknown> };
type Parameter = { $ref?: string; name?: string; in?: string };
type Operation = { operationId: string; parameters?: Parameter[]; responses: Record<string, Answer> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters?: Record<string, Parameter>; responses?: Record<string, Answer> };
};

const t = makeTestApp();
const doc = (await (await t.request("/api/openapi.json")).json()) as Document;

const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ method, path, op })),
);

const parameter = (p: Parameter) => (p.$ref ? (doc.components.parameters?.[p.$ref.split("/").at(-1) ?? ""] ?? p) : p);
const answer = (a: Answer) => (a.$ref ? (doc.components.responses?.[a.$ref.split("/").at(-1) ?? ""] ?? a) : a);
const headersOf = (a: Answer) => Object.keys(answer(a).headers ?? {}).map((h) => h.toLowerCase());
const FILES = ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/pdf"];

/** `where` for each answer of each operation that `pick` selects and that lacks `header`. */
function lacking(header: string, pick: (status: string, a: Answer, op: Operation, method: string) => boolean) {
  return operations.flatMap(({ method, op }) =>
    Object.entries(op.responses)
      .filter(([status, a]) => pick(status, answer(a), op, method) && !headersOf(a).includes(header))
      .map(([status]) => `${op.operationId} ${status}`),
  );
}

describe("the headers the document declares", () => {
  it("Accept-Language on every operation", () => {
    const without = operations
      .filter(
        ({ op }) =>
          !(op.parameters ?? []).map(parameter).some((p) => p.in === "header" && p.name === "Accept-Language"),
      )
      .map(({ op }) => op.operationId);
    expect(operations.length).toBeGreaterThan(300);
    expect(without).toEqual([]);
  });

  it("content-language on every problem and every file in the request's language, and the file's name", () => {
    const problems = lacking("content-language", (_, a) => "application/problem+json" in (a.content ?? {}));
    const files = (h: string) => lacking(h, (s, a) => s < "300" && FILES.some((f) => f in (a.content ?? {})));
    expect(problems).toEqual([]);
    expect(files("content-language")).toEqual([]);
    expect(files("content-disposition")).toEqual([]);
  });

  it("idempotent-replayed on the answers of every operation that takes Idempotency-Key", () => {
    const takesKey = (op: Operation) => (op.parameters ?? []).map(parameter).some((p) => p.name === "Idempotency-Key");
    expect(operations.filter(({ op }) => takesKey(op)).length).toBeGreaterThan(100);
    expect(lacking("idempotent-replayed", (s, _, op) => takesKey(op) && s < "300")).toEqual([]);
  });

  it("ETag on every GET's JSON 200", () => {
    expect(
      lacking("etag", (s, a, _, method) => method === "get" && s === "200" && "application/json" in (a.content ?? {})),
    ).toEqual([]);
  });

  it("x-d1-bookmark taken by every operation, and optional on every answer of every operation, 304s and problems included", () => {
    const without = operations
      .filter(
        ({ op }) => !(op.parameters ?? []).map(parameter).some((p) => p.in === "header" && p.name === "x-d1-bookmark"),
      )
      .map(({ op }) => op.operationId);
    expect(without).toEqual([]);
    expect(lacking("x-d1-bookmark", () => true)).toEqual([]);
    const declared = operations.flatMap(({ op }) =>
      Object.values(op.responses).map((a) => answer(a).headers?.["x-d1-bookmark"]),
    );
    expect(declared.filter((h) => h?.required !== false)).toEqual([]);
  });

  it("as the API sends them: a problem's and an export's content-language and file name, a replay's mark", async () => {
    const token = await t.token(2, { 1: "all" });
    const es = { "accept-language": "es" };
    const missing = await t.request("/api/v1/student/999999", { token, school: 1, headers: es });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-language")).toBe("es");
    const file = await t.request("/api/v1/student/export", { token, school: 1, headers: es });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-language")).toBe("es");
    expect(file.headers.get("content-disposition")).toContain("alumnos.xlsx");
    const post = () =>
      t.request("/api/v1/device-token", {
        method: "POST",
        token,
        school: 1,
        headers: { "idempotency-key": "openapi-headers-1" },
        body: { token: "openapi-headers-token", platform: "ios" },
      });
    const first = await post();
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.headers.get("x-d1-bookmark")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
    expect((await post()).headers.get("idempotent-replayed")).toBe("true");
    expect(missing.headers.get("x-d1-bookmark")).toMatch(/^[0-9a-f-]{59}$/);
  });
});
