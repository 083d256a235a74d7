/**
 * The keyset an export pages by (`keysetRows` in src/lib/pagination.ts): small pages over orders
 * with ties, NULLs and mixed directions give exactly the rows of one ordered read, and a page after
 * the first still reads the sort's index in order (no sort in a temporary B-tree).
 */

import { env } from "cloudflare:test";
import { and, eq, isNull, type SQL } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { students } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { afterKeys, keyFields, keysetRows, type OrderKey, orderTerms } from "../src/lib/pagination";
import { makeTestApp } from "./helpers";

const t = makeTestApp();
const SCHOOL = 1;
const AT = "2026-11-23T15:00:00.000Z";
const where = (after?: SQL) => and(eq(students.schoolId, SCHOOL), isNull(students.deletedAt), after);

// Ties on the last name and on created_at, NULL levels and birth dates (a row a statement: D1
// binds at most 100 values to one).
for (let i = 0; i < 13; i++) {
  await t.db.insert(students).values(
    withSearch(students, {
      schoolId: SCHOOL,
      firstName: `Keyset${i}`,
      lastName: ["Tie", "Tie", "Alpha", "Zeta"][i % 4] ?? "Tie",
      level: i % 3 === 0 ? null : (["elementary", "middle"] as const)[i % 2],
      birthDate: i % 4 === 1 ? null : `2015-0${(i % 3) + 1}-01`,
      createdAt: i < 6 ? AT : `2026-11-23T15:${String(i).padStart(2, "0")}:00.000Z`,
      updatedAt: AT,
    }),
  );
}

const orders: [string, OrderKey[]][] = [
  ["lastName, id", [{ by: students.lastName }, { by: students.id }]],
  [
    "-lastName, -id",
    [
      { by: students.lastName, desc: true },
      { by: students.id, desc: true },
    ],
  ],
  ["createdAt, id", [{ by: students.createdAt }, { by: students.id }]],
  [
    "-createdAt, -id",
    [
      { by: students.createdAt, desc: true },
      { by: students.id, desc: true },
    ],
  ],
  ["level (NULLs), id", [{ by: students.level }, { by: students.id }]],
  [
    "-level (NULLs), -id",
    [
      { by: students.level, desc: true },
      { by: students.id, desc: true },
    ],
  ],
  [
    "-birthDate, lastName, id (mixed, NULLs)",
    [{ by: students.birthDate, desc: true }, { by: students.lastName }, { by: students.id }],
  ],
  [
    "level, -lastName, -id",
    [{ by: students.level }, { by: students.lastName, desc: true }, { by: students.id, desc: true }],
  ],
];

const read = (order: readonly OrderKey[]) => (after: SQL | undefined, limit: number) =>
  t.db
    .select({ id: students.id, ...keyFields(order) })
    .from(students)
    .where(where(after))
    .orderBy(...orderTerms(order))
    .limit(limit) as Promise<Record<string, unknown>[]>;

describe("keysetRows", () => {
  for (const [name, order] of orders) {
    it(`pages of 2 over ${name} give the rows of one ordered read`, async () => {
      const all = await read(order)(undefined, 1000);
      expect(all.length).toBeGreaterThan(13);
      const paged: unknown[] = [];
      for await (const row of keysetRows(order, read(order), 2)) paged.push(row.id);
      expect(paged).toEqual(all.map((r) => r.id));
    });
  }

  for (const [name, order] of orders.slice(0, 4)) {
    it(`a page after the first over ${name} reads the index in order`, async () => {
      const [first] = await read(order)(undefined, 1);
      const after = afterKeys(
        order,
        order.map((_, i) => first?.[`_key${i}`]),
      );
      const query = t.db
        .select({ id: students.id })
        .from(students)
        .where(where(after))
        .orderBy(...orderTerms(order))
        .limit(500)
        .toSQL();
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
        .bind(...query.params)
        .all<{ detail: string }>();
      const steps = plan.results.map((r) => r.detail);
      expect(steps.filter((d) => /TEMP B-TREE|^SCAN/.test(d))).toEqual([]);
    });
  }
});
