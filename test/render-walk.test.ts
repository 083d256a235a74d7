/**
 * Every statement the API's operations render (src/db/render.ts, and the reads' own SELECTs of
 * src/db/query.ts) is the one drizzle makes: `render` is wrapped here (its module mocked with
 * itself) to compare each rendering with drizzle's rendering of its tree, and each read's tree
 * (`getSQL`) with the select drizzle's builder makes (`statement`), while every operation of the
 * document is called. The production code knows nothing of it; the rest of the suite renders once.
 */
import { describe, expect, it, vi } from "vitest";

/** How many renderings were compared (the walk must compare many). */
const compared = vi.hoisted(() => ({ count: 0 }));

type Rendered = { sql: string; params: unknown[] };

vi.mock("../src/db/render", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/db/render")>();
  const { SQLiteAsyncDialect } = await import("drizzle-orm/sqlite-core");
  const same = (what: string, a: Rendered, b: Rendered) => {
    if (a.sql !== b.sql || JSON.stringify(a.params) !== JSON.stringify(b.params))
      throw new Error(`${what} differs from drizzle:\n${a.sql}\n${b.sql}`);
  };
  return {
    ...original,
    render: (root: Parameters<typeof original.render>[0]) => {
      const out = original.render(root);
      if (out) {
        const dialect = new SQLiteAsyncDialect();
        const tree = "renderTo" in root ? root.getSQL() : root;
        same("render()", out, dialect.sqlToQuery(tree));
        if ("statement" in root && typeof root.statement === "function") {
          const built = (root.statement() as { getSQL(): typeof tree }).getSQL();
          same("Query.getSQL()", dialect.sqlToQuery(tree), dialect.sqlToQuery(built));
        }
        compared.count++;
      }
      return out;
    },
  };
});

// The pool loads the Worker's modules before this file, with the real render: a fresh module graph
// here, whose data layer imports the wrapped one.
vi.resetModules();
const { DEMO, makeTestApp } = await import("./helpers");
const { callOperation, fixtureFor } = await import("./fixtures");
const { PushQueue } = await import("./push-queue");

type Operation = Parameters<typeof callOperation>[3];

describe("every statement an operation renders", async () => {
  // Both queues held here and delivered after each call through this module graph's handler (the
  // Worker's own consumer would run the other graph, in its own context, past the call).
  const queues = { push: new PushQueue(), bulk: new PushQueue("school-bulk") };
  const t = makeTestApp({ queues });
  const doc = (await (await t.request("/api/openapi.json")).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  const parent = { [DEMO.northParent.school]: ["exit-permission.write", "student.read"] };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const fixture = fixtureFor(path);
      if (path.includes("{id}") && !fixture) continue;
      // Called as the conformance suite calls it, as the first school's admin on a record its
      // fixture makes; a read also as the demo parent, whose reads are scoped to their family.
      it(`${method.toUpperCase()} ${path}: the same text and parameters as drizzle`, async () => {
        const id = path.includes("{id}") ? await fixture?.create(t, 1) : undefined;
        const admin = await t.token(DEMO.northAdmin.id, { 1: "all" });
        const res = await callOperation(t, method.toUpperCase(), path, op, { token: admin, id });
        expect(res.status, await res.clone().text()).toBeLessThan(500);
        await queues.bulk.drain(t.deps);
        await queues.push.drain(t.deps);
        if (method === "get") {
          const mine = await callOperation(t, "GET", path, op, {
            token: await t.token(DEMO.northParent.id, parent),
            id,
          });
          expect(mine.status, await mine.clone().text()).toBeLessThan(500);
        }
      });
    }
  }

  it("compared every rendering (thousands)", () => {
    expect(compared.count).toBeGreaterThan(1000);
  });
});
