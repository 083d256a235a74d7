/**
 * The error responses the OpenAPI document declares: each status shows an example of its own, each
 * operation's examples are its own (the permission it needs, the records its path names, what it
 * says of its own 409 / 422 / 429), and `Problem.type` is the enum of the problem types the API
 * answers. The document is read as data (no text parsing), and real error answers are checked
 * against the same schema; test/conformance-suite.ts checks each operation's real 403 and 404
 * against its examples.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PROBLEMS, ProblemSchema, type ProblemStatus, problemType } from "../src/lib/errors";
import { unexampledOf } from "../src/lib/route";
import { MODULES } from "../src/modules";
import { DEMO, documentedProblems, makeTestApp } from "./helpers";

type MediaType = {
  schema?: unknown;
  example?: Record<string, unknown>;
  examples?: Record<string, { value: Record<string, unknown> }>;
};
type ResponseObject = { content?: Record<string, MediaType>; $ref?: string };
type Operation = {
  operationId: string;
  "x-access"?: string;
  "x-module"?: string;
  responses: Record<string, ResponseObject>;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: { Problem: { properties: { type: { enum?: string[] } } } };
    responses?: Record<string, ResponseObject>;
  };
};

const t = makeTestApp();
let doc: Document;

beforeAll(async () => {
  doc = (await (await t.request("/api/openapi.json")).json()) as Document;
});

const errorResponses = () =>
  Object.values(doc.paths).flatMap((item) =>
    Object.values(item).flatMap((op) =>
      Object.entries(op.responses)
        // A shared response (the 503 of every operation that reads the database) by its reference.
        .map(([code, response]) => {
          const name = response.$ref?.replace("#/components/responses/", "");
          return [code, name ? (doc.components.responses?.[name] ?? {}) : response] as const;
        })
        // Problems only: the health check's 503 is its report, not a problem.
        .filter(([code, response]) => Number(code) >= 400 && response.content?.["application/problem+json"])
        .map(([code, response]) => ({ op: op.operationId, code: Number(code), response })),
    ),
  );

describe("error responses in the OpenAPI document", () => {
  it("types Problem.type as the enum of every problem type", () => {
    const expected = (Object.keys(PROBLEMS).map(Number) as ProblemStatus[]).map(problemType);
    expect(doc.components.schemas.Problem.properties.type.enum).toEqual(expected);
    expect(new Set(expected).size).toBe(Object.keys(PROBLEMS).length);
  });

  it("shows, for each status, examples of that status", () => {
    const seen = new Set<number>();
    for (const { op, code, response } of errorResponses()) {
      const media = response.content?.["application/problem+json"];
      const values = media?.examples ? Object.values(media.examples).map((e) => e.value) : [media?.example];
      expect(values.length, `${op} ${code}`).toBeGreaterThan(0);
      for (const value of values) {
        const where = `${op} ${code}`;
        expect(value, where).toMatchObject({ status: code, type: problemType(code as ProblemStatus) });
        // The example is a valid Problem: the same schema the document declares.
        expect(ProblemSchema.safeParse(value).success, where).toBe(true);
      }
      seen.add(code);
    }
    // The statuses every client must handle are all there.
    for (const status of [400, 401, 403, 404, 415, 500, 503]) expect(seen, String(status)).toContain(status);
  });

  it("names, in each 403, the permission that operation needs (and its module, where it has one)", () => {
    const ops = Object.values(doc.paths).flatMap((item) => Object.values(item));
    let checked = 0;
    for (const op of ops) {
      if (!op.responses["403"]) continue;
      const details = documentedProblems(op, 403).map((p) => p.detail);
      const access = op["x-access"] ?? "";
      const expected =
        access === "member" ? "You have no role in school 1" : `Missing permission ${access} in school 1`;
      expect(details, op.operationId).toContain(expected);
      if (op["x-module"])
        expect(details, op.operationId).toContain(`The ${op["x-module"]} module is disabled in school 1`);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
    // Not one example for all: each permission appears where it is needed.
    const firsts = new Set(
      ops.flatMap((op) =>
        documentedProblems(op, 403)
          .slice(0, 1)
          .map((p) => p.detail),
      ),
    );
    expect(firsts.size).toBeGreaterThan(50);
  });

  it("names, in each 404 of an operation on a record, that record", () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.includes("{id}")) continue;
      for (const op of Object.values(item)) {
        const details = documentedProblems(op, 404).map((p) => p.detail);
        expect(details[0], op.operationId).toMatch(/^[A-Z][a-z]+( [a-z]+)* 42 not found$/);
      }
    }
  });

  it("gives every operation's own 409, 422 and 429 an example of what it answers", async () => {
    const loaded = await Promise.all(MODULES.map((m) => m.load?.() ?? { operations: [] }));
    const missing = loaded
      .flatMap((l) => l.operations)
      .map(({ route }) => ({ op: route.operationId, statuses: unexampledOf(route) }))
      .filter((r) => r.statuses.length > 0)
      .map((r) => `${r.op}: ${r.statuses.join(", ")} (give defineRoute's examples)`);
    expect(missing).toEqual([]);
  });

  it("shows the Idempotency-Key answers on every signed-in POST and PATCH", () => {
    for (const item of Object.values(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if ((method !== "post" && method !== "patch") || op["x-access"] === "public") continue;
        expect(
          documentedProblems(op, 409).map((p) => p.title),
          op.operationId,
        ).toContain("Request in progress");
        expect(
          documentedProblems(op, 422).map((p) => p.title),
          op.operationId,
        ).toContain("Idempotency-Key reused");
      }
    }
  });

  it("answers real errors with the documented types", async () => {
    const admin = await t.token(DEMO.northAdmin.id, { 1: "all" });
    const teacher = await t.token(DEMO.northTeacher.id, { 1: ["user.read"] });
    const cases: [ProblemStatus, Promise<Response>][] = [
      [400, t.request("/api/v1/permission?pageSize=1000", { token: admin })],
      [401, t.request("/api/v1/user/me")],
      [403, t.request("/api/v1/permission", { token: teacher })],
      [404, t.request("/api/v1/documents/999999", { token: admin })],
      [
        415,
        t.request("/api/v1/auth/verify-phone-number", {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: "+15550000002",
        }),
      ],
    ];
    for (const [status, pending] of cases) {
      const res = await pending;
      expect(res.status).toBe(status);
      const body = ProblemSchema.parse(await res.json());
      expect(body.type).toBe(problemType(status));
    }
  });
});
