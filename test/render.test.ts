/**
 * The data layer builds its SELECTs (src/db/query.ts) and renders its statements (src/db/render.ts)
 * itself: the text and parameters are the ones drizzle's builder and dialect make. Shapes here;
 * test/render-walk.test.ts compares every statement the API's operations render.
 */
import { and, eq, exists, inArray, isNull, or, sql } from "drizzle-orm";
import { alias, SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { query } from "../src/db/query";
import { render } from "../src/db/render";
import { schools } from "../src/db/schema/core";
import { Families, families } from "../src/db/schema/family";
import { Guardians, guardians, Students, students } from "../src/db/schema/student";
import { jobCtx } from "../src/lib/context";
import { makeTestApp } from "./helpers";

const drizzle = (q: ReturnType<typeof sql>) => new SQLiteAsyncDialect().sqlToQuery(q);

describe("render", () => {
  const s2 = alias(students, "s2");
  const shapes = {
    "columns, tables and parameters": sql`select ${students.id}, ${students.lastName} from ${students} where ${eq(students.schoolId, 7)}`,
    "an alias table and its columns": sql`select ${s2.id} from ${s2} where ${and(eq(s2.level, "high"), isNull(s2.deletedAt))}`,
    "an IN list, OR and a subquery": sql`select 1 from ${students} where ${or(
      inArray(students.id, [1, 2, 3]),
      exists(sql`select 1 from ${guardians} where ${eq(guardians.studentId, students.id)}`),
    )}`,
    "values encoded by their column (a boolean, JSON)": sql`select 1 where ${eq(guardians.canPickUp, true)} and ${eq(
      schools.levels,
      ["high"],
    )}`,
    "identifiers and a null": sql`select ${students.id} as ${sql.identifier('odd "name"')} where ${sql`${null}`} is null`,
  };
  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: the same text and parameters as drizzle`, () => {
      const mine = render(shape);
      expect(mine).toBeDefined();
      expect(mine).toEqual({ sql: drizzle(shape).sql, params: drizzle(shape).params });
    });
  }

  it("leaves to drizzle what it does not render (inlined parameters)", () => {
    expect(render(sql`select ${"x"}`.inlineParams())).toBeUndefined();
  });
});

describe("Query.getSQL", () => {
  const t = makeTestApp();
  const ctx = () => jobCtx(t.deps, "test", 1);
  const f = Families.alias("f");
  const shapes = {
    "one table: columns, an expression, a limit": () =>
      query(ctx(), Students, { id: students.id, name: sql<string>`${students.lastName} || ', '` }).limit(20),
    "joins with their scopes, an alias, group, order, limit and offset": () =>
      query(ctx(), Students, { id: students.id, n: sql<number>`count(*)`, family: f.table.name })
        .join(Guardians, eq(guardians.studentId, students.id))
        .leftJoin(f, eq(f.table.id, students.familyId))
        .where(isNull(students.deletedAt))
        .groupBy(students.id)
        .orderBy(sql`${students.lastName} desc`, sql`${students.id}`)
        .limit(5)
        .offset(10),
    "offset 0 is left out, as drizzle does": () => query(ctx(), Families, { id: families.id }).limit(1).offset(0),
    "a count": () => query(ctx(), Students, { id: students.id }).where(eq(students.level, "high")).count(),
  };
  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: the SQL drizzle's builder makes`, () => {
      const q = shape();
      const theirs = drizzle(q.statement().getSQL());
      expect(render(q.getSQL())).toEqual({ sql: theirs.sql, params: theirs.params });
      // What a read runs: its own text, written without the tree.
      expect(render(q)).toEqual({ sql: theirs.sql, params: theirs.params });
    });
  }

  it("runs, alone and in a batch, and decodes rows by position", async () => {
    const rows = await query(ctx(), Students, { id: students.id, active: sql<number>`1` })
      .orderBy(sql`${students.id}`)
      .limit(2)
      .all();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toEqual({ id: expect.any(Number), active: 1 });
  });
});
