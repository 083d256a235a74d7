/**
 * `sort` on every list of the OpenAPI document: an array of the list's own keys (each ascending,
 * or `-` descending; `x-sort` says which fields), so a generated client types it as their union.
 * For every list and every key: the document's enum is exactly those keys, the list answers 200
 * in that order (where the record shows the field), several keys at once are accepted, and a key
 * the list does not have is a 400 naming `sort` and the keys it does.
 */
import { describe, expect, it } from "vitest";
import { operationRequest } from "./fixtures";
import { makeTestApp, problem } from "./helpers";

type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  style?: string;
  explode?: boolean;
  schema?: { type?: string; items?: { enum?: string[] }; maxItems?: number; example?: unknown };
};
type Operation = { operationId: string; parameters?: Parameter[]; "x-sort"?: string[] };

const t = makeTestApp();
const doc = (await (await t.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Operation>>;
};
const sorted = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method, op]) => method === "get" && op.parameters?.some((p) => p.name === "sort"))
    .map(([, op]) => ({ path, op, sort: op.parameters?.find((p) => p.name === "sort") as Parameter })),
);

/** SQLite's order of two values of a column (NULL first; text by code point, as BINARY is for these). */
function inOrder(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined) return true;
  if (b === null || b === undefined) return false;
  if (typeof a === "number" && typeof b === "number") return a <= b;
  return String(a) <= String(b);
}

describe("sort on every list", () => {
  it("finds the lists that sort", () => {
    expect(sorted.length).toBeGreaterThan(10);
  });

  for (const { path, op, sort } of sorted) {
    const keys = op["x-sort"] ?? [];
    describe(`${op.operationId} (${path})`, () => {
      it("is an array of the list's own keys, comma-separated", () => {
        expect(keys.length).toBeGreaterThan(0);
        expect(sort.schema?.type).toBe("array");
        expect(sort.schema?.items?.enum).toEqual(keys.flatMap((k) => [k, `-${k}`]));
        expect(sort.schema?.maxItems).toBe(keys.length);
        expect([sort.style, sort.explode]).toEqual(["form", false]);
      });

      it("answers every key in its order, and all of them at once", async () => {
        const token = await t.token(1, {}, true);
        const { url } = await operationRequest(t, path, op, {});
        const sep = url.includes("?") ? "&" : "?";
        for (const key of keys) {
          for (const desc of [false, true]) {
            const res = await t.request(`${url}${sep}sort=${desc ? "-" : ""}${key}&pageSize=100`, { token, school: 1 });
            const said = await res.clone().text();
            expect(res.status, `${key}: ${said}`).toBe(200);
            // A list answers an envelope; an export a file (its order is the list's: keyset tests).
            if (!res.headers.get("content-type")?.includes("json")) continue;
            const rows = ((await res.json()) as { data: Record<string, unknown>[] }).data;
            const values = rows.filter((r) => key in r).map((r) => r[key]);
            for (let i = 1; i < values.length; i++) {
              const [a, b] = desc ? [values[i], values[i - 1]] : [values[i - 1], values[i]];
              expect(inOrder(a, b), `${desc ? "-" : ""}${key}: ${JSON.stringify(a)} before ${JSON.stringify(b)}`).toBe(
                true,
              );
            }
          }
        }
        const all = await t.request(`${url}${sep}sort=${keys.map((k, i) => (i % 2 ? `-${k}` : k)).join(",")}`, {
          token,
          school: 1,
        });
        expect(all.status, await all.clone().text()).toBe(200);
      });

      it("refuses a key it does not have, naming sort and its keys", async () => {
        const token = await t.token(1, {}, true);
        const { url } = await operationRequest(t, path, op, {});
        const sep = url.includes("?") ? "&" : "?";
        const other = ["bogus", "constructor", ...sorted.flatMap((s) => s.op["x-sort"] ?? [])].filter(
          (k) => !keys.includes(k),
        );
        for (const key of [...new Set(other)].slice(0, 4)) {
          const res = await t.request(`${url}${sep}sort=${key}`, { token, school: 1 });
          expect(res.status, key).toBe(400);
          const { errors } = await problem(res);
          expect(errors?.[0]?.path, key).toBe("sort");
          for (const k of keys) expect(errors?.[0]?.message, key).toContain(k);
        }
      });
    });
  }
});
