/**
 * The route students importer: one row per student on a route (route name, stop name or number,
 * the student's id number, weekdays). Run by the bulk consumer; reading, row errors and batching
 * are sheet.ts's.
 *
 * Matching: a rider by (route, student): created, or its stop and weekdays updated (a file imported
 * again updates, never doubles). Row errors: a route, stop or student the school does not have, an
 * inactive student, a level the route does not serve, a weekday the route does not run, a weekday
 * the student already rides another route in the same direction (named), the same student and
 * route in an earlier row. Each batch is one read and one `batch()` of `json_each` statements; the
 * unique index of `route_student_day` still holds the rule should someone assign a student while
 * the file is read (the batch then fails and the process can be queued again).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Students, students } from "../../db/schema/student";
import {
  RouteStops,
  RouteStudents,
  Routes,
  routeStops,
  routeStudentDays,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { asc, eq, isNull, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import { inList, runBatch, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { factChanged } from "../../lib/facts";
import { fold } from "../../lib/fold";
import { m, zodMessage } from "../../lib/message";
import type { Cell } from "../../lib/xlsx";
import { ridersChanged } from "../route-availability/api";
import { dayList, daysOf, maskOf, parseWeekdays, seatsHold } from "../route-student/api";
import { whyNotRider } from "../transport/api";
import { batchWrites } from "./batch-writes";
import { type Column, type FieldError, type ImportResult, importSheet, type Ready } from "./sheet";

type Field = "route" | "stop" | "studentIdNumber" | "weekdays";

export const ROUTE_STUDENT_COLUMNS: Column<Field>[] = [
  { field: "route", header: m`Route`, names: ["route", "routename", "ruta", "nombredelaruta"], required: true },
  { field: "stop", header: m`Stop`, names: ["stop", "stopname", "parada", "nombredelaparada"], required: true },
  {
    field: "studentIdNumber",
    header: m`Student id number`,
    names: ["studentidnumber", "idnumber", "student", "matricula", "alumno", "estudiante"],
    required: true,
  },
  { field: "weekdays", header: m`Weekdays`, names: ["weekdays", "days", "dias", "diasdelasemana"], required: true },
];

export const ROUTE_STUDENT_EXAMPLE: Cell[] = ["Route 3 home", "Main square", "S-0042", "Mon, Tue, Thu"];

const RouteStudentRow = z.object({
  route: z.string().trim().min(1, zodMessage(m`Required`)).max(100),
  stop: z.string().trim().min(1, zodMessage(m`Required`)).max(100),
  studentIdNumber: z.string().trim().min(1, zodMessage(m`Required`)).max(50),
  weekdays: z.string().transform((v, ctx) => {
    const parsed = parseWeekdays(v);
    if ("error" in parsed) {
      ctx.addIssue({ code: "custom", message: parsed.error.render() });
      return z.NEVER;
    }
    return parsed.days;
  }),
});
type RouteStudentRow = z.infer<typeof RouteStudentRow>;

/** [route name, stop name or number, student id number, weekdays] */
type Values = [string, string, string, number[]];

/** Imports a route students file for the process in `ctx` (an import context). */
export async function importRouteStudents(ctx: SchoolCtx, processId: number, bytes: Uint8Array): Promise<ImportResult> {
  const seen = new Set<string>();
  return importSheet<Field, RouteStudentRow, Values>(bytes, {
    columns: ROUTE_STUDENT_COLUMNS,
    schema: RouteStudentRow,
    accept: (v, row) => {
      const key = `${fold(v.route)}\u0000${v.studentIdNumber}`;
      if (seen.has(key)) {
        return [
          {
            row,
            column: "studentIdNumber",
            message: m`Student ${v.studentIdNumber} is on route ${v.route} in an earlier row of the file`,
          },
        ];
      }
      seen.add(key);
      return { values: [v.route, v.stop, v.studentIdNumber, v.weekdays] };
    },
    write: (batch, addError) => writeBatch(ctx, processId, batch, addError),
  });
}

