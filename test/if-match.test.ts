/**
 * Safe edits, generated from the OpenAPI document: every update of one record honours `If-Match`.
 *
 * - Every PUT or PATCH of one record (a path ending in `/{id}`) declares the `If-Match` header and
 *   its 412 (an action below the record, `/{id}/confirm`, is exempt: it is guarded by the states it
 *   starts from, a 409, and its rules, a 422). The exemptions below name their reason.
 * - Every operation that declares `If-Match` declares its 412 and has a GET on its path (where the
 *   ETag it names comes from), and the other way round.
 * - For each of them, on a record its fixture makes: a stale `If-Match` is a 412 problem and the
 *   record reads the same afterwards (its GET's body and ETag); the ETag its GET answers lets the
 *   update through; `*` passes the precondition too.
 *
 * If-Match is checked where every route is served (src/lib/route.ts `IfMatch`), whatever verb
 * serves it, so an update served by a verb of its own honours it too.
 */
import { describe, expect, it } from "vitest";
import { fixtureFor, operationRequest } from "./fixtures";
import { makeTestApp, problem, type TestApp } from "./helpers";

type Operation = {
  operationId: string;
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
};

const NORTH = 1;
const STALE = 'W/"0000000000000000"';

/** Updates of one record that take no If-Match, and why. */
const EXEMPT: Record<string, string> = {
  updateNotification:
    "sets one flag of the caller's own inbox copy (read or unread) to the value sent: no other writer, nothing a stale read could lose",
};

const t0 = makeTestApp();
const doc = (await (await t0.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);
const takesIfMatch = (op: Operation) =>
  (op.parameters ?? []).some((p) => p.in === "header" && p.name.toLowerCase() === "if-match");
const guarded = operations.filter(({ op }) => takesIfMatch(op));

/** The first school's admin with every permission there. */
const northAdmin = (t: TestApp) => t.token(2, { [NORTH]: "all" });

describe("the OpenAPI document", () => {
  it("has updates that take If-Match", () => {
    expect(guarded.length).toBeGreaterThan(30);
  });

  it("declares If-Match on every PUT or PATCH of one record (/{id}), but the exemptions", () => {
    const missing = operations
      .filter(({ path, method }) => (method === "PUT" || method === "PATCH") && path.endsWith("/{id}"))
      .filter(({ op }) => !takesIfMatch(op) && !Object.hasOwn(EXEMPT, op.operationId))
      .map(({ method, path, op }) => `${method} ${path} (${op.operationId})`);
    expect(missing, "declare `ifMatch` on the route (src/lib/route.ts), or exempt it here with a reason").toEqual([]);
  });

  it("exempts only operations that exist and take no If-Match", () => {
    for (const id of Object.keys(EXEMPT)) {
      const found = operations.find(({ op }) => op.operationId === id);
      expect(found, id).toBeDefined();
      expect(found && takesIfMatch(found.op), id).toBe(false);
    }
  });

  it("declares a 412 exactly where it takes If-Match, and a GET beside it, where the ETag comes from", () => {
    const wrong = operations
      .filter(({ op }) => takesIfMatch(op) !== Object.hasOwn(op.responses, "412"))
      .map(({ method, path }) => `${method} ${path}`);
    expect(wrong).toEqual([]);
    const noGet = guarded.filter(({ path }) => !doc.paths[path]?.get).map(({ method, path }) => `${method} ${path}`);
    expect(noGet).toEqual([]);
  });
});

/** The operation's call on record `id`, with its fixture's body, as `headers` say. */
async function call(t: TestApp, method: string, path: string, op: Operation, id: number, headers: HeadersInit) {
  const { url, body } = await operationRequest(t, path, op, { id });
  return t.request(url, { method, token: await northAdmin(t), school: NORTH, body, headers });
}

/** The record as its GET answers it: status, ETag and body. */
async function read(t: TestApp, path: string, id: number) {
  const res = await t.request(path.replace("{id}", String(id)), { token: await northAdmin(t), school: NORTH });
  return { status: res.status, etag: res.headers.get("etag"), body: await res.text() };
}

for (const { path, method, op } of guarded) {
  describe(`${method} ${path} (${op.operationId})`, () => {
    const fixture = fixtureFor(path);

    it("refuses a stale If-Match (412) and leaves the record as it was", async () => {
      const t = makeTestApp();
      if (!fixture) throw new Error(`no fixture for ${path} (test/fixtures.ts)`);
      const id = await fixture.create(t, NORTH);
      const before = await read(t, path, id);
      expect(before.status, before.body).toBe(200);
      expect(before.etag).toMatch(/^W\/"/);
      t.clock.advance(60); // a change now would show in updatedAt too
      const res = await call(t, method, path, op, id, { "if-match": STALE });
      expect(res.status, await res.clone().text()).toBe(412);
      const said = await problem(res);
      expect(said.type).toMatch(/precondition-failed$/);
      const after = await read(t, path, id);
      expect(after.body, "unchanged").toBe(before.body);
      expect(after.etag).toBe(before.etag);
    });

    it("lets the update through with the ETag its GET answers; * passes too", async () => {
      const t = makeTestApp();
      if (!fixture) throw new Error(`no fixture for ${path} (test/fixtures.ts)`);
      const id = await fixture.create(t, NORTH);
      const { etag } = await read(t, path, id);
      const res = await call(t, method, path, op, id, { "if-match": etag ?? "" });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      // `*` asks only that the record exists: past the precondition (a second update may be refused
      // for reasons of its own: a process queued once already is a 409).
      const any = await call(t, method, path, op, id, { "if-match": "*" });
      expect(any.status, await any.clone().text()).not.toBe(412);
      expect(any.status).toBeLessThan(500);
    });
  });
}
