/**
 * Tasks ("pending" in the spec): what the school asks of families and staff (read, sign, fill,
 * pay, book). A task is sent to an audience (students' families, groups, levels, roles, named
 * users), which is resolved when it is sent into **recipients** (`task_recipient`): one per student
 * (the student's family does it once for that child) and one per named user. Each recipient has
 * its own state, `new` -> `viewed` -> `completed` (a completion can be reverted). Who sees a
 * recipient's copy is `task_inbox`: one row per person (each guardian of the student, or the named
 * user), each with their own archive folder; a delegate acts through the inbox of the parent they
 * act for.
 *
 * A task that requires an appointment is held as a `draft` until its session is published
 * (src/db/schema/appointment.ts); any other task is `published` when it is created.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Level } from "../../lib/levels";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { families } from "./family";
import { students } from "./student";

export const TASK_STATUSES = ["draft", "published"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const COPY_STATUSES = ["new", "viewed", "completed"] as const;
export type CopyStatus = (typeof COPY_STATUSES)[number];
export const TARGET_KINDS = ["student", "group", "level", "role", "user"] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];
export const REMINDER_STATUSES = ["scheduled", "sent", "cancelled"] as const;

/** The audience a task was sent to, as staff gave it (each list may be empty; together at least one recipient). */
export interface TaskAudience {
  studentIds: number[];
  groupIds: number[];
  levels: Level[];
  roleIds: number[];
  userIds: number[];
}

export const tasks = searchable(
  sqliteTable(
    "task",
    {
      ...record,
      schoolId: schoolId(),
      title: text("title").notNull(),
      description: text("description"),
      /** School-local `YYYY-MM-DD`: the day it is due (null: no due date). Overdue after that day at the school. */
      dueDate: text("due_date"),
      /** The attachment's object key under `{schoolId}/tasks/{id}/`, its file name and content type. */
      attachmentKey: text("attachment_key"),
      attachmentName: text("attachment_name"),
      attachmentType: text("attachment_type"),
      /** Completed by booking an appointment of its session; held as a draft until the session is published. */
      requiresAppointment: integer("requires_appointment", { mode: "boolean" }).notNull().default(false),
      status: text("status", { enum: TASK_STATUSES }).notNull().default("published"),
      publishedAt: text("published_at"),
      /** When the last reminder was sent (now or scheduled). */
      remindedAt: text("reminded_at"),
      /** The public page's key (`GET /api/v1/pending/public?slug=`): unguessable, unique. */
      slug: text("slug").notNull(),
      audience: text("audience", { mode: "json" }).$type<TaskAudience>().notNull(),
      createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
      titleSearch: searchCopy("title"),
    },
    (t) => [
      uniqueIndex("task_slug_uq").on(t.slug),
      // Lists are newest first; every filter but the title is checked along this order.
      index("task_created_idx").on(t.schoolId, t.createdAt),
      index("task_status_idx").on(t.schoolId, t.status, t.createdAt),
      index("task_title_idx").on(t.schoolId, t.title),
      index("task_created_by_idx").on(t.createdBy),
    ],
  ),
  { title: "titleSearch" },
);

/**
 * What a task was addressed to, one row per group, level, role, student or user named: what the
 * lists' `group` and `level` filters look up (an index, not the JSON of `task.audience`).
 */
export const taskTargets = sqliteTable(
  "task_target",
  {
    ...record,
    schoolId: schoolId(),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: TARGET_KINDS }).notNull(),
    /** The group, role, student or user id (null for a level). */
    refId: integer("ref_id"),
    level: text("level"),
  },
  (t) => [
    index("task_target_ref_idx").on(t.taskId, t.kind, t.refId),
    index("task_target_level_idx").on(t.taskId, t.kind, t.level),
    index("task_target_school_idx").on(t.schoolId, t.taskId),
  ],
);

