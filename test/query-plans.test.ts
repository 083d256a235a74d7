/**
 * Every list the API serves reads through an index: for each collection GET of the OpenAPI
 * document (with its default order and with each `sort` field), the SQL the app sends to D1 is
 * explained, and a full scan of one of our tables or a sort in a temporary B-tree fails the test.
 * Rows scanned are what D1 bills, and what makes a school of 10,000 records slow.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { d1 } from "../src/db/client";
import { makeTestApp } from "./helpers";

type Recorded = { sql: string; args: unknown[] };

/** A D1 binding that records each statement it prepares, with its bound values. */
function recordingD1(real: D1Database, log: Recorded[]): D1Database {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === "prepare") {
        return (sql: string) => {
          const entry: Recorded = { sql, args: [] };
          log.push(entry);
          const statement = target.prepare(sql);
          return new Proxy(statement, {
            get(s, p) {
              if (p === "bind") {
                return (...args: unknown[]) => {
                  entry.args = args;
                  return s.bind(...args);
                };
              }
              const value = Reflect.get(s, p, s);
              return typeof value === "function" ? value.bind(s) : value;
            },
          });
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const OUR_TABLES = /^(SCAN|SEARCH) (?!CONSTANT ROW)(\w+)/;

/**
 * Steps that read more than the page: a sort in a temporary B-tree, or a filtered query that scans
 * a table instead of searching an index. (An unfiltered list of a small platform table, like the
 * permission catalogue, is read in order and stops at the page: a scan there is the least work.)
 */
async function badSteps(statement: Recorded): Promise<string[]> {
  if (!/^\s*select/i.test(statement.sql)) return [];
  const filtered = /\swhere\s/i.test(statement.sql);
  const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
    .bind(...statement.args)
    .all<{ detail: string }>();
  return plan.results
    .map((r) => r.detail)
    .filter(
      (d) =>
        /USE TEMP B-TREE/.test(d) ||
        (filtered && OUR_TABLES.test(d) && /^SCAN/.test(d) && !/USING (COVERING )?INDEX/.test(d)),
    );
}

const t0 = makeTestApp();
const doc = (await (await t0.request("/api/openapi.json")).json()) as {
  paths: Record<
    string,
    Record<
      string,
      { parameters?: { name: string; in: string; required?: boolean; schema?: { description?: string } }[] }
    >
  >;
};
const lists = Object.entries(doc.paths)
  .filter(
    ([path, item]) =>
      item.get && !path.includes("{") && !(item.get.parameters ?? []).some((p) => p.in === "query" && p.required),
  )
  .map(([path, item]) => {
    const sort = (item.get?.parameters ?? []).find((p) => p.name === "sort");
    const fields = /One of: (.+)$/.exec(sort?.schema?.description ?? "")?.[1]?.split(", ") ?? [];
    return { path, sorts: fields.flatMap((f) => [f, `-${f}`]) };
  });

describe("query plans of every list", () => {
  it("finds the lists", () => {
    expect(lists.length).toBeGreaterThan(5);
  });

  for (const { path, sorts } of lists) {
    for (const sort of [undefined, ...sorts]) {
      const url = sort ? `${path}?sort=${encodeURIComponent(sort)}` : path;
      it(`GET ${url} reads through indexes`, async () => {
        const log: Recorded[] = [];
        const t = makeTestApp({ db: d1(recordingD1(env.DB, log)) });
        const res = await t.request(url, { token: await t.token(2, { 1: "all" }), school: 1 });
        expect(res.status, await res.clone().text()).toBe(200);
        const bad: string[] = [];
        for (const statement of log) {
          for (const step of await badSteps(statement)) bad.push(`${step}  <-  ${statement.sql}`);
        }
        expect(bad).toEqual([]);
      });
    }
  }
});
