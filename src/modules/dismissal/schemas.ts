/** The dismissal module's record schemas: the board's line, arrivals, releases, events. */
import { z } from "@hono/zod-openapi";
import { LEVELS } from "../../lib/levels";
import { orNull } from "../../lib/nullable";
import { WAYS } from "../transportation-summary/api";
import { STATUSES } from "./plan";

export const CollectorSchema = z
  .object({
    kind: z.enum(["guardian", "trusted"]).openapi({ description: "A guardian (parent profile) or a trusted person" }),
    id: z.number().int().openapi({ description: "The parent profile's id, or the trusted person's" }),
    name: z.string().openapi({ description: "Their name, as the school knows it" }),
    relationship: z.string().nullable().openapi({ description: "How they stand to the child" }),
  })
  .openapi("DismissalCollector", { description: "Someone who may collect a child today" });

export const BoardRoute = z
  .object({
    id: z.number().int().openapi({ description: "The route's id" }),
    name: z.string().openapi({ description: "The route's name" }),
    stopId: z.number().int().nullable().openapi({ description: "The stop where the child leaves the bus" }),
    stopName: z.string().nullable().openapi({ description: "The stop's name" }),
    stopTime: z.string().nullable().openapi({ description: "School-local HH:mm" }),
  })
  .openapi("DismissalRoute", { description: "The route a child rides home that day" });

export const ArrivalRef = z
  .object({
    id: z.number().int().openapi({ description: "The arrival's id (for `PATCH .../arrival/{id}/call`)" }),
    status: z.enum(["waiting", "called"]).openapi({ description: "waiting in the line, or called to the gate" }),
    at: z.string().openapi({ description: "When the guardian said they were here (ISO 8601)" }),
    calledAt: z.string().nullable().openapi({ description: "When staff called the child (ISO 8601)" }),
  })
  .openapi("DismissalArrivalRef", { description: "A guardian's \"I'm here\" for the child" });

export const ReleaseRef = z
  .object({
    id: z.number().int().openapi({ description: "The release's id" }),
    collector: CollectorSchema.omit({ relationship: true }).openapi({ description: "Who took the child" }),
    method: z
      .enum(["list", "pass", "override"])
      .openapi({ description: "list: named by the plan; pass: a pickup pass; override: an admin's, with a reason" }),
    gate: z.string().nullable().openapi({ description: "The gate it happened at" }),
    releasedAt: z.string().openapi({ description: "The server's instant (ISO 8601)" }),
    flagged: z
      .boolean()
      .openapi({ description: "Recorded though the plan no longer allowed it (offline): for the office" }),
  })
  .openapi("DismissalReleaseRef", { description: "The child's release today" });

export const BoardStudent = z
  .object({
    studentId: z.number().int().openapi({ description: "The student's id" }),
    firstName: z.string().openapi({ description: "The student's first name" }),
    lastName: z.string().openapi({ description: "The student's last name" }),
    level: z.enum(LEVELS).nullable().openapi({ description: "The student's level" }),
    way: z.enum(WAYS).openapi({
      description:
        "How they go home today: route (their usual route), family (collected by the family), or the confirmed permission's kind",
    }),
    status: z.enum(STATUSES).openapi({
      description:
        "waiting; arrived (a guardian said I'm here); called (staff called them to the gate); released; boarded; absent; no-school (no school for them that day)",
    }),
    dismissal: z.string().nullable().openapi({ description: "Their level's dismissal that day, school-local HH:mm" }),
    route: orNull(BoardRoute).openapi({ description: "The route they ride home today, or null" }),
    permissionId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The confirmed exit permission that changes the usual way, if any" }),
    collectors: z.array(CollectorSchema).openapi({ description: "Who today's plan lets collect the child" }),
    arrival: orNull(ArrivalRef).openapi({ description: "Today's \"I'm here\" for the child, if any" }),
    release: orNull(ReleaseRef).openapi({ description: "Today's release of the child, if any" }),
  })
  .openapi("DismissalBoardStudent");

export const Board = z
  .object({
    date: z.iso.date().openapi({ description: "The school-local date" }),
    schoolDay: z.boolean().openapi({ description: "false on a holiday or a day without school" }),
    holiday: z.boolean().openapi({ description: "Whether the date is in one of the school's holiday cycles" }),
    seq: z.number().int().openapi({ description: "The number of the day's last event (0: none yet)" }),
    reunification: z
      .object({
        id: z.number().int().openapi({ description: "The reunification's id" }),
        reason: z.string().openapi({ description: "Why it was started" }),
        startedAt: z.string().openapi({ description: "When (ISO 8601)" }),
      })
      .nullable()
      .openapi({ description: "The school's open reunification (emergency), if any" }),
    students: z.array(BoardStudent).openapi({ description: "The students, by last name" }),
  })
  .openapi("DismissalBoard");
