/** The data layer renders its statements itself (src/db/render.ts): the text and parameters are drizzle's. */
import { and, eq, exists, inArray, isNull, or, sql } from "drizzle-orm";
import { alias, SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { render } from "../src/db/render";
import { schools } from "../src/db/schema/core";
import { guardians, students } from "../src/db/schema/student";

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