/** One read: the routes, their stops, the students and the days those students already ride. */
async function lookUp(ctx: SchoolCtx, batch: Ready<Values>[]) {
  const names = [...new Set(batch.map((r) => fold(r.values[0])))];
  const idNumbers = [...new Set(batch.map((r) => r.values[2]))];
  const named = Routes.pick(ctx, routes.id, inList(routes.nameSearch, names));
  const known = Students.pick(ctx, students.id, inList(students.idNumber, idNumbers), isNull(students.deletedAt));
  const read = new Batch(ctx);
  const routeRows = read.read(
    Routes.select(ctx, {
      id: routes.id,
      name: routes.name,
      nameSearch: routes.nameSearch,
      direction: routes.direction,
      weekdays: routes.weekdays,
      levels: routes.levels,
      seats: transports.seats,
    })
      .join(Transports, eq(transports.id, routes.transportId))
      .where(inList(routes.nameSearch, names)),
  );
  // Every rider of these routes, for the seats each weekday has left.
  const riderRows = read.read(
    RouteStudents.select(ctx, {
      routeId: routeStudents.routeId,
      studentId: routeStudents.studentId,
      weekdays: routeStudents.weekdays,
    }).where(inList(routeStudents.routeId, named)),
  );
  const stopRows = read.read(
    RouteStops.select(ctx, {
      id: routeStops.id,
      routeId: routeStops.routeId,
      name: routeStops.name,
      position: routeStops.position,
    })
      .where(inList(routeStops.routeId, named))
      .orderBy(asc(routeStops.routeId), asc(routeStops.position)),
  );
  const studentRows = read.read(
    Students.select(ctx, {
      id: students.id,
      idNumber: students.idNumber,
      firstName: students.firstName,
      lastName: students.lastName,
      level: students.level,
      status: students.status,
    }).where(inList(students.idNumber, idNumbers), isNull(students.deletedAt)),
  );
  const takenRows = read.read(
    RouteStudents.select(ctx, {
      studentId: routeStudents.studentId,
      routeId: routes.id,
      routeName: routes.name,
      direction: routeStudentDays.direction,
      weekday: routeStudentDays.weekday,
    })
      .join(joinTable(routeStudentDays), eq(routeStudentDays.routeStudentId, routeStudents.id))
      .join(Routes, eq(routes.id, routeStudents.routeId))
      .where(inList(routeStudents.studentId, known)),
  );
  const results = await read.commit();
  return {
    routes: new Map(results.get(routeRows).map((r) => [r.nameSearch, r])),
    stops: results.get(stopRows),
    students: new Map(results.get(studentRows).map((s) => [s.idNumber ?? "", s])),
    taken: results.get(takenRows),
    riders: results.get(riderRows),
  };
}

/** The rider's values: [routeId, studentId, stopId, weekday mask, direction]. */
type Rider = [number, number, number, number, string];

/** The rows the batch can write (their errors reported otherwise), in file order. */
function check(known: Awaited<ReturnType<typeof lookUp>>, batch: Ready<Values>[], addError: (e: FieldError) => void) {
  // Who rides what, by student, direction and weekday: the database's, then each accepted row's.
  const claimed = new Map<string, { routeId: number; routeName: string }>();
  const dayKey = (student: number, direction: string, day: number) => `${student}:${direction}:${day}`;
  for (const t of known.taken) {
    claimed.set(dayKey(t.studentId, t.direction, t.weekday), { routeId: t.routeId, routeName: t.routeName });
  }
  // Who takes a seat on each route and weekday: the database's riders, then each accepted row's.
  const seated = new Map<string, Set<number>>();
  const seatKey = (route: number, day: number) => `${route}:${day}`;
  const seatsOn = (route: number, day: number) => {
    let set = seated.get(seatKey(route, day));
    if (!set) {
      set = new Set();
      seated.set(seatKey(route, day), set);
    }
    return set;
  };
  for (const r of known.riders) for (const d of daysOf(r.weekdays)) seatsOn(r.routeId, d).add(r.studentId);
  const ok: Rider[] = [];
  for (const { row, values } of batch) {
    const [routeName, stopText, idNumber, days] = values;
    const route = known.routes.get(fold(routeName));
    const student = known.students.get(idNumber);
    const errors: FieldError[] = [];
    if (!route) errors.push({ row, column: "route", message: m`No route named ${routeName} in this school` });
    if (!student) {
      errors.push({
        row,
        column: "studentIdNumber",
        message: m`No student of this school has the id number ${idNumber}`,
      });
    }
    const stop =
      route &&
      known.stops.find(
        (s) =>
          s.routeId === route.id &&
          (fold(s.name) === fold(stopText) || (/^\d+$/.test(stopText) && s.position === Number(stopText))),
      );
    if (route && !stop) errors.push({ row, column: "stop", message: m`Route ${route.name} has no stop ${stopText}` });
    if (route) {
      const outside = days.filter((d) => (route.weekdays & (1 << (d - 1))) === 0);
      if (outside.length) {
        errors.push({
          row,
          column: "weekdays",
          message: m`Route ${route.name} does not run on ${dayList(outside)}; it runs on ${dayList(daysOf(route.weekdays))}`,
        });
      }
    }
    const notRider =
      route && student && whyNotRider(route, { ...student, name: `${student.firstName} ${student.lastName}` });
    if (notRider) errors.push({ row, column: "studentIdNumber", message: notRider });
    if (route && student && errors.length === 0) {
      const others = days
        .map((d) => ({ d, by: claimed.get(dayKey(student.id, route.direction, d)) }))
        .filter((c) => c.by && c.by.routeId !== route.id);
      const first = others[0]?.by;
      if (first) {
        const on = others.filter((c) => c.by?.routeId === first.routeId).map((c) => c.d);
        errors.push({
          row,
          column: "weekdays",
          message: m`${student.firstName} ${student.lastName} already rides '${first.routeName}' (route ${first.routeId}) on ${dayList(on)}`,
        });
      }
    }
    if (route && student && errors.length === 0) {
      const full = days.filter((d) => {
        const on = seatsOn(route.id, d);
        return !on.has(student.id) && on.size >= route.seats;
      });
      if (full.length) {
        errors.push({
          row,
          column: "weekdays",
          message: m`Route ${route.name} has no seat left on ${dayList(full)}: its vehicle seats ${route.seats}`,
        });
      }
    }
    if (errors.length || !route || !student || !stop) {
      for (const e of errors) addError(e);
      continue;
    }
    for (let d = 1; d <= 7; d++) seatsOn(route.id, d).delete(student.id);
    for (const d of days) seatsOn(route.id, d).add(student.id);
    // The rider's days are this row's now: its old ones on this route are free for later rows.
    for (const [key, by] of claimed) {
      if (by.routeId === route.id && key.startsWith(`${student.id}:`)) claimed.delete(key);
    }
    for (const d of days)
      claimed.set(dayKey(student.id, route.direction, d), { routeId: route.id, routeName: route.name });
    ok.push([route.id, student.id, stop.id, maskOf(days), route.direction]);
  }
  return ok;
}

