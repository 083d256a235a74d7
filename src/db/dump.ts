/**
 * Reading whole tables for an export (a school's records, a person's own data): every table of the
 * schema, each row read as its SQL columns (`{ "school_id": 1, ... }`), page by page in rowid order
 * so a table of any size is read in bounded memory. The data layer, because the school's condition
 * is written here: the accessor's `ofSchool` where the table has one, the column itself for the two
 * tables without record columns (route_student_day, route_list_change).
 *
 * What a row of a table holds that no export may carry (token values, the audit trail's secret
 * columns) is written null: the accessors' `secret` columns, and the tables left out entirely
 * (sign-in codes, refresh tokens, idempotency keys, rate limits, queue receipts, development outboxes).
 */
import { getTableConfig, type SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";
import * as address from "./schema/address";
import * as administrativeUser from "./schema/administrative-user";
import * as applicationModule from "./schema/application-module";
import * as appointment from "./schema/appointment";
import * as auditLog from "./schema/audit-log";
import * as bulkProcess from "./schema/bulk-process";
import * as core from "./schema/core";
import * as delegate from "./schema/delegate";
import * as deviceToken from "./schema/device-token";
import * as dismissal from "./schema/dismissal";
import * as document from "./schema/document";
import * as event from "./schema/event";
import * as exitPermission from "./schema/exit-permission";
import * as family from "./schema/family";
import * as group from "./schema/group";
import * as holidayCycle from "./schema/holiday-cycle";
import * as invitation from "./schema/invitation";
import * as legalDocument from "./schema/legal-document";
import * as lostArticle from "./schema/lost-article";
import * as notification from "./schema/notification";
import * as parent from "./schema/parent";
import * as routeRun from "./schema/route-run";
import * as scheduleConfiguration from "./schema/schedule-configuration";
import * as schoolConfiguration from "./schema/school-configuration";
import * as schoolSchedule from "./schema/school-schedule";
import * as student from "./schema/student";
import * as task from "./schema/task";
import * as teacher from "./schema/teacher";
import * as transport from "./schema/transport";
import * as transportRules from "./schema/transport-rules";
import * as trustedAddress from "./schema/trusted-address";
import * as trustedPerson from "./schema/trusted-person";
import * as user from "./schema/user";
import * as webhook from "./schema/webhook";
import { and, getTableColumns, getTableName, is, type SQL, sql } from "./sql";
import { Data, type RecordTable } from "./table";

/**
 * Every schema file but those of tables no export carries: auth.ts (sign-in codes, refresh
 * tokens), jobs.ts (cron history, queue receipts, rate limits, idempotency keys), dev.ts (the
 * development outboxes). test/school-export.test.ts checks that every table with a `school_id`
 * column in the database is here.
 */
const SCHEMAS = [
  core,
  address,
  administrativeUser,
  applicationModule,
  appointment,
  auditLog,
  bulkProcess,
  delegate,
  deviceToken,
  dismissal,
  document,
  event,
  exitPermission,
  family,
  group,
  holidayCycle,
  invitation,
  legalDocument,
  lostArticle,
  notification,
  parent,
  routeRun,
  scheduleConfiguration,
  schoolConfiguration,
  schoolSchedule,
  student,
  task,
  teacher,
  transportRules,
  transport,
  trustedAddress,
  trustedPerson,
  user,
  webhook,
];

/** One table as an export reads it. */
export interface DumpTable {
  /** The SQL name: `student`. */
  name: string;
  table: SQLiteTable;
  /** Its columns by SQL name. */
  columns: Record<string, SQLiteColumn>;
  /** Columns written null (the accessor's secret ones). */
  secret: ReadonlySet<string>;
  /** The school column, when the table has one. */
  school: SQLiteColumn | undefined;
  /** The accessor, when the table has one. */
  data: Data<RecordTable> | undefined;
  /** Columns that reference another table: `{ column, table }` (the referenced table's SQL name). */
  references: { column: SQLiteColumn; table: string }[];
}

let memo: DumpTable[] | undefined;

/** Every table an export may read, in the order of the schema files (parents before children). */
export function dumpTables(): DumpTable[] {
  if (memo) return memo;
  const byName = new Map<string, DumpTable>();
  for (const schema of SCHEMAS) {
    for (const table of Object.values(schema)) {
      if (!is(table, SQLiteTable)) continue;
      const name = getTableName(table);
      if (byName.has(name)) continue;
      const config = getTableConfig(table);
      const columns = Object.fromEntries(config.columns.map((c) => [c.name, c]));
      byName.set(name, {
        name,
        table,
        columns,
        secret: new Set(),
        school: columns.school_id,
        data: undefined,
        references: config.foreignKeys.flatMap((fk) => {
          const ref = fk.reference();
          const column = ref.columns[0];
          return column && ref.columns.length === 1 ? [{ column, table: getTableName(ref.foreignTable) }] : [];
        }),
      });
    }
    for (const data of Object.values(schema)) {
      if (!(data instanceof Data)) continue;
      const entry = byName.get(getTableName(data.table));
      // The first accessor of a table (another, `X.as(entity)`, names the same rows).
      if (!entry || entry.data) continue;
      entry.data = data;
      const byKey = getTableColumns(data.table);
      entry.secret = new Set((data.audit.secret ?? []).flatMap((key) => byKey[key]?.name ?? []));
    }
  }
  memo = [...byName.values()];
  return memo;
}

/** The tables with rows of one school (a `school_id` column). */
export const schoolTables = () => dumpTables().filter((t) => t.school !== undefined);

/** A table by SQL name. */
export function dumpTable(name: string): DumpTable {
  const found = dumpTables().find((t) => t.name === name);
  if (!found) throw new Error(`no table ${name} in the export's schema`);
  return found;
}

/** The condition of a table's rows of one school. */
export function ofSchool(t: DumpTable, school: number): SQL {
  if (t.data) return t.data.ofSchool(school);
  if (!t.school) throw new Error(`${t.name}: a table without school_id belongs to no school`);
  return sql`${t.school} = ${school}`;
}

/** Rows read per round trip: a page of a wide table stays far below D1's response limit. */
export const DUMP_PAGE = 500;

/**
 * The rows of `t` that `where` selects, each as `{ column: value }` by SQL name (JSON columns as
 * JSON, booleans as booleans, secret columns null), in rowid order: `onPage` is given each page
 * as it is read, so the caller writes it out before the next is read.
 *
 * `NOT INDEXED`: each page is a range of the table's rowid (`rowid > last`), so the whole export
 * reads each table once. Left to itself the planner takes the school's index and sorts all of the
 * school's rows by rowid for every page (every row read again per page of 500). Subqueries in
 * `where` still use their indexes.
 */
export async function readRows(
  db: Db,
  t: DumpTable,
  where: SQL | undefined,
  onPage: (rows: Record<string, unknown>[]) => Promise<void> | void,
): Promise<number> {
  const columns = Object.values(t.columns);
  const list = sql.join(
    columns.map((c) => sql`${t.table}.${sql.identifier(c.name)}`),
    sql`, `,
  );
  let after = 0;
  let total = 0;
  for (;;) {
    const condition = and(where, sql`${t.table}.rowid > ${after}`);
    const rows = await db.all<Record<string, unknown>>(
      sql`SELECT ${list}, ${t.table}.rowid AS "_rowid_" FROM ${t.table} NOT INDEXED WHERE ${condition} ORDER BY ${t.table}.rowid LIMIT ${DUMP_PAGE}`,
    );
    if (rows.length === 0) return total;
    after = Number(rows[rows.length - 1]?._rowid_);
    await onPage(
      rows.map((row) => {
        const out: Record<string, unknown> = {};
        for (const c of columns) {
          const value = row[c.name];
          out[c.name] =
            t.secret.has(c.name) || value === null || value === undefined ? null : c.mapFromDriverValue(value);
        }
        return out;
      }),
    );
    total += rows.length;
    if (rows.length < DUMP_PAGE) return total;
  }
}

/** Tables a person's export never reads, though a row may name them: the audit trail is the school's. */
const NOT_PERSONAL = new Set(["audit_log", "school", "role", "permission", "application_module", "legal_document"]);

/**
 * The rows of `t` that are one person's own in one school (their privacy export): rows that name
 * them (a column referencing `user`), their parent rows, their children (through their
 * guardianships) and their families, their devices, the notifications they received; and never a
 * row that names another family's student, family or parent. `undefined` when no row of `t` can be.
 */
export function personRows(t: DumpTable, school: number, userId: number): SQL | undefined {
  if (NOT_PERSONAL.has(t.name)) return undefined;
  const parent = dumpTable("parent");
  const guardian = dumpTable("guardian");
  const student = dumpTable("student");
  const recipient = dumpTable("notification_recipient");
  const device = dumpTable("device_token");
  const col = (d: DumpTable, name: string) => {
    const c = d.columns[name];
    if (!c) throw new Error(`${d.name}.${name} is not a column`);
    return c;
  };
  const parents = sql`SELECT ${col(parent, "id")} FROM ${parent.table} WHERE ${ofSchool(parent, school)} AND ${col(parent, "user_id")} = ${userId}`;
  const children = sql`SELECT ${col(guardian, "student_id")} FROM ${guardian.table} WHERE ${ofSchool(guardian, school)} AND ${col(guardian, "parent_id")} IN (${parents})`;
  const families = sql`SELECT ${col(parent, "family_id")} FROM ${parent.table} WHERE ${ofSchool(parent, school)} AND ${col(parent, "user_id")} = ${userId} AND ${col(parent, "family_id")} IS NOT NULL UNION SELECT ${col(student, "family_id")} FROM ${student.table} WHERE ${ofSchool(student, school)} AND ${col(student, "id")} IN (${children}) AND ${col(student, "family_id")} IS NOT NULL`;
  const devices = sql`SELECT ${col(device, "id")} FROM ${device.table} WHERE ${col(device, "user_id")} = ${userId}`;
  const notifications = sql`SELECT ${col(recipient, "notification_id")} FROM ${recipient.table} WHERE ${ofSchool(recipient, school)} AND ${col(recipient, "user_id")} = ${userId}`;
  const user = sql`SELECT ${userId}`;
  /** What of each referenced table is the person's. */
  const mine: Record<string, SQL> = {
    user,
    parent: parents,
    student: children,
    family: families,
    device_token: devices,
    notification: notifications,
  };
  /** References that must stay inside the person's family when they are set. */
  const family = new Set(["parent", "student", "family"]);
  const matches: SQL[] = [];
  const allowed: SQL[] = [];
  const own = mine[t.name];
  const id = t.columns.id;
  if (own && id) matches.push(sql`${id} IN (${own})`);
  if (own && id && family.has(t.name)) allowed.push(sql`${id} IN (${own})`);
  for (const ref of t.references) {
    const set = mine[ref.table];
    if (!set) continue;
    matches.push(sql`${ref.column} IN (${set})`);
    if (family.has(ref.table)) allowed.push(sql`(${ref.column} IS NULL OR ${ref.column} IN (${set}))`);
  }
  if (matches.length === 0) return undefined;
  return and(t.school ? ofSchool(t, school) : undefined, sql`(${sql.join(matches, sql` OR `)})`, ...allowed);
}
