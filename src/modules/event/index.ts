/**
 * Events: `/api/v1/event` (events, their public page, reminding now, deleting with a reason, the
 * image), `/api/v1/event-reminder` (reminders a time before the start, sent by the 5-minute sweep)
 * and `/api/v1/event-calendar` (the school's and the families' iCalendar feeds).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "event",
  paths: ["/api/v1/event", "/api/v1/event-reminder", "/api/v1/event-calendar"],
  permissions,
  load: async () => {
    const [r, a, rem, cal] = await Promise.all([
      import("./resource"),
      import("./actions"),
      import("./reminders"),
      import("./calendar"),
    ]);
    // The fixed sub-paths before `{id}`: `/public` and `/feed` are not ids.
    return {
      operations: [
        a.getPublicEventOperation,
        r.listEventsOperation,
        r.createEventOperation,
        r.getEvent,
        r.updateEventOperation,
        r.deleteEvent,
        a.remindEventOperation,
        a.deleteEventWithReasonOperation,
        a.createEventSignedUrlOperation,
        rem.createEventReminderOperation,
        rem.deleteEventReminder,
        cal.getCalendarFeedFileOperation,
        cal.listCalendarFeeds,
        cal.createCalendarFeedOperation,
        cal.getCalendarFeed,
        cal.rotateCalendarFeedOperation,
        cal.deleteCalendarFeed,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "send-event-reminders",
      run: async (deps) => (await import("./reminders")).sendDueEventReminders(deps),
    },
  ],
});
