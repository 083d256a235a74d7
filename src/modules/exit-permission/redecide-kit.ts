/**
 * The pieces every re-decision shares (`./redecide.ts`): what changed, the withdrawal of what no
 * longer holds with its failures, and the open permissions a change may reach.
 */
import type { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import { ExitPermissions, exitPermissions, OPEN_EXIT_PERMISSION_STATUSES } from "../../db/schema/exit-permission";
import { and, Column, eq, gte, or, SQL, sql } from "../../db/sql";
import { inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { Message, type Value } from "../../lib/message";
import { withdrawEffects } from "./effects";
import { RULES, type RuleCode } from "./rules";

export type { FactChange, LinkFacts, Redecision } from "../../lib/facts";

import type { FactChange } from "../../lib/facts";

export const E = exitPermissions;

/**
 * A failed rule as a JSON object in SQL, `{code, message, ...facts}`: facts given as SQL (the
 * permission's date, a link's end) are read per row, and put into the message written now in the
 * request's language (a placeholder replaced in SQL).
 */
export function failureJson(code: RuleCode, facts: Record<string, Value | SQL | Column>): SQL {
  const shown: Record<string, unknown> = {};
  const marks: [string, SQL | Column][] = [];
  for (const [key, value] of Object.entries(facts)) {
    if (value instanceof SQL || value instanceof Column) {
      const mark = `\u0001${key}\u0001`;
      marks.push([mark, value]);
      shown[key] = mark;
    } else shown[key] = value;
  }
  let text = sql`${RULES[code].message(shown).render()}`;
  for (const [mark, value] of marks) text = sql`replace(${text}, ${mark}, coalesce(${value}, ''))`;
  const pairs = Object.entries(facts).map(([key, value]) =>
    value instanceof SQL || value instanceof Column
      ? sql`, ${key}, ${value}`
      : sql`, ${key}, ${value instanceof Message ? value.render() : (value ?? null)}`,
  );
  return sql`json_object('code', ${code}, 'message', ${text}${sql.join(pairs, sql``)})`;
}

/** A rule the change may break: when it fails (SQL over the permission) and its failure. */
export interface Broken {
  when: SQL;
  failure: SQL;
}

/**
 * The withdrawal: the open permissions of `scope` from `today` on that break a rule become
 * `withdrawn` with every failure (audited), then their day changes go and seats come back. One
 * UPDATE per rule (a statement binds at most 100 values): the first that a permission breaks
 * withdraws it, each later one adds its failure to the one this batch just withdrew.
 */
export function withdrawal(
  ctx: SchoolCtx,
  today: string,
  scope: SQL,
  broken: readonly Broken[],
  why: Message,
): Statement[] {
  const at = ctx.deps.clock.now().toISOString();
  const justWithdrawn = and(eq(E.status, "withdrawn"), eq(E.decidedAt, at), eq(E.decisionReason, why.render()));
  const open = or(inList(E.status, OPEN_EXIT_PERMISSION_STATUSES), justWithdrawn);
  const updates = broken.flatMap((b) =>
    ExitPermissions.update(
      ctx,
      and(scope, gte(E.date, today), open, b.when),
      {
        status: "withdrawn",
        failures: sql`json_insert(CASE WHEN ${E.status} = 'withdrawn' THEN ${E.failures} ELSE '[]' END, '$[#]', json(${b.failure}))`,
        decidedBy: ctx.userId,
        decidedAt: at,
        decisionReason: why.render(),
      },
      "withdraw",
    ),
  );
  // Those withdrawn from today on whose day changes are still there: the ones just withdrawn.
  const withdrawn = ExitPermissions.pick(ctx, E.id, eq(E.status, "withdrawn"), gte(E.date, today));
  return [...updates, ...withdrawEffects(ctx, sql`${withdrawn}`)];
}

/** A permission as the read before the change sees it (whom to tell, and whether anything breaks). */
export interface Candidate {
  id: number;
  routeId: number | null;
  stopId: number | null;
  studentId: number;
  date: string;
  kind: string;
  status: string;
  askedBy: number | null;
  parentId: number | null;
  pickupParentId: number | null;
  askedAs: string | null;
  acceptedAt: string | null;
  invitationId: number | null;
}

export const candidateFields = {
  id: E.id,
  routeId: E.routeId,
  stopId: E.stopId,
  studentId: E.studentId,
  date: E.date,
  kind: E.kind,
  status: E.status,
  askedBy: E.askedBy,
  parentId: E.parentId,
  pickupParentId: E.pickupParentId,
  askedAs: E.askedAs,
  acceptedAt: E.acceptedAt,
  invitationId: E.invitationId,
};

/** The open permissions from the school's today on, of `scope`. */
export const candidates = (ctx: SchoolCtx, today: SQL | string, scope: SQL) =>
  ExitPermissions.select(ctx, candidateFields).where(
    scope,
    inList(E.status, OPEN_EXIT_PERMISSION_STATUSES),
    gte(E.date, today),
  );

export const schoolToday = (ctx: SchoolCtx, batch: Batch) =>
  batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)).limit(1));

export interface Plan {
  statements: Statement[];
  withdrawn: Candidate[];
  why: Message;
}

export type Planner<F extends FactChange["fact"]> = (
  ctx: SchoolCtx,
  change: Extract<FactChange, { fact: F }>,
) => Promise<Plan>;
