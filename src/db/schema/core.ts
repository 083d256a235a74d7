/**
 * The spine's tables (drizzle, SQLite dialect; the same tables run on D1 and on libSQL): schools,
 * users and access control, plus the column helpers every table uses. Each module keeps its own
 * tables in `src/modules/<name>/schema.ts`; `npm run db:generate` reads them all
 * (drizzle.config.ts) and writes migrations into `migrations/`.
 *
 * Conventions: integer `id` primary keys (AUTOINCREMENT, so `sqlite_sequence` names the last id of
 * each table inside a batch); `created_at` / `updated_at` as ISO 8601 text written from the
 * injected clock (they sort as text); every tenant-owned table has a non-null `school_id` and an
 * index that starts with it.
 */
import { index, integer, type SQLiteColumn, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable, joinTable } from "../table";

/**
 * The column default is only a fallback for hand-written SQL: the app writes both timestamps from
 * its clock (`deps.clock`), so no test depends on the date it runs.
 */
const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

/** `id`, `created_at`, `updated_at`: every stored record carries them. */
export const record = {
  id: integer("id").primaryKey({ autoIncrement: true }),
  createdAt: text("created_at").notNull().default(now),
  updatedAt: text("updated_at").notNull().default(now),
};

/** The owning school of a tenant row: required, and its rows go with the school. */
export const schoolId = () =>
  integer("school_id")
    .notNull()
    .references(() => schools.id, { onDelete: "cascade" });

/** A creation instant without a DB default fallback (`created_at` of log-like tables). */
export const createdAt = () => text("created_at").notNull().default(now);

/**
 * A school (the tenant). `levels` is a JSON array of the levels it offers, in canonical order
 * (src/modules/school/levels.ts); `address_id` points at an address of the same school (checked by
 * the school module when it is set; no foreign key, so the address module's table need not be
 * imported here); `logo` is an object key under `{id}/logo/`.
 */
export const schools = searchable(
  sqliteTable(
    "school",
    {
      ...record,
      name: text("name").notNull(),
      timeZone: text("time_zone").notNull().default("UTC"),
      /**
       * The language of the school's messages when neither the request nor the caller names one, and
       * of the people it adds (src/lib/language.ts). Spanish by default: as new people already were.
       */
      language: text("language", { enum: ["es", "en"] })
        .notNull()
        .default("es"),
      levels: text("levels", { mode: "json" }).$type<string[]>().notNull().default([]),
      email: text("email"),
      phone: text("phone"),
      addressId: integer("address_id"),
      logo: text("logo"),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      index("school_name_idx").on(t.name),
      // The name filter's LIKE reads the copies of this index, not the table (a count reads nothing else).
      index("school_name_search_idx").on(t.nameSearch),
      index("school_created_idx").on(t.createdAt),
      index("school_address_idx").on(t.addressId),
    ],
  ),
  { name: "nameSearch" },
);

export const users = searchable(
  sqliteTable(
    "user",
    {
      ...record,
      phone: text("phone").notNull(),
      firstName: text("first_name").notNull().default(""),
      lastName: text("last_name").notNull().default(""),
      email: text("email"),
      language: text("language").notNull().default("en"),
      /** invited (never signed in), active, inactive (cannot sign in). */
      status: text("status", { enum: ["invited", "active", "inactive"] })
        .notNull()
        .default("invited"),
      /** A platform super-admin may act in any school. */
      isSuperAdmin: integer("is_super_admin", { mode: "boolean" }).notNull().default(false),
      /** When the person deleted their own account (personal data anonymised, tokens revoked). */
      deletedAt: text("deleted_at"),
      firstNameSearch: searchCopy("first_name"),
      lastNameSearch: searchCopy("last_name"),
    },
    (t) => [uniqueIndex("user_phone_uq").on(t.phone)],
  ),
  { firstName: "firstNameSearch", lastName: "lastNameSearch" },
);

/**
 * The shard map (docs/scaling.md "Shards"): which database holds a school's rows, by its binding's
 * name (`DB`, `DB_SHARD_1`, ...). A platform table, in the platform database only; read and
 * written by src/db/shards.ts alone. A school without a row is on `DB`.
 */
