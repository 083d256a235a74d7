/**
 * The error responses the OpenAPI document declares: each status shows an example of its own, and
 * `Problem.type` is the enum of the problem types the API answers. The document is read as data
 * (no text parsing), and real error answers are checked against the same schema.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PROBLEMS, ProblemSchema, type ProblemStatus, problemType } from "../src/lib/errors";
import { DEMO, makeTestApp } from "./helpers";

type MediaType = { schema?: unknown; example?: Record<string, unknown> };
type ResponseObject = { content?: Record<string, MediaType>; $ref?: string };
type Operation = { operationId: string; responses: Record<string, ResponseObject> };
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

  it("shows, for each status, an example of that status", () => {
    const seen = new Set<number>();
    for (const { op, code, response } of errorResponses()) {
      const media = response.content?.["application/problem+json"];
      const where = `${op} ${code}`;
      expect(media?.example, where).toMatchObject({
        status: code,
        type: problemType(code as ProblemStatus),
      });
      // The example is a valid Problem: the same schema the document declares.
      expect(ProblemSchema.safeParse(media?.example).success, where).toBe(true);
      seen.add(code);
    }
    // The statuses every client must handle are all there, each with its own example.
    for (const status of [400, 401, 403, 404, 415, 500, 503]) expect(seen, String(status)).toContain(status);
    const examples = [...seen].map((code) => JSON.stringify(errorResponses().find((e) => e.code === code)?.response));
    expect(new Set(examples).size).toBe(seen.size);
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
