/**
 * Appointments: `/api/v1/session` (sessions, their slots' generation, publishing, deleting a held
 * set-up), `/api/v1/session-day` (days and their windows) and `/api/v1/time-slot` (slots, booking
 * and cancelling appointments, the list of appointments).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "appointment",
  paths: ["/api/v1/session", "/api/v1/session-day", "/api/v1/time-slot"],
  permissions,
  load: async () => {
    const [s, d, t, b] = await Promise.all([
      import("./sessions"),
      import("./days"),
      import("./slots"),
      import("./booking"),
    ]);
    // The fixed sub-paths before `{id}`: `/delete-pending` and `/appointment` are not ids.
    return {
      operations: [
        s.deletePendingSessionOperation,
        s.listSessions,
        s.createSession,
        s.getSession,
        s.updateSession,
        s.deleteSessionOperation,
        s.updateSessionSlotsOperation,
        s.publishSessionOperation,
        d.listSessionDays,
        d.createSessionDay,
        d.getSessionDay,
        d.updateSessionDay,
        d.deleteSessionDay,
        b.listAppointments,
        b.cancelAppointmentOperation,
        t.listTimeSlots,
        t.createTimeSlot,
        t.getTimeSlot,
        t.updateTimeSlotOperation,
        t.deleteTimeSlotOperation,
        b.createAppointmentOperation,
      ],
    };
  },
});
