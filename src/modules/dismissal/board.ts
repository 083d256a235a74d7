/**
 * `GET /api/v1/dismissal/board?date=`: the day's board, for the school (holders of
 * `dismissal.read`) or for the caller's own children (a guardian, a delegate in its window). One D1
 * round trip (two on an isolate's first request without a date: the school's zone).
 */
import { z } from "@hono/zod-openapi";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { schoolToday } from "../transport/api";
import { coverOf, type Day, type Entry, readDay } from "./plan";
import { Board } from "./schemas";

export const DayQuery = schoolDate("A school-local date; default the school's today", "2026-11-25");

const boardRoute = defineRoute({
  method: "get",
  path: "/api/v1/dismissal/board",
  tag: "Transport",
  operationId: "getDismissalBoard",
  summary: "The day's dismissal board: each student's plan and status, and the last event's number",
  access: "member",
  module: "dismissal",
  request: { query: z.strictObject({ date: DayQuery.optional() }) },
  responses: { 200: json(Board, "The board") },
  extensions: { "x-filters": { date: "2026-11-25" } },
});

const arrivalOf = (e: Entry) =>
  e.arrival
    ? { id: e.arrival.id, status: e.arrival.status, at: e.arrival.createdAt, calledAt: e.arrival.calledAt }
    : null;

const releaseOf = (e: Entry) =>
  e.release
    ? {
        id: e.release.id,
        collector: { kind: e.release.collectorKind, id: e.release.collectorId, name: e.release.collectorName },
        method: e.release.method,
        gate: e.release.gate,
        releasedAt: e.release.releasedAt,
        flagged: e.release.flagged,
      }
    : null;

/** A board line as the API answers it. */
export function lineOf(e: Entry) {
  return {
    studentId: e.studentId,
    firstName: e.firstName,
    lastName: e.lastName,
    level: e.level,
    way: e.way,
    status: e.status,
    dismissal: e.dismissal,
    route: e.route,
    permissionId: e.permissionId,
    collectors: e.collectors,
    arrival: arrivalOf(e),
    release: releaseOf(e),
  };
}

/**
 * A kept line's JSON but its status, arrival and release, which change during the afternoon: up to
 * `"status":`, and from `,"dismissal":` to its collectors, with the dismissal and whether the child
 * is at school it was written for (the calendar, read each time). The same text `lineOf` gives.
 */
const kept = new WeakMap<object, { head: string; tail: string; at: string }>();

function lineJson(e: Entry): string {
  if (!e.kept) return JSON.stringify(lineOf(e));
  const at = `${e.dismissal}|${e.status === "no-school"}`;
  let text = kept.get(e.kept);
  if (text?.at !== at) {
    const { studentId, firstName, lastName, level, way, dismissal, route, permissionId, collectors } = e;
    text = {
      head: `${JSON.stringify({ studentId, firstName, lastName, level, way }).slice(0, -1)},"status":`,
      tail: `,${JSON.stringify({ dismissal, route, permissionId, collectors }).slice(1, -1)},"arrival":`,
      at,
    };
    kept.set(e.kept, text);
  }
  return `${text.head}"${e.status}"${text.tail}${JSON.stringify(arrivalOf(e))},"release":${JSON.stringify(releaseOf(e))}}`;
}

/** The board as the API answers it. */
export function boardOf(day: Day) {
  return {
    date: day.date,
    schoolDay: day.schoolDay,
    holiday: day.holiday,
    seq: day.seq,
    reunification: day.reunification
      ? { id: day.reunification.id, reason: day.reunification.reason, startedAt: day.reunification.createdAt }
      : null,
    students: day.entries.map(lineOf),
  };
}

export async function getBoard(ctx: SchoolCtx, { query }: InputOf<typeof boardRoute>) {
  const today = await schoolToday(ctx);
  const date = query.date ?? today;
  const day = await readDay(ctx, date, coverOf(ctx, today));
  // The school's board from a kept plan: its text kept while the day is made of the same (nothing
  // changed: the office's screens asking again), else written from its lines' kept JSON.
  if (day.made === undefined) return boardOf(day);
  const key = `${ctx.schoolId}:${date}`;
  let board = written.get(key);
  written.delete(key);
  if (board?.made !== day.made) {
    const { students, ...head } = boardOf({ ...day, entries: [] });
    const text = `${JSON.stringify(head).slice(0, -1)},"students":[${day.entries.map(lineJson).join(",")}]}`;
    board = { made: day.made, text };
  }
  written.set(key, board);
  for (const old of written.keys()) {
    if (written.size <= 4) break;
    written.delete(old);
  }
  return new Response(board.text, { headers: { "content-type": "application/json" } });
}

/** The school's boards last written, by `school:date`, with what each was made of (four at most). */
const written = new Map<string, { made: string; text: string }>();

export const getBoardOperation = operation(boardRoute, getBoard);
