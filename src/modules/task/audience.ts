/**
 * A task's audience: who it reaches, resolved when it is sent. Students named, the active students
 * of the groups and levels named (one recipient per student: the family does it once for that
 * child), and the users named and the holders of the roles named (one recipient each). Each
 * recipient's copy is delivered to an inbox row per person: each guardian of the student (a
 * delegate sees it through the parent's), or the named user.
 *
 * Reading is one round trip (`resolveAudience`); writing is set-based: the targets, the recipients
 * (with their audit rows) and the inbox rows are one statement each over JSON parameters, whatever
 * the number of recipients.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Roles, RoleUsers, roles, roleUsers, Schools, schools } from "../../db/schema/core";
import { GroupStudents, Groups, groupStudents, groups } from "../../db/schema/group";
import { Parents } from "../../db/schema/parent";
import { Guardians, Students, students } from "../../db/schema/student";
import { type TaskAudience, TaskInbox, TaskRecipients, TaskTargets, taskRecipients } from "../../db/schema/task";
import { SchoolUsers, schoolUsers } from "../../db/schema/user";
import { eq, isNull, or, type SQL, sql } from "../../db/sql";
import { inList, insertedId, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound, unprocessable } from "../../lib/errors";
import { LEVELS } from "../../lib/levels";
import { type Message, m, zodMessage } from "../../lib/message";
import { idList } from "../../lib/params";
import { type Audience, type Notice, notify } from "../notification/api";
import { taskSays } from "./common";

export const MAX_STUDENTS = 500;
export const MAX_USERS = 500;

/** The audience fields of a task's body: any of them, together at least one recipient. */
export const audienceFields = {
  studentIds: idList({ max: MAX_STUDENTS, what: "Student" })
    .optional()
    .openapi({ example: [2001], description: `Students whose families it is for (1-${MAX_STUDENTS}, each once)` }),
  groupIds: idList({ max: 100, what: "Group" })
    .optional()
    .openapi({ example: [3], description: "Groups: the families of their active students" }),
  levels: z
    .array(z.enum(LEVELS))
    .min(1)
    .max(LEVELS.length)
    .refine((v) => new Set(v).size === v.length, zodMessage(m`Each level at most once`))
    .optional()
    .openapi({
      uniqueItems: true,
      example: ["elementary"],
      description: "Levels: the families of their active students",
    }),
  roleIds: idList({ max: 20, what: "Role" })
    .optional()
    .openapi({ example: [4], description: "Roles: every holder in the school (each one a recipient)" }),
  userIds: idList({ max: MAX_USERS, what: "User" })
    .optional()
    .openapi({ example: [3], description: `Named people of the school (1-${MAX_USERS}, each once)` }),
};

export type AudienceInput = {
  studentIds?: number[];
  groupIds?: number[];
  levels?: (typeof LEVELS)[number][];
  roleIds?: number[];
  userIds?: number[];
};

/** The audience as stored on the task: every list, empty when not given. */
export const audienceOf = (input: AudienceInput): TaskAudience => ({
  studentIds: input.studentIds ?? [],
  groupIds: input.groupIds ?? [],
  levels: input.levels ?? [],
  roleIds: input.roleIds ?? [],
  userIds: input.userIds ?? [],
});

export const namesSomeone = (a: TaskAudience) =>
  a.studentIds.length + a.groupIds.length + a.levels.length + a.roleIds.length + a.userIds.length > 0;

export interface Resolved {
  students: { id: number; familyId: number | null }[];
  users: number[];
  /** The school's time zone (read in the same round trip). */
  timeZone: string;
}

/**
 * Who the audience reaches, in one round trip: every id named must be of this school (a 404 naming
 * the missing ones), and it must reach someone (422).
 */
