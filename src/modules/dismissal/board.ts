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
    arrival: e.arrival
      ? { id: e.arrival.id, status: e.arrival.status, at: e.arrival.createdAt, calledAt: e.arrival.calledAt }
      : null,
    release: e.release
      ? {
          id: e.release.id,
          collector: { kind: e.release.collectorKind, id: e.release.collectorId, name: e.release.collectorName },
          method: e.release.method,
          gate: e.release.gate,
          releasedAt: e.release.releasedAt,
          flagged: e.release.flagged,
        }
      : null,
  };
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
  return boardOf(await readDay(ctx, date, coverOf(ctx, today)));
}

export const getBoardOperation = operation(boardRoute, getBoard);
