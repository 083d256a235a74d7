/**
 * What the appointment operations refuse with: the details their verbs throw, which their routes
 * show as examples, so the document says what the API answers (docs/decisions.md, "The document
 * teaches by example"); and the booking's cases, named for the docs page.
 */
import type { ProblemCase } from "../../lib/errors";
import { joinMessages, m } from "../../lib/message";
import { stateName } from "../../lib/names";

/** The details, by operation. */
export const appointmentSays = {
  // Sessions
  sessionBooked: (id: number) => m`Session ${id} has live bookings: cancel them first`,
  taskSent: (taskId: number) =>
    m`Task ${taskId} was sent already: delete it with a reason (POST /api/v1/pending/${taskId}/delete)`,
  taskChanged: (taskId: number) => m`Task ${taskId} changed (sent or deleted) meanwhile; read it again`,
  bookedSlotsRemoved: (slots: readonly { id: number; date: string; start: string }[]) =>
    m`Booked slots would be removed: ${joinMessages(
      slots.map((b) => m`${b.date} ${b.start} (slot ${b.id})`),
      ", ",
    )}; cancel their bookings or keep their windows`,
  overCapacity: (capacity: number, slots: readonly { id: number; booked: number }[]) =>
    m`Slots have more bookings than capacity ${capacity}: ${joinMessages(
      slots.map((o) => m`slot ${o.id} (${o.booked})`),
      ", ",
    )}`,
  slotsChanged: (id: number) => m`Session ${id}'s slots changed meanwhile (a booking); try again`,
  publishedAlready: (id: number, state: string) => m`Session ${id} is ${stateName(state)} already`,
  noSlotAhead: (id: number) => m`Session ${id} has no slot ahead: add days and generate slots first`,
  publishedMeanwhile: (id: number) => m`Session ${id} was published (or deleted) meanwhile`,
  // Days
  dayPast: (date: string, today: string) => m`${date} is past (today is ${today} at the school)`,
  dayHoliday: (date: string) => m`${date} is a holiday at the school`,
  dayBookedMove: (id: number) => m`Session day ${id} has booked slots: cancel them before moving it to another date`,
  dayBooked: (id: number) => m`Session day ${id} has booked slots: cancel them first`,
  dayTwice: m`The session already has this day`,
  // Slots
  endsBeforeStart: (date: string, start: string, end: string) =>
    m`The slot ends (${end}) before it starts (${start}) on ${date} at the school`,
  overlaps: (other: { id: number; start: string; end: string }) =>
    m`It overlaps slot ${other.id} (${other.start}-${other.end}) of the same teacher that day`,
  slotBookedStays: (id: number) => m`Time slot ${id} is booked: its times and teacher stay`,
  capacityBelowBookings: (id: number, booked: number) =>
    m`Time slot ${id} has ${booked} bookings: capacity at least ${booked}`,
  slotBookedMeanwhile: (id: number) => m`Time slot ${id} was booked meanwhile; read it again`,
  slotBooked: (id: number) => m`Time slot ${id} is booked: cancel its bookings first`,
  // Booking
  visitSessions: m`The slots of a visit are of one session`,
  visitDays: m`The slots of a visit are on one day`,
  visitTeachers: m`The slots of a visit are with different teachers, one slot each`,
  visitOverlap: (a: number, b: number) => m`Slots ${a} and ${b} overlap`,
  visitGap: (a: number, b: number, gap: number, max: number) =>
    m`Slots ${a} and ${b} are ${gap} minutes apart: a visit's slots are consecutive (at most ${max})`,
  notBookable: (sessionId: number) => m`Session ${sessionId} is not published: its slots are not bookable yet`,
  slotPast: (slot: { id: number; date: string; start: string }) =>
    m`Slot ${slot.id} (${slot.date} ${slot.start}) has started or is past`,
  holiday: (date: string) => m`${date} is a holiday at the school: no appointments`,
  notInvited: (studentId: number) => m`Student ${studentId}'s family did not receive this session's task`,
  slotFull: (slot: { id: number; date: string; start: string }) =>
    m`Slot ${slot.id} (${slot.date} ${slot.start}) is full`,
  slotTaken: (id: number) => m`Slot ${id} is full: another family took the last place`,
  sessionNotPublished: (sessionId: number) => m`Session ${sessionId} is not published`,
  familyLimit: (held: number, limit: number) =>
    held === 1
      ? m`The family holds ${held} booking in this session already (at most ${limit}): cancel one to book another`
      : m`The family holds ${held} bookings in this session already (at most ${limit}): cancel one to book another`,
  bookingRaced: m`The slots changed while booking; try again`,
  hasSlot: (studentId: number) => m`Student ${studentId} has one of these slots already`,
  // Cancelling
  cancelledAlready: (id: number) => m`Appointment ${id} is cancelled already`,
  tooLateToCancel: (hours: number, cutOff: string) =>
    hours === 1
      ? m`Too late to cancel: families cancel up to ${hours} hour before (${cutOff}); call the school`
      : m`Too late to cancel: families cancel up to ${hours} hours before (${cutOff}); call the school`,
  cancelledMeanwhile: (id: number) => m`Appointment ${id} was cancelled meanwhile`,
} as const;

/** The slot the booking's examples name. */
const SLOT = { id: 42, date: "2027-03-12", start: "16:00" };

/** The longest gap between consecutive slots of one visit (./booking.ts checks it; its 422 names it). */
export const MAX_GAP_MINUTES = 30;

/** What booking a slot refuses with: each case of its 409 and 422. */
export const BOOKING_REFUSALS: { 409: ProblemCase[]; 422: ProblemCase[] } = {
  409: [
    { name: "notPublished", summary: "A slot of a session not published", detail: appointmentSays.notBookable(3) },
    { name: "hasSlot", summary: "The child has one of these slots already", detail: appointmentSays.hasSlot(2001) },
    { name: "raced", summary: "The slots changed while booking", detail: appointmentSays.bookingRaced },
  ],
  422: [
    { name: "full", summary: "A full slot", detail: appointmentSays.slotFull(SLOT) },
    { name: "taken", summary: "Another family took the last place meanwhile", detail: appointmentSays.slotTaken(42) },
    {
      name: "familyLimit",
      summary: "The family holds its bookings in the session",
      detail: appointmentSays.familyLimit(1, 1),
    },
    { name: "past", summary: "A slot that has started", detail: appointmentSays.slotPast(SLOT) },
    { name: "holiday", summary: "A holiday at the school", detail: appointmentSays.holiday(SLOT.date) },
    {
      name: "notInvited",
      summary: "A child the session's task was not sent to",
      detail: appointmentSays.notInvited(2001),
    },
    {
      name: "gap",
      summary: "A visit's slots not consecutive",
      detail: appointmentSays.visitGap(42, 44, 45, MAX_GAP_MINUTES),
    },
    { name: "teachers", summary: "Two slots of one teacher in a visit", detail: appointmentSays.visitTeachers },
  ],
};