export async function resolveAudience(ctx: SchoolCtx, a: TaskAudience): Promise<Resolved> {
  const batch = new Batch(ctx);
  const school = batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)));
  const bySource: SQL[] = [];
  if (a.studentIds.length) bySource.push(inList(students.id, a.studentIds));
  const active: SQL[] = [];
  if (a.groupIds.length) {
    active.push(
      inList(students.id, GroupStudents.pick(ctx, groupStudents.studentId, inList(groupStudents.groupId, a.groupIds))),
    );
  }
  if (a.levels.length) active.push(inList(students.level, a.levels));
  if (active.length) bySource.push(sql`${eq(students.status, "active")} AND (${sql.join(active, sql` OR `)})`);
  const kids = bySource.length
    ? batch.read(
        Students.select(ctx, { id: students.id, familyId: students.familyId })
          .where(isNull(students.deletedAt), or(...bySource))
          .orderBy(sql`${students.id}`),
      )
    : undefined;
  const foundGroups = a.groupIds.length
    ? batch.read(Groups.select(ctx, { id: groups.id }).where(inList(groups.id, a.groupIds)))
    : undefined;
  const foundRoles = a.roleIds.length
    ? batch.read(Roles.select(ctx, { id: roles.id }).where(inList(roles.id, a.roleIds)))
    : undefined;
  const holders = a.roleIds.length
    ? batch.read(
        RoleUsers.select(ctx, { userId: roleUsers.userId })
          .where(inList(roleUsers.roleId, a.roleIds))
          .groupBy(roleUsers.userId),
      )
    : undefined;
  const members = a.userIds.length
    ? batch.read(
        SchoolUsers.select(ctx, { userId: schoolUsers.userId }).where(
          inList(schoolUsers.userId, a.userIds),
          isNull(schoolUsers.deletedAt),
        ),
      )
    : undefined;
  const r = await batch.commit();
  const studentRows = kids ? r.get(kids) : [];
  /** 404 naming the ids asked for and not found: one message for one, another for several. */
  const missing = (asked: number[], found: number[], one: (id: number) => Message, many: (ids: string) => Message) => {
    const gone = asked.filter((id) => !found.includes(id));
    const [first] = gone;
    if (first !== undefined) throw notFound(gone.length > 1 ? many(gone.join(", ")) : one(first));
  };
  missing(
    a.studentIds,
    studentRows.map((s) => s.id),
    (id) => m`Student ${id} not found`,
    (ids) => m`Students ${ids} not found`,
  );
  missing(
    a.groupIds,
    foundGroups ? r.get(foundGroups).map((g) => g.id) : [],
    (id) => m`Group ${id} not found`,
    (ids) => m`Groups ${ids} not found`,
  );
  missing(
    a.roleIds,
    foundRoles ? r.get(foundRoles).map((g) => g.id) : [],
    (id) => m`Role ${id} not found`,
    (ids) => m`Roles ${ids} not found`,
  );
  const named = members ? r.get(members).map((u) => u.userId) : [];
  missing(
    a.userIds,
    named,
    (id) => m`User ${id} not found`,
    (ids) => m`Users ${ids} not found`,
  );
  const users = [...new Set([...named, ...(holders ? r.get(holders).map((h) => h.userId) : [])])].sort((x, y) => x - y);
  if (studentRows.length + users.length === 0) {
    throw unprocessable(taskSays.reachesNobody);
  }
  return { students: studentRows, users, timeZone: r.get(school)[0]?.timeZone ?? "UTC" };
}

/**
 * The statements sending task `taskId` (a number, or the id a create just wrote) to `resolved`:
 * its targets (what the lists filter by), its recipients with their audit rows, their inbox rows.
 */
export function sendStatements(
  ctx: SchoolCtx,
  taskId: number | SQL<number>,
  a: TaskAudience,
  resolved: Resolved,
): Statement[] {
  const at = ctx.deps.clock.now().toISOString();
  const targets: [string, number | null, string | null][] = [
    ...a.studentIds.map((id): [string, number, null] => ["student", id, null]),
    ...a.groupIds.map((id): [string, number, null] => ["group", id, null]),
    ...a.levels.map((level): [string, null, string] => ["level", null, level]),
    ...a.roleIds.map((id): [string, number, null] => ["role", id, null]),
    ...a.userIds.map((id): [string, number, null] => ["user", id, null]),
  ];
  const recipients: [number | null, number | null, number | null][] = [
    ...resolved.students.map((s): [number, null, number | null] => [s.id, null, s.familyId]),
    ...resolved.users.map((u): [null, number, null] => [null, u, null]),
  ];
  const statements: Statement[] = [];
  if (targets.length) {
    statements.push(
      TaskTargets.insertFrom(
        ctx,
        (row) =>
          sql`SELECT ${row({
            taskId,
            kind: sql`j.value->>0`,
            refId: sql`j.value->>1`,
            level: sql`j.value->>2`,
          })} FROM json_each(${JSON.stringify(targets)}) j ORDER BY j.key`,
        at,
      ),
    );
  }
  statements.push(
    ...TaskRecipients.insertMany(
      ctx,
      TaskRecipients.insertFrom(
        ctx,
        (row) =>
          sql`SELECT ${row({
            taskId,
            studentId: sql`j.value->>0`,
            userId: sql`j.value->>1`,
            familyId: sql`j.value->>2`,
            status: "new",
          })} FROM json_each(${JSON.stringify(recipients)}) j ORDER BY j.key`,
        at,
      ),
      // The rows the insert just wrote take the last ids (AUTOINCREMENT).
      sql`${taskRecipients.id} > ${insertedId(taskRecipients)} - changes()`,
      ["taskId", "studentId", "userId", "familyId", "status"],
    ),
    deliver(ctx, taskId),
  );
  return statements;
}

