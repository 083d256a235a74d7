/** Administrative staff: a user's staff profile in a school (the built-in "staff" role's own fields). */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";

export const administrativeUsers = searchable(
  sqliteTable(
    "administrative_user",
    {
      ...record,
      schoolId: schoolId(),
      userId: integer("user_id")
        .notNull()
        .references(() => users.id, { onDelete: "cascade" }),
      /** Job title: "Registrar", "Transport coordinator". */
      position: text("position").notNull().default(""),
      employeeNumber: text("employee_number"),
      positionSearch: searchCopy("position"),
    },
    (t) => [
      // The list's order (created_at, id) within a school, without a sort step.
      index("administrative_user_created_idx").on(t.schoolId, t.createdAt),
      uniqueIndex("administrative_user_user_uq").on(t.schoolId, t.userId),
      uniqueIndex("administrative_user_employee_number_uq").on(t.schoolId, t.employeeNumber),
    ],
  ),
  { position: "positionSearch" },
);

export const AdministrativeUsers = dataTable(administrativeUsers, { entity: "administrative-user" });
