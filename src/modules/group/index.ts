/**
 * Groups (classes): `/api/v1/group` (groups, their participants and image, the caller's groups),
 * `/api/v1/group-teacher` and `/api/v1/group-student` (the membership rows themselves).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "group",
  paths: ["/api/v1/group", "/api/v1/group-teacher", "/api/v1/group-student"],
  permissions,
  load: async () => {
    const [g, m] = await Promise.all([import("./resource"), import("./members")]);
    // The fixed sub-paths before `{id}`: `/mine` and `/delete-multiple` are not ids.
    return {
      operations: [
        g.listMyGroups,
        g.listMyTeacherGroups,
        g.deleteMultipleGroups,
        g.deleteMultipleGroupsPost,
        g.listGroups,
        g.getGroup,
        g.createGroup,
        g.updateGroup,
        g.deleteGroup,
        g.getGroupParticipants,
        g.addGroupParticipants,
        g.removeGroupParticipants,
        g.createGroupSignedUrl,
        m.listGroupTeachers,
        m.getGroupTeacher,
        m.createGroupTeacher,
        m.updateGroupTeacher,
        m.deleteGroupTeacher,
        m.listGroupStudents,
        m.getGroupStudent,
        m.createGroupStudent,
        m.updateGroupStudent,
        m.deleteGroupStudent,
      ],
    };
  },
});