/**
 * The inbox rows of task `taskId`'s recipients (those matching `which`): each guardian of a
 * student recipient, and each named user. Rows that exist are kept: a reminder calls it again to
 * reach guardians added since the task was sent.
 */
export function deliver(
  ctx: SchoolCtx,
  taskId: number | SQL<number>,
  options: { pendingOnly?: boolean } = {},
): Statement {
  const r = TaskRecipients.alias("r");
  const g = Guardians.alias("g");
  const p = Parents.alias("p");
  const values = (user: SQL) => ({
    taskId: sql<number>`${r.table.taskId}`,
    recipientId: sql<number>`${r.table.id}`,
    userId: user,
    archived: sql`0`,
  });
  const only = options.pendingOnly ? sql` AND ${r.table.status} <> 'completed'` : sql``;
  return TaskInbox.insertFrom(
    ctx,
    (row) =>
      sql`SELECT ${row(values(sql`${p.table.userId}`))} FROM ${r.from}
        ${g.joinOn(ctx, sql`${g.table.studentId} = ${r.table.studentId}`)}
        ${p.joinOn(ctx, sql`${p.table.id} = ${g.table.parentId}`)}
        WHERE ${r.where(ctx, sql`${r.table.taskId} = ${taskId}${only}`)}
        UNION ALL
        SELECT ${row(values(sql`${r.table.userId}`))} FROM ${r.from}
        WHERE ${r.where(ctx, sql`${r.table.taskId} = ${taskId} AND ${r.table.userId} IS NOT NULL${only}`)}`,
  ).onConflictDoNothing();
}

/**
 * The notice that reaches a task's recipients (their families' guardians, and the named users, in
 * one notification: a person who is both hears once), or none when there are none: the one way tasks
 * and appointments address people, for every "tell them" of the two modules.
 */
export function toRecipients(
  notice: Omit<Notice, "audience">,
  who: { studentIds: readonly number[]; userIds: readonly number[]; except?: readonly number[] },
): Notice[] {
  const audience: Audience = {};
  if (who.studentIds.length) audience.guardiansOf = [...who.studentIds];
  if (who.userIds.length) audience.users = [...who.userIds];
  if (who.except?.length) audience.except = [...who.except];
  return who.studentIds.length + who.userIds.length ? [{ ...notice, audience }] : [];
}

/** What notices send: their statements for the caller's batch, then one dispatch once it committed. */
export interface Told {
  statements: Statement[];
  dispatch(): Promise<void>;
}

/** Sends `notices` through the notification module's verb (`notify`), together. */
export function notifyAll(ctx: SchoolCtx, notices: readonly Notice[]): Told {
  const sendings = notices.map((n) => notify(ctx, n));
  return {
    statements: sendings.flatMap((s) => s.statements),
    dispatch: async () => {
      for (const s of sendings) await s.dispatch();
    },
  };
}

/** The recipients of a task (those not completed, with `pending`), as the students and users they are. */
export function recipientsOf(ctx: SchoolCtx, taskId: number, pending = false) {
  return TaskRecipients.select(ctx, { studentId: taskRecipients.studentId, userId: taskRecipients.userId }).where(
    eq(taskRecipients.taskId, taskId),
    pending ? sql`${taskRecipients.status} <> 'completed'` : undefined,
  );
}

/** `recipientsOf`'s rows as the lists `toRecipients` takes. */
export function whoOf(rows: readonly { studentId: number | null; userId: number | null }[]) {
  return {
    studentIds: rows.flatMap((r) => (r.studentId === null ? [] : [r.studentId])),
    userIds: rows.flatMap((r) => (r.userId === null ? [] : [r.userId])),
  };
}
