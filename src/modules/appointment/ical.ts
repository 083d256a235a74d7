/**
 * The iCalendar invite of a booking (src/lib/ical.ts): one event per appointment of the visit,
 * in the school's time zone. A cancellation is the same events (same UIDs) with STATUS:CANCELLED and
 * the next SEQUENCE, so a calendar app that imported the invite removes them.
 */
import { calendarText } from "../../lib/ical";

interface Booked {
  id: number;
  slot: { startsAt: string; endsAt: string };
}

export function inviteOf(
  school: { name: string; timeZone: string },
  session: { title: string; location: string | null },
  student: { firstName: string; lastName: string },
  appointments: readonly Booked[],
  now: Date,
  status: "CONFIRMED" | "CANCELLED",
): string {
  return calendarText({
    prodId: "-//School API//Appointments//EN",
    timeZone: school.timeZone,
    stamp: now,
    events: appointments.map((a) => ({
      uid: `appointment-${a.id}@school-api`,
      start: new Date(a.slot.startsAt),
      end: new Date(a.slot.endsAt),
      summary: session.title,
      description: `${student.firstName} ${student.lastName}, ${school.name}`,
      location: session.location ?? undefined,
      status,
      sequence: status === "CANCELLED" ? 1 : 0,
    })),
  });
}