/** The tables under the names the batch's SQL gives them, each with its own tenant condition. */
const rs = RouteStudents.alias("rs");

async function writeBatch(
  ctx: SchoolCtx,
  processId: number,
  batch: Ready<Values>[],
  addError: (e: FieldError) => void,
): Promise<number> {
  const { db, clock } = ctx.deps;
  const now = clock.now().toISOString();
  const ok = check(await lookUp(ctx, batch), batch, addError);
  if (ok.length === 0) return 0;

  const rows = JSON.stringify(ok);
  const { progress } = batchWrites(ctx, processId, now);
  // Rides home put on or changed move the day changes of the students' confirmed exit permissions.
  const home = ok.filter((r) => r[4] === "home");
  const again = home.length
    ? await factChanged(ctx, {
        fact: "riders",
        rides: home.map((r) => ({ routeId: r[0], studentId: r[1], rider: { weekdays: r[3], direction: "home" } })),
      })
    : undefined;
  // The rider of each row (route 0, student 1), once written.
  const riderOf = rs.joinOn(ctx, sql`rs.route_id = j.value->>0 AND rs.student_id = j.value->>1`, "CROSS JOIN");
  const differs = sql`(rs.stop_id IS NOT j.value->>2 OR rs.weekdays IS NOT j.value->>3)`;
  const statements: [Statement, ...Statement[]] = [
    rs.auditRows(
      ctx,
      sql`FROM json_each(${rows}) j ${riderOf} WHERE ${differs}`,
      {
        action: "update",
        changes: {
          stopId: { old: sql`rs.stop_id`, new: sql`j.value->>2`, ifChanged: true },
          weekdays: { old: sql`rs.weekdays`, new: sql`j.value->>3`, ifChanged: true },
        },
      },
      now,
    ),
    RouteStudents.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ routeId: sql`j.value->>0`, studentId: sql`j.value->>1`, stopId: sql`j.value->>2`, weekdays: sql`j.value->>3`, direction: sql`j.value->>4` })}
          FROM json_each(${rows}) j WHERE true`,
      now,
    ).onConflictDoUpdate({
      target: [routeStudents.routeId, routeStudents.studentId],
      set: { stopId: sql`excluded.stop_id`, weekdays: sql`excluded.weekdays`, updatedAt: now },
      setWhere: sql`"route_student"."stop_id" IS NOT excluded.stop_id OR "route_student"."weekdays" IS NOT excluded.weekdays`,
    }),
    rs.auditRows(
      ctx,
      sql`FROM json_each(${rows}) j ${riderOf} WHERE rs.created_at = ${now}`,
      { created: ["routeId", "studentId", "stopId", "weekdays", "direction"] },
      now,
    ),
    // Each rider's weekday rows anew from its mask: the unique index refuses a day another route has.
    db
      .delete(routeStudentDays)
      .where(inList(routeStudentDays.routeStudentId, sql`(SELECT rs.id FROM json_each(${rows}) j ${riderOf})`)),
    db.insert(routeStudentDays).select(
      sql`SELECT ${rs.schoolOf()}, rs.id, rs.student_id, rs.direction, d.value FROM json_each(${rows}) j ${riderOf}
          CROSS JOIN json_each(${"[1,2,3,4,5,6,7]"}) d WHERE ((rs.weekdays >> (d.value - 1)) & 1) = 1`,
    ),
    // The seats, again inside the batch (an admin may have filled one since the read): the batch
    // fails rather than oversell, and the process can be queued again.
    ...[...new Set(ok.map((r) => r[0]))].map((route) => seatsHold(ctx, route)),
    // The lists already printed for these routes move to their next version, with what changed.
    ...ridersChanged(
      ctx,
      RouteStudents.pick(
        ctx,
        routeStudents.id,
        eq(routeStudents.updatedAt, now),
        inList(routeStudents.id, sql`(SELECT rs.id FROM json_each(${rows}) j ${riderOf})`),
      ),
      "added",
      null,
    ),
    ...(again?.statements ?? []),
    progress(ok.length),
  ];
  await runBatch(ctx, statements);
  return ok.length;
}