/** A recipient's state: a student's family (once per student) or a named user. */
export const taskRecipients = sqliteTable(
  "task_recipient",
  {
    ...record,
    schoolId: schoolId(),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    studentId: integer("student_id").references(() => students.id, { onDelete: "cascade" }),
    userId: integer("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** The student's family when the task was sent (null: a named user, or a student of no family). */
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    status: text("status", { enum: COPY_STATUSES }).notNull().default("new"),
    /** The first time someone of the recipient opened it. */
    viewedAt: text("viewed_at"),
    viewedBy: integer("viewed_by").references(() => users.id, { onDelete: "set null" }),
    completedAt: text("completed_at"),
    /** Who completed it (a delegate, a guardian, staff at the desk) and, for a delegate, the parent it counts for. */
    completedBy: integer("completed_by").references(() => users.id, { onDelete: "set null" }),
    completedFor: integer("completed_for").references(() => users.id, { onDelete: "set null" }),
    /** The appointment whose booking completed it (cancelling that booking reverts it); no foreign key: another area's record. */
    appointmentId: integer("appointment_id"),
  },
  (t) => [
    uniqueIndex("task_recipient_student_uq").on(t.taskId, t.studentId).where(sql`student_id IS NOT NULL`),
    uniqueIndex("task_recipient_user_uq").on(t.taskId, t.userId).where(sql`user_id IS NOT NULL`),
    index("task_recipient_status_idx").on(t.taskId, t.status),
    index("task_recipient_student_idx").on(t.studentId),
    index("task_recipient_user_idx").on(t.userId),
    // A task's recipients in the school (the detail, reminders): two equalities, read in id order.
    index("task_recipient_school_idx").on(t.schoolId, t.taskId, t.id),
    index("task_recipient_appointment_idx").on(t.appointmentId),
    check("task_recipient_one_ck", sql`(${t.studentId} IS NULL) <> (${t.userId} IS NULL)`),
  ],
);

/** Who sees a recipient's copy: each guardian of the student (or the named user), with their own archive folder. */
export const taskInbox = sqliteTable(
  "task_inbox",
  {
    ...record,
    schoolId: schoolId(),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    recipientId: integer("recipient_id")
      .notNull()
      .references(() => taskRecipients.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    archived: integer("archived", { mode: "boolean" }).notNull().default(false),
    archivedAt: text("archived_at"),
  },
  (t) => [
    uniqueIndex("task_inbox_uq").on(t.recipientId, t.userId),
    // A person's tasks, newest first, archived or not: one range of this index, nothing sorted.
    index("task_inbox_user_idx").on(t.schoolId, t.userId, t.archived, t.id),
    index("task_inbox_task_idx").on(t.taskId, t.userId),
    index("task_inbox_user_fk_idx").on(t.userId),
  ],
);

/** A reminder staff scheduled: the 5-minute sweep sends it once, at or after `sendAt`, to those who have not completed. */
export const taskReminders = sqliteTable(
  "task_reminder",
  {
    ...record,
    schoolId: schoolId(),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    sendAt: text("send_at").notNull(),
    status: text("status", { enum: REMINDER_STATUSES }).notNull().default("scheduled"),
    sentAt: text("sent_at"),
    /** The recipients it reminded when it was sent. */
    sentCount: integer("sent_count"),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    // The sweep's claim: every school's due reminders, in one range.
    index("task_reminder_due_idx").on(t.status, t.sendAt),
    index("task_reminder_task_idx").on(t.taskId, t.sendAt),
    index("task_reminder_school_idx").on(t.schoolId, t.createdAt),
    index("task_reminder_created_by_idx").on(t.createdBy),
  ],
);

export const Tasks = dataTable(tasks, { entity: "task" });
export const TaskTargets = dataTable(taskTargets, { entity: "task-target" });
export const TaskRecipients = dataTable(taskRecipients, { entity: "task-recipient" });
export const TaskInbox = dataTable(taskInbox, { entity: "task-inbox" });
export const TaskReminders = dataTable(taskReminders, { entity: "task-reminder" });
