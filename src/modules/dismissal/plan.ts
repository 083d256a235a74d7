/**
 * The day's board, read in one batch: each student's effective plan of a date (the summary's one
 * rule, through its face: their way home, route and stop, the confirmed permission and its
 * collector), the guardians who may or may not collect that day, the day's arrivals and releases,
 * and the last event's number. Every verb of the module decides on what this read answers, so the
 * board, a release and the live snapshot never disagree about a child.
 */

import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch, type Slot } from "../../db/batch";
import { RoleUsers, rolePermissions, roleUsers, Users, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import {
  DismissalArrivals,
  DismissalBoardVersions,
  DismissalEvents,
  DismissalReleases,
  DismissalReunifications,
  dismissalArrivals,
  dismissalBoardVersions,
  dismissalEvents,
  dismissalReleases,
  dismissalReunifications,
} from "../../db/schema/dismissal";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { asc, eq, gt, gte, isNull, lte, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import type { Level } from "../../lib/levels";
import { m } from "../../lib/message";
import { isoWeekday } from "../../lib/zoned-time";
import { boardingsOn } from "../route-run/api";
import { calendarOf, calendarReads, dayOff } from "../school-schedule/api";
import { restrictedOn } from "../student/api";
import {
  collectorOf,
  dayDetail,
  destinationOf,
  studentDays,
  type Targets,
  usualRouteOf,
  type Way,
  withTargets,
  withUsualStop,
} from "../transportation-summary/api";
import { copyOf, copyTable, identity } from "../user/api";
import { permissions } from "./permissions";

export const STATUSES = ["waiting", "arrived", "called", "released", "boarded", "absent", "no-school"] as const;
export type Status = (typeof STATUSES)[number];

export interface Collector {
  kind: "guardian" | "trusted";
  id: number;
  name: string;
  relationship: string | null;
}

export interface GuardianRow {
  studentId: number;
  parentId: number;
  userId: number;
  firstName: string;
  lastName: string;
  relationship: string;
  canPickUp: boolean;
  restricted: boolean;
  restrictionFrom: string | null;
  restrictionUntil: string | null;
}

export interface ArrivalRow {
  id: number;
  studentId: number;
  userId: number | null;
  status: "waiting" | "called";
  createdAt: string;
  calledAt: string | null;
}

export interface ReleaseRow {
  id: number;
  studentId: number;
  collectorKind: "guardian" | "trusted";
  collectorId: number;
  collectorName: string;
  method: "list" | "pass" | "override";
  gate: string | null;
  releasedAt: string;
  releasedBy: number | null;
  identityCheck: string | null;
  flagged: boolean;
}

/** One student's line of the board. */
export interface Entry {
  studentId: number;
  firstName: string;
  lastName: string;
  level: Level | null;
  way: Way;
  /** The level's dismissal that day, HH:mm. */
  dismissal: string | null;
  afterSchoolEnd: string | null;
  route: { id: number; name: string; stopId: number | null; stopName: string | null; stopTime: string | null } | null;
  permissionId: number | null;
  /** Who today's plan lets collect the child (none for a rider, an absent child, a day without school). */
  collectors: Collector[];
  /** The child's guardians, each with whether they may collect today (restriction, capability). */
  guardians: GuardianRow[];
  status: Status;
  arrival: ArrivalRow | null;
  release: ReleaseRow | null;
  /** The kept plan's row of the line (the same object while the plan is kept): board.ts keeps its JSON. */
  kept?: object;
}

export interface Day {
  date: string;
  timeZone: string;
  schoolDay: boolean;
  holiday: boolean;
  seq: number;
  reunification: { id: number; reason: string; createdAt: string } | null;
  entries: Entry[];
  /**
   * With a kept plan: everything the day was made of, as a string (the plan's version, the calendar,
   * the day's arrivals, releases, boardings, last event and reunification): two days with the same
   * are the same day (board.ts keeps the school's board's text by it).
   */
  made?: string;
}

/**
 * Whom the read covers: the whole school (staff), the caller's own children, or some students. `mine`
 * with `watching`: the board and its live stream, which leave out a child whose link is restricted today.
 */
export type Cover =
  | { school: true }
  | { mine: { userId: number; today: string; watching?: boolean } }
  | { studentIds: number[] };

const guardianCopy = copyTable("guardian_copy");
const guardianName = identity(users, guardianCopy.table);

/**
 * The parent profiles a user acts as in the school today: their own, and those whose delegate they
 * are in the delegation's dates (`today`, the school's).
 */
export function parentsActedFor(ctx: SchoolCtx, userId: number, today: string) {
  const delegated = Delegates.pick(
    ctx,
    delegates.parentId,
    eq(delegates.userId, userId),
    lte(delegates.validFrom, today),
    gte(delegates.validUntil, today),
  );
  return Parents.pick(ctx, parents.id, sql`(${eq(parents.userId, userId)} OR ${inList(parents.id, delegated)})`);
}

/**
 * A guardian link through which the board shows the child on `today`: not under a school restriction
 * that holds that day (the dismissal board says where the child is at the gate, live: a court order
 * that keeps a parent from collecting keeps them off it too; docs/domain.md "Dismissal").
 */
export const watchableLink = (today: string): SQL =>
  sql`NOT (${guardians.restricted} = 1 AND (${guardians.restrictionFrom} IS NULL OR ${guardians.restrictionFrom} <= ${today}) AND (${guardians.restrictionUntil} IS NULL OR ${guardians.restrictionUntil} >= ${today}))`;

/** The students a cover keeps, as a condition over `student`. */
function covered(ctx: SchoolCtx, cover: Cover): SQL | undefined {
  if ("school" in cover) return undefined;
  if ("studentIds" in cover) return inList(students.id, cover.studentIds);
  const mine = parentsActedFor(ctx, cover.mine.userId, cover.mine.today);
  return Guardians.exists(
    ctx,
    eq(guardians.studentId, students.id),
    inList(guardians.parentId, mine),
    cover.mine.watching ? watchableLink(cover.mine.today) : undefined,
  );
}

/**
 * Which of `userIds` still watch which of `children` that `date`'s events after `after` are about:
 * through their own guardian links, and (second read) the links of the parents they are a delegate
 * of today; neither under a restriction today. The hub's re-check of its guardian subscribers: two
 * reads in its one batch for all of them, driven by the new events (no new event, no row) and the
 * subscribers' parent profiles or delegations, each pair probing `guardian_uq` (a guardian read by
 * student instead walks the school's every link: the planner prefers `guardian_school_idx`).
 */
export function stillWatched(
  ctx: SchoolCtx,
  userIds: readonly number[],
  children: readonly number[],
  /** The new events (after `after` on `date`); null: every one of `children` (a school-wide event). */
  events: { date: string; after: number } | null,
  today: string,
) {
  const [source, student, on] = events
    ? ([
        DismissalEvents,
        dismissalEvents.studentId,
        sql`${eq(dismissalEvents.date, events.date)} AND ${gt(dismissalEvents.seq, events.after)} AND ${inList(dismissalEvents.studentId, children)}`,
      ] as const)
    : ([Students, students.id, inList(students.id, children)] as const);
  const linked = (parentId: SQLiteColumn) =>
    Guardians.exists(ctx, eq(guardians.studentId, student), eq(guardians.parentId, parentId), watchableLink(today));
  return [
    Parents.select(ctx, { userId: parents.userId, studentId: student })
      .join(source, on)
      .where(inList(parents.userId, userIds), linked(parents.id)),
    Delegates.select(ctx, { userId: delegates.userId, studentId: student })
      .join(source, on)
      .where(
        inList(delegates.userId, userIds),
        lte(delegates.validFrom, today),
        gte(delegates.validUntil, today),
        linked(delegates.parentId),
      ),
  ] as const;
}

/**
 * Which of `userIds` may watch the whole school now: a super-admin, or a role they hold in the
 * school (`role_user`, not a token's bitmap, which lags a role taken by up to its 10 minutes) grants
 * `dismissal.read`. Rows `{userId}`.
 */
export function holdingRead(ctx: SchoolCtx, userIds: readonly number[] | SQLWrapper) {
  const granting = sql`(SELECT ${rolePermissions.roleId} FROM ${rolePermissions} WHERE ${rolePermissions.permissionId} = ${permissions.read.id})`;
  const holds = RoleUsers.exists(ctx, eq(roleUsers.userId, users.id), inList(roleUsers.roleId, granting));
  return Users.select(ctx, { userId: users.id }).where(
    inList(users.id, userIds),
    sql`(${users.isSuperAdmin} = 1 OR ${holds})`,
  );
}

/**
 * Reads of one day into a batch; `dayOf` turns the results into the board. `held`: the version of
 * the school's plan the isolate keeps (`readDay`): the whole school's plan reads (each student's
 * plan, the guardians) then answer nothing when the school's version is still that one, and the
 * batch reads the version itself.
 */
export function dayReads(ctx: SchoolCtx, batch: Batch, date: string, cover: Cover, held?: number) {
  const calendar = calendarReads(ctx, batch, date);
  const only = covered(ctx, cover);
  const school = "school" in cover;
  const version = school
    ? batch.read(DismissalBoardVersions.select(ctx, { version: dismissalBoardVersions.version }))
    : undefined;
  // A condition of no column: SQLite checks it once, before the first row (none when kept).
  const unlessKept =
    school && held !== undefined
      ? sql`NOT ${DismissalBoardVersions.exists(ctx, eq(dismissalBoardVersions.version, held))}`
      : undefined;
  const rows = batch.read(
    withTargets(ctx, withUsualStop(studentDays(ctx, date, dayDetail(ctx, date))))
      .where(only, unlessKept)
      // The summary's order: the index student_school_idx serves it.
      .orderBy(asc(students.lastName), asc(students.id)),
  );
  // The day's other rows of the covered students only.
  const ofStudents = (column: SQL) =>
    "school" in cover ? undefined : inList(column, Students.pick(ctx, students.id, only));
  const guardianRows = batch.read(
    Guardians.select(ctx, {
      studentId: guardians.studentId,
      parentId: guardians.parentId,
      userId: parents.userId,
      firstName: guardianName.firstName,
      lastName: guardianName.lastName,
      relationship: guardians.relationship,
      canPickUp: guardians.canPickUp,
      restricted: guardians.restricted,
      restrictionFrom: guardians.restrictionFrom,
      restrictionUntil: guardians.restrictionUntil,
    })
      .join(Parents, eq(parents.id, guardians.parentId))
      .join(Users, eq(users.id, parents.userId))
      .join(guardianCopy, copyOf(guardianCopy, users.id, ctx.schoolId), "left")
      // Unordered (no sort step): `dayOf` groups them by child, in parent profile order.
      .where(ofStudents(sql`${guardians.studentId}`), unlessKept),
  );
  const arrivals = batch.read(
    DismissalArrivals.select(ctx, {
      id: dismissalArrivals.id,
      studentId: dismissalArrivals.studentId,
      userId: dismissalArrivals.userId,
      status: dismissalArrivals.status,
      createdAt: dismissalArrivals.createdAt,
      calledAt: dismissalArrivals.calledAt,
    })
      .where(eq(dismissalArrivals.date, date), ofStudents(sql`${dismissalArrivals.studentId}`))
      .orderBy(asc(dismissalArrivals.id)),
  );
  const releases = batch.read(
    DismissalReleases.select(ctx, {
      id: dismissalReleases.id,
      studentId: dismissalReleases.studentId,
      collectorKind: dismissalReleases.collectorKind,
      collectorId: dismissalReleases.collectorId,
      collectorName: dismissalReleases.collectorName,
      method: dismissalReleases.method,
      gate: dismissalReleases.gate,
      releasedAt: dismissalReleases.releasedAt,
      releasedBy: dismissalReleases.releasedBy,
      identityCheck: dismissalReleases.identityCheck,
      flagged: dismissalReleases.flagged,
    }).where(eq(dismissalReleases.date, date), ofStudents(sql`${dismissalReleases.studentId}`)),
  );
  const seq = batch.read(
    DismissalEvents.select(ctx, { seq: sql<number>`coalesce(max(${dismissalEvents.seq}), 0)` }).where(
      eq(dismissalEvents.date, date),
    ),
  );
  const reunification = batch.read(
    DismissalReunifications.select(ctx, {
      id: dismissalReunifications.id,
      reason: dismissalReunifications.reason,
      createdAt: dismissalReunifications.createdAt,
    })
      .where(isNull(dismissalReunifications.endedAt))
      .limit(1),
  );
  // Who boarded a bus today (the route run's boardings): `boarded` on the board.
  const boardings = batch.read(boardingsOn(ctx, date, ofStudents));
  return { calendar, version, rows, guardianRows, arrivals, releases, seq, reunification, boardings };
}

type Reads = ReturnType<typeof dayReads>;
type Results = Awaited<ReturnType<Batch["commit"]>>;

type Read<S> = S extends Slot<infer T> ? T : never;

/** The whole school's plan of a day as read: each student's plan, and the guardians. */
interface Plan {
  version: number;
  rows: Read<Reads["rows"]>;
  guardianRows: Read<Reads["guardianRows"]>;
  /** The guardians grouped by child, made on the plan's first use. */
  guardiansOf?: Map<number, GuardianRow[]>;
}

/**
 * The whole school's plans of a day this isolate keeps, by `school:date` (the office's board, its
 * live snapshot and the reunification report read them again and again, the plan rarely changes
 * in between): valid while the school's `dismissal_board_version` is the one read with them, which
 * triggers move at every change of a table the plan reads (migrations/0061; test/dismissal-kept.test.ts
 * holds the list to the board's SQL). At most `KEPT_DAYS`, the least recently used leaving first.
 */
const kept = new Map<string, Plan>();
const KEPT_DAYS = 4;

/** The plan of `results`: the kept one when the version read is still its own, else the one read (kept). */
function planOf(key: string, held: Plan | undefined, results: Results, reads: Reads): Plan | undefined {
  if (!reads.version) return undefined;
  const version = results.get(reads.version)[0]?.version;
  kept.delete(key);
  if (held && version === held.version) {
    kept.set(key, held);
    return held;
  }
  if (version === undefined) return undefined;
  const plan = { version, rows: results.get(reads.rows), guardianRows: results.get(reads.guardianRows) };
  kept.set(key, plan);
  for (const old of kept.keys()) {
    if (kept.size <= KEPT_DAYS) break;
    kept.delete(old);
  }
  return plan;
}

/**
 * One day's reads into `batch` for a cover, the whole school's from the plan this isolate keeps
 * while it is current; the function it answers turns the committed results into the day.
 */
export function dayRead(ctx: SchoolCtx, batch: Batch, date: string, cover: Cover): (results: Results) => Day {
  const key = "school" in cover ? `${ctx.schoolId}:${date}` : undefined;
  const held = key === undefined ? undefined : kept.get(key);
  const reads = dayReads(ctx, batch, date, cover, held?.version);
  return (results) =>
    dayOf(results, reads, date, ctx, key === undefined ? undefined : planOf(key, held, results, reads));
}

/** Whether a guardian may collect on `date` (the school's restriction first, then the capability). */
export const guardianMay = (g: GuardianRow, date: string) =>
  g.canPickUp && !restrictedOn({ ...g, restricted: g.restricted }, date);

/** The board of the day from the batch's results. */
export function dayOf(results: Results, reads: Reads, date: string, ctx: SchoolCtx, plan?: Plan): Day {
  const { school, calendar } = calendarOf(results, reads.calendar);
  if (!school) throw notFound(m`School ${ctx.schoolId} not found`);
  const off = dayOff(date, calendar);
  const weekday = isoWeekday(date);
  const today = calendar.schedules.filter((s) => s.weekday === weekday);
  const byLevel = new Map(today.map((s) => [s.level, s]));
  // A kept plan keeps its guardians grouped (read-only: each entry shares its child's list).
  if (plan && !plan.guardiansOf) plan.guardiansOf = guardiansByChild(plan.guardianRows);
  const guardiansOf = plan?.guardiansOf ?? guardiansByChild(results.get(reads.guardianRows));
  const arrivalOf = new Map(results.get(reads.arrivals).map((a) => [a.studentId, a]));
  const releaseOf = new Map(results.get(reads.releases).map((r) => [r.studentId, r]));
  const boarded = new Set(results.get(reads.boardings).map((b) => b.studentId));
  const entries = (plan?.rows ?? results.get(reads.rows)).map((r): Entry => {
    const schedule = r.level ? byLevel.get(r.level) : undefined;
    // At school that day: a school day, and their level has a schedule that weekday (a school
    // without schedules, or a student without a level: every school day).
    const atSchool = off === null && (calendar.schedules.length === 0 || r.level === null || schedule !== undefined);
    const gs = guardiansOf.get(r.studentId) ?? [];
    const targets: Targets = r;
    const permitted = r.way === "auto_pickup" ? collectorOf(targets) : null;
    const collectors: Collector[] = !atSchool
      ? []
      : r.way === "auto_pickup"
        ? permitted
          ? [permitted]
          : []
        : r.way === "family" || r.way === "no_after_school"
          ? gs
              .filter((g) => guardianMay(g, date))
              .map((g) => ({
                kind: "guardian" as const,
                id: g.parentId,
                name: `${g.firstName} ${g.lastName ?? ""}`.trim(),
                relationship: g.relationship,
              }))
          : [];
    const usual = usualRouteOf(r);
    const route = r.way === "route" ? usual : r.way === "route_change" ? destinationOf(targets).route : null;
    const arrival = arrivalOf.get(r.studentId) ?? null;
    const release = releaseOf.get(r.studentId);
    const status: Status = !atSchool
      ? "no-school"
      : release
        ? "released"
        : boarded.has(r.studentId)
          ? "boarded"
          : r.way === "absence"
            ? "absent"
            : arrival?.status === "called"
              ? "called"
              : arrival
                ? "arrived"
                : "waiting";
    return {
      studentId: r.studentId,
      firstName: r.firstName,
      lastName: r.lastName,
      level: r.level,
      way: r.way,
      dismissal: schedule?.dismissal ?? null,
      afterSchoolEnd: schedule?.afterSchoolEnd ?? null,
      route,
      permissionId: r.permissionId,
      collectors,
      guardians: gs,
      status,
      arrival,
      release: release ? { ...release, flagged: Boolean(release.flagged) } : null,
      kept: plan ? r : undefined,
    };
  });
  const [reunion] = results.get(reads.reunification);
  return {
    date,
    timeZone: school.timeZone,
    schoolDay: off === null,
    holiday: off === "holiday",
    seq: results.get(reads.seq)[0]?.seq ?? 0,
    reunification: reunion ?? null,
    entries,
    made: plan
      ? JSON.stringify([
          plan.version,
          off,
          calendar.schedules,
          results.get(reads.arrivals),
          results.get(reads.releases),
          results.get(reads.boardings),
          results.get(reads.seq),
          reunion ?? null,
        ])
      : undefined,
  };
}

/** The guardians by child, in parent profile order, their flags as booleans. */
function guardiansByChild(rows: Plan["guardianRows"]): Map<number, GuardianRow[]> {
  return groupBy(
    [...rows]
      .sort((a, b) => a.parentId - b.parentId)
      .map((g) => ({ ...g, canPickUp: Boolean(g.canPickUp), restricted: Boolean(g.restricted) })),
    (g) => g.studentId,
  );
}

function groupBy<T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

/** Reads one day for the caller: staff the school, anyone else their own children. One round trip. */
export async function readDay(ctx: SchoolCtx, date: string, cover: Cover, also?: (batch: Batch) => void): Promise<Day> {
  const batch = new Batch(ctx);
  const day = dayRead(ctx, batch, date, cover);
  also?.(batch);
  return day(await batch.commit());
}

/** The cover of the caller: the school for holders of `dismissal.read`, else their own children. */
export function coverOf(ctx: SchoolCtx, today: string): Cover {
  if (ctx.can(permissions.read)) return { school: true };
  return { mine: { userId: ctx.userId ?? 0, today, watching: true } };
}

export type { Slot };

/** Forgets the plans this isolate keeps (tests: the board read afresh, to compare with a kept one). */
export function forgetKeptPlans() {
  kept.clear();
}
