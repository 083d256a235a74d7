/**
 * Invitations: `/api/v1/invitation` (invitations, the families' answers, answering) and
 * `/api/v1/invitation-student-response` (each invited child's answer).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "invitation",
  paths: ["/api/v1/invitation", "/api/v1/invitation-student-response"],
  permissions,
  load: async () => {
    const [i, a, r] = await Promise.all([import("./resource"), import("./answers"), import("./responses")]);
    // The fixed sub-paths before `{id}`: `/mine/...`, `/export`, `/response/...` are not ids.
    return {
      operations: [
        i.listCreatedInvitations,
        i.listReceivedInvitations,
        i.exportInvitations,
        a.updateResponseOperation,
        i.listInvitations,
        i.createInvitationOperation,
        i.getInvitation,
        i.updateInvitation,
        i.deleteInvitation,
        i.changeInvitationStatusOperation,
        r.listInvitationResponsesOperation,
        a.respondOperation,
        r.listStudentResponsesOfResponseOperation,
        r.listStudentResponses,
        r.createStudentResponseOperation,
        r.getStudentResponse,
        r.updateStudentResponseOperation,
        r.deleteStudentResponseOperation,
      ],
    };
  },
});
