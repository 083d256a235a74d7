/**
 * Tasks: `/api/v1/pending` (tasks, each person's copies, the detail, reminders now, deletion with a
 * reason, the attachment, the public page) and `/api/v1/pending-reminder` (scheduled reminders, sent
 * by the 5-minute sweep).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "task",
  paths: ["/api/v1/pending", "/api/v1/pending-reminder"],
  permissions,
  load: async () => {
    const [r, c, m, rem] = await Promise.all([
      import("./resource"),
      import("./copies"),
      import("./manage"),
      import("./reminders"),
    ]);
    // The fixed sub-paths before `{id}`: `/mine` and `/public` are not ids.
    return {
      operations: [
        c.listMyTasksOperation,
        m.getPublicTaskOperation,
        r.listTasks,
        r.createTaskOperation,
        r.getTaskOperation,
        r.updateTask,
        m.getTaskDetailOperation,
        m.deleteTaskWithReasonOperation,
        m.sendTaskReminderOperation,
        m.createTaskSignedUrlOperation,
        c.markViewed,
        c.markCompleted,
        c.revertCompletion,
        c.archiveTask,
        c.unarchiveTask,
        rem.createPendingReminder,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "send-task-reminders",
      run: async (deps) => (await import("./reminders")).sendDueReminders(deps),
    },
  ],
});
