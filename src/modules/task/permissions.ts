import { definePermissions, STAFF } from "../../lib/access";

/**
 * Everyone who may receive a task reads and answers their own copies (a delegate in its window acts
 * as the parent); `task.manage` sends, changes, reminds and deletes tasks and reads every
 * recipient's state.
 */
export const permissions = definePermissions({
  read: {
    id: 140,
    name: "task.read",
    description: "List and read the tasks sent to oneself and one's children (task.manage: every task)",
    grants: [...STAFF, "teacher", "parent"],
  },
  respond: {
    id: 141,
    name: "task.respond",
    description: "Mark one's own tasks viewed or completed, revert a completion, archive and unarchive them",
    grants: [...STAFF, "teacher", "parent"],
  },
  manage: {
    id: 142,
    name: "task.manage",
    description: "Send, change, remind and delete tasks, and read every recipient's state",
    grants: STAFF,
  },
});