export const schoolShards = sqliteTable(
  "school_shard",
  {
    schoolId: integer("school_id")
      .primaryKey()
      .references(() => schools.id, { onDelete: "cascade" }),
    binding: text("binding").notNull(),
    /** Writes of the school answer 503 until then (a move under way: src/db/move.ts); null: not paused. */
    pausedUntil: text("paused_until"),
    /** The move under way: from which database to which (null: none). */
    movingFrom: text("moving_from"),
    movingTo: text("moving_to"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [index("school_shard_binding_idx").on(t.binding)],
);

export const permissions = sqliteTable(
  "permission",
  {
    ...record,
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
  },
  (t) => [uniqueIndex("permission_name_uq").on(t.name)],
);

/** Roles are sets of permissions. Built-in roles have a `key` and no school. */
/** The Latin accented capitals of Spanish, Portuguese and French names, lowered (SQLite's lower() and NOCASE fold ASCII only). */
const ACCENTED_CAPITALS = "ÁÀÂÃÉÈÊÍÓÔÕÚÜÑÇ";
const ACCENTED_CAPITALS_LOWERED = (column: SQLiteColumn) =>
  sql`${sql.raw("replace(".repeat(ACCENTED_CAPITALS.length))}${column}${sql.raw(
    [...ACCENTED_CAPITALS].map((ch) => `, '${ch}', '${ch.toLowerCase()}')`).join(""),
  )}`;

export const roles = searchable(
  sqliteTable(
    "role",
    {
      ...record,
      key: text("key"),
      name: text("name").notNull(),
      schoolId: integer("school_id").references(() => schools.id, { onDelete: "cascade" }),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      uniqueIndex("role_key_uq").on(t.key),
      index("role_school_idx").on(t.schoolId),
      // A custom role's name is unique in its school, whatever its case ("Nurse" and "nurse" are one
      // name, and so are "Dirección" and "DIRECCIÓN": NOCASE folds ASCII only, so the accented
      // capitals are lowered first; built-in roles have no school: NULLs are distinct).
      uniqueIndex("role_school_name_case_uq").on(t.schoolId, sql`${ACCENTED_CAPITALS_LOWERED(t.name)} COLLATE NOCASE`),
      // The roles a school sees (built-in: no school, as 0; and its own) in one ordered range:
      // `ifnull(school_id, 0) IN (0, ?)` ordered by it and id reads no other school's rows and sorts nothing.
      index("role_scope_idx").on(sql`ifnull(${t.schoolId}, 0)`, t.id),
    ],
  ),
  { name: "nameSearch" },
);

export const rolePermissions = sqliteTable(
  "role_permission",
  {
    roleId: integer("role_id")
      .notNull()
      .references(() => roles.id, { onDelete: "cascade" }),
    permissionId: integer("permission_id")
      .notNull()
      .references(() => permissions.id, { onDelete: "cascade" }),
  },
  (t) => [
    uniqueIndex("role_permission_uq").on(t.roleId, t.permissionId),
    index("role_permission_permission_idx").on(t.permissionId),
  ],
);

/** A user's roles in a school. */
export const roleUsers = sqliteTable(
  "role_user",
  {
    ...record,
    schoolId: schoolId(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    roleId: integer("role_id")
      .notNull()
      .references(() => roles.id, { onDelete: "cascade" }),
  },
  (t) => [
    uniqueIndex("role_user_uq").on(t.userId, t.schoolId, t.roleId),
    index("role_user_school_idx").on(t.schoolId, t.roleId),
  ],
);

export const Schools = dataTable(schools, { entity: "school" });
export const Users = dataTable(users, { entity: "user" });
export const Permissions = dataTable(permissions, { entity: "permission" });
export const Roles = dataTable(roles, { entity: "role", tenancy: "shared" });
/**
 * Whose a role is, as role_scope_idx keys it: 0 for a built-in role (no school), else its school.
 * Ordering by it then id lists the built-in roles first and sorts nothing.
 */
export const roleOwner = sql<number>`ifnull(${roles.schoolId}, 0)`;
export const RoleUsers = dataTable(roleUsers, { entity: "role-user" });
export const RolePermissions = joinTable(rolePermissions);
