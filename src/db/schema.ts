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

// ---------------------------------------------------------------- families (minimal; extended later)

/** A family: unique number per school; holds students and their parents. */
export const families = sqliteTable(
  "family",
  {
    ...record,
    schoolId: schoolId(),
    familyNumber: text("family_number").notNull(),
    name: text("name").notNull(),
  },
  (t) => [uniqueIndex("family_number_uq").on(t.schoolId, t.familyNumber)],
);

export const students = sqliteTable(
  "student",
  {
    ...record,
    schoolId: schoolId(),
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    firstName: text("first_name").notNull(),
    lastName: text("last_name").notNull(),
  },
  (t) => [index("student_school_idx").on(t.schoolId, t.lastName), index("student_family_idx").on(t.familyId)],
);

/** A parent: a user who belongs to a family of the school. */
export const parents = sqliteTable(
  "parent",
  {
    ...record,
    schoolId: schoolId(),
    familyId: integer("family_id")
      .notNull()
      .references(() => families.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [uniqueIndex("parent_uq").on(t.schoolId, t.userId, t.familyId), index("parent_family_idx").on(t.familyId)],
);

// ---------------------------------------------------------------- school set-up

/** A school's configuration for a school year; holiday cycles belong to one. */
export const schoolConfigurations = sqliteTable(
  "school_configuration",
  {
    ...record,
    schoolId: schoolId(),
    name: text("name").notNull(),
    /** School year, YYYY-MM-DD. */
    startDate: text("start_date").notNull(),
    endDate: text("end_date").notNull(),
    maxParentsPerFamily: integer("max_parents_per_family").notNull().default(2),
  },
  (t) => [index("school_configuration_school_idx").on(t.schoolId, t.startDate)],
);

export const schoolHolidayCycles = sqliteTable(
  "school_holiday_cycle",
  {
    ...record,
    schoolId: schoolId(),
    schoolConfigurationId: integer("school_configuration_id")
      .notNull()
      .references(() => schoolConfigurations.id, { onDelete: "cascade" }),
    startHolidays: text("start_holidays").notNull(),
    endHolidays: text("end_holidays").notNull(),
  },
  (t) => [
    index("school_holiday_cycle_school_idx").on(t.schoolId, t.startHolidays),
    index("school_holiday_cycle_configuration_idx").on(t.schoolConfigurationId),
  ],
);

/** How far ahead exit permissions are asked and generated: one per school. */
export const scheduleConfigurations = sqliteTable(
  "schedule_configuration",
  {
    ...record,
    schoolId: schoolId(),
    permissionTimeLimit: integer("permission_time_limit").notNull(),
    permissionWeeksInAdvance: integer("permission_weeks_in_advance").notNull(),
  },
  (t) => [uniqueIndex("schedule_configuration_school_uq").on(t.schoolId)],
);

// ---------------------------------------------------------------- documents and operations

/** A document in object storage; `slug` is its key: `{schoolId}/documents/{name}`. */
export const documents = sqliteTable(
  "document",
  {
    ...record,
    schoolId: schoolId(),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    /** What the document belongs to (the signed-url `entity`): documents, students, tasks, ... */
    entity: text("entity").notNull().default("documents"),
    contentType: text("content_type"),
  },
  (t) => [
    uniqueIndex("document_slug_uq").on(t.schoolId, t.slug),
    index("document_name_idx").on(t.schoolId, t.name),
    index("document_created_idx").on(t.schoolId, t.createdAt),
  ],
);

/** Push-messaging tokens of a user's devices. A token identifies one device: unique overall. */
export const deviceTokens = sqliteTable(
  "device_token",
  {
    ...record,
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    token: text("token").notNull(),
    platform: text("platform", { enum: ["ios", "android", "web"] }).notNull(),
  },
  (t) => [uniqueIndex("device_token_uq").on(t.token), index("device_token_user_idx").on(t.userId)],
);

/** An Excel import run by the bulk queue. */
export const bulkProcesses = sqliteTable(
  "bulk_process",
  {
    ...record,
    schoolId: schoolId(),
    entity: text("entity", {
      enum: ["students", "teachers", "families", "groups", "route-students", "administrative-staff"],
    }).notNull(),
    documentId: integer("document_id")
      .notNull()
      .references(() => documents.id, { onDelete: "restrict" }),
    status: text("status", { enum: ["queued", "processing", "completed", "failed"] })
      .notNull()
      .default("queued"),
    totalRows: integer("total_rows").notNull().default(0),
    processedRows: integer("processed_rows").notNull().default(0),
    /** JSON array of `{ row, message }`. */
    errors: text("errors").notNull().default("[]"),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
  },
  (t) => [
    index("bulk_process_school_idx").on(t.schoolId, t.createdAt),
    index("bulk_process_status_idx").on(t.schoolId, t.status),
    // Deleting a document checks the foreign key: without this index that scans every process.
    index("bulk_process_document_idx").on(t.documentId),
    // The cron sweep looks for processes stuck in "processing" across schools.
    index("bulk_process_running_idx").on(t.status, t.startedAt),
  ],
);

/** The transportation rules text a school shows parents: one per school. */
export const transportationRules = sqliteTable(
  "transportation_rules",
  {
    ...record,
    schoolId: schoolId(),
    content: text("content").notNull(),
    updatedBy: integer("updated_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [uniqueIndex("transportation_rules_school_uq").on(t.schoolId)],
);

/**
 * Queue messages already handled: a consumer inserts the message key (ON CONFLICT DO NOTHING)
 * before its side effects, so a redelivered message does nothing twice.
 */
export const queueReceipts = sqliteTable(
  "queue_receipt",
  {
    key: text("key").primaryKey(),
    queue: text("queue").notNull(),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("queue_receipt_created_idx").on(t.createdAt)],
);
