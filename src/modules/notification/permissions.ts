import { definePermissions, STAFF } from "../../lib/access";

export const permissions = definePermissions({
  send: {
    id: 100,
    name: "notification.send",
    description: "Send notifications to users, roles, groups' guardians, levels or the whole school",
    grants: STAFF,
  },
  sendGroup: {
    id: 101,
    name: "notification.send-group",
    description: "Send a notification to the guardians of a group's students (teachers: the groups they teach)",
    grants: [...STAFF, "teacher"],
  },
  pushProvider: {
    id: 102,
    name: "push-provider.manage",
    description: "Sync a role's push topics and read a member's push-provider state",
    grants: ["school-admin"],
  },
  pushProviderClean: {
    id: 103,
    name: "push-provider.clean",
    description:
      "Remove the push provider's topics of the school and of schools that no longer exist (super-admin only)",
    grants: [],
  },
});
