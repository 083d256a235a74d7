/**
 * The SQL operators the code imports (src/db/sql.ts) build their statements without drizzle's table
 * scan: every one renders to the text and parameters drizzle's own operator renders, for every kind
 * of value (a plain value bound through the column's encoder, null, a column, an expression).
 */
import * as drizzle from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { render } from "../src/db/render";
import { schools } from "../src/db/schema/core";
import { guardians, students } from "../src/db/schema/student";
import * as ours from "../src/db/sql";

const dialect = new SQLiteAsyncDialect();
const text = (q: drizzle.SQL) => dialect.sqlToQuery(q);

describe("the code's SQL operators", () => {
  const rights: [string, unknown, drizzle.SQLWrapper][] = [
    ["a number", 7, students.schoolId],
    ["a string", "high", students.level],
    ["null", null, students.deletedAt],
    ["a boolean through its column's encoder", true, guardians.canPickUp],
    ["a JSON value through its column's encoder", ["high"], schools.levels],
    ["another column", students.id, guardians.studentId],
    ["an expression", drizzle.sql`lower(${"X"})`, students.level],
    ["a placeholder", drizzle.sql.placeholder("p"), students.id],
  ];
  const binaries = {
    eq: [ours.eq, drizzle.eq] as const,
    ne: [ours.ne, drizzle.ne] as const,
    gt: [ours.gt, drizzle.gt] as const,
    gte: [ours.gte, drizzle.gte] as const,
    lt: [ours.lt, drizzle.lt] as const,
    lte: [ours.lte, drizzle.lte] as const,
  };
  for (const [op, [fast, reference]] of Object.entries(binaries)) {
    for (const [name, right, left] of rights) {
      it(`${op} with ${name}: drizzle's text and parameters`, () => {
        const mine = fast(left, right);
        const theirs = reference(left, right);
        expect(text(mine)).toEqual(text(theirs));
        expect(render(mine)).toEqual(render(theirs));
      });
    }
  }

  it("isNull, isNotNull and not", () => {
    for (const [mine, theirs] of [
      [ours.isNull(students.deletedAt), drizzle.isNull(students.deletedAt)],
      [ours.isNotNull(students.deletedAt), drizzle.isNotNull(students.deletedAt)],
      [ours.not(ours.eq(students.id, 1)), drizzle.not(drizzle.eq(students.id, 1))],
    ] as const)
      expect(text(mine)).toEqual(text(theirs));
  });

  it("and / or of none, one and several conditions (undefined ones left out)", () => {
    const a = drizzle.eq(students.id, 1);
    const b = drizzle.sql`${students.level} = ${"high"}`;
    const joins = { and: [ours.and, drizzle.and] as const, or: [ours.or, drizzle.or] as const };
    for (const [op, [fast, reference]] of Object.entries(joins)) {
      expect(fast()).toBeUndefined();
      expect(fast(undefined, undefined)).toBeUndefined();
      for (const conditions of [[a], [undefined, a], [a, b], [a, undefined, b, a]]) {
        const mine = fast(...conditions);
        const theirs = reference(...conditions);
        if (!mine || !theirs) throw new Error(`${op} gave nothing`);
        expect(text(mine)).toEqual(text(theirs));
      }
    }
  });

  it("the sql tag and its helpers", () => {
    const pairs: [drizzle.SQL, drizzle.SQL][] = [
      [ours.sql`select 1`, drizzle.sql`select 1`],
      [ours.sql``, drizzle.sql``],
      [ours.sql`${students.id}`, drizzle.sql`${students.id}`],
      [
        ours.sql`select ${students.id} from ${students} where ${students.id} = ${5}`,
        drizzle.sql`select ${students.id} from ${students} where ${students.id} = ${5}`,
      ],
      [
        ours.sql.join([ours.sql`a`, ours.sql`b`], ours.sql`, `),
        drizzle.sql.join([drizzle.sql`a`, drizzle.sql`b`], drizzle.sql`, `),
      ],
      [ours.sql.join([students.id, students.level]), drizzle.sql.join([students.id, students.level])],
      [ours.sql.raw("now()"), drizzle.sql.raw("now()")],
      [ours.sql`x ${ours.sql.empty()} y`, drizzle.sql`x ${drizzle.sql.empty()} y`],
      [ours.sql.fromList([ours.sql`a`, students.id]), drizzle.sql.fromList([drizzle.sql`a`, students.id])],
      [ours.sql`${ours.sql.identifier("n")}`, drizzle.sql`${drizzle.sql.identifier("n")}`],
    ];
    for (const [mine, theirs] of pairs) {
      expect(mine).toBeInstanceOf(drizzle.SQL);
      expect(text(mine)).toEqual(text(theirs));
    }
  });
});
