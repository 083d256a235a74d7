/**
 * The task module's face: what other modules may use of it (the appointment module publishes a
 * held task with its session, completes a family's copy by a booking and reverts it on a
 * cancellation, deletes a held task with its session) and the one way both tell a task's recipients.
 */
export { notifyAll, recipientsOf, type Told, toRecipients, whoOf } from "./audience";
export { bookingCompletes, bookingsCancelled, publishHeld } from "./booking";
export { deleteStatements } from "./manage";
