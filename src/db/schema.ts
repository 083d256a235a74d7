/**
 * The database schema (drizzle, SQLite dialect): the same tables run on D1 and on libSQL.
 * Migrations in `migrations/` are generated from this file by `npm run db:generate`.
 *
 * Conventions: integer `id` primary keys; `created_at` / `updated_at` as ISO 8601 text (they sort
 * as text and need no conversion on the way out); every tenant-owned table has a non-null
 * `school_id` and an index that starts with it.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

/** `id`, `created_at`, `updated_at`: every stored record carries them (spec 2.1). */
const record = {
  id: integer("id").primaryKey({ autoIncrement: true }),
  createdAt: text("created_at").notNull().default(now),
  updatedAt: text("updated_at").notNull().default(now),
};

const schoolId = () =>
  integer("school_id")
    .notNull()
    .references(() => schools.id, { onDelete: "cascade" });

// ---------------------------------------------------------------- schools, people, access

export const schools = sqliteTable("school", {
  ...record,
  name: text("name").notNull(),
  timeZone: text("time_zone").notNull().default("UTC"),
});

export const users = sqliteTable(
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
  },
  (t) => [uniqueIndex("user_phone_uq").on(t.phone)],
);

/** Named capabilities (`student.read`). Global: the same catalogue serves every school. */
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
export const roles = sqliteTable(
  "role",
  {
    ...record,
    key: text("key"),
    name: text("name").notNull(),
    schoolId: integer("school_id").references(() => schools.id, { onDelete: "cascade" }),
  },
  (t) => [uniqueIndex("role_key_uq").on(t.key), index("role_school_idx").on(t.schoolId)],
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

// ---------------------------------------------------------------- authentication

/** One-time sign-in codes: only an HMAC of the code is stored. */
export const verificationCodes = sqliteTable(
  "verification_code",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    phone: text("phone").notNull(),
    codeHash: text("code_hash").notNull(),
    attempts: integer("attempts").notNull().default(0),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [
    index("verification_code_phone_idx").on(t.phone, t.createdAt),
    index("verification_code_expires_idx").on(t.expiresAt),
  ],
);

/**
 * Refresh tokens, stored as SHA-256 hashes. Rotation: each use revokes the token and issues a new
 * one of the same `family`; presenting a revoked token revokes the whole family (theft detection).
 */
export const refreshTokens = sqliteTable(
  "refresh_token",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    family: text("family").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("refresh_token_hash_uq").on(t.tokenHash),
    index("refresh_token_family_idx").on(t.family),
    index("refresh_token_user_idx").on(t.userId),
    index("refresh_token_expires_idx").on(t.expiresAt),
  ],
);

/** Messages the `log` SMS provider "sent": the development outbox. */
export const devOutbox = sqliteTable(
  "dev_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    to: text("to").notNull(),
    body: text("body").notNull(),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("dev_outbox_to_idx").on(t.to, t.id)],
);

// ---------------------------------------------------------------- operations

/** One row per scheduled run (cron history). */
export const cronHistory = sqliteTable(
  "cron_history",
  {
    ...record,
    cron: text("cron").notNull(),
    job: text("job").notNull(),
    status: text("status", { enum: ["running", "completed", "failed"] }).notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    detail: text("detail"),
  },
  (t) => [index("cron_history_job_idx").on(t.job, t.startedAt)],
);
