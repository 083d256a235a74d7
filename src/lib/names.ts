/**
 * Codes a message names, in the message's language: in English the code itself, as the API writes
 * it in records and paths; in Spanish its word (src/lib/messages/es.json).
 *
 * - A record's state (`pending`, `confirmed`, `claimed`...): `` m`Event ${id} is ${stateName(state)}` ``
 *   ("El evento 42 está en estado cancelado": the Spanish follows "en estado").
 * - An application module (`transport`): `moduleName(key)` ("El módulo «Transporte»").
 *
 * A code these tables do not know stays its code.
 */
import { m, type Value } from "./message";

const STATES: Readonly<Record<string, Value>> = {
  accepted: m`accepted`,
  active: m`active`,
  approved: m`approved`,
  awaiting_family: m`awaiting_family`,
  booked: m`booked`,
  called: m`called`,
  cancelled: m`cancelled`,
  claimed: m`claimed`,
  closed: m`closed`,
  completed: m`completed`,
  confirmed: m`confirmed`,
  declined: m`declined`,
  delivered: m`delivered`,
  donated: m`donated`,
  done: m`done`,
  draft: m`draft`,
  dropped: m`dropped`,
  failed: m`failed`,
  finished: m`finished`,
  found: m`found`,
  graduated: m`graduated`,
  inactive: m`inactive`,
  invited: m`invited`,
  needs_review: m`needs_review`,
  new: m`new`,
  open: m`open`,
  out_of_service: m`out_of_service`,
  partial: m`partial`,
  paused: m`paused`,
  pending: m`pending`,
  processing: m`processing`,
  published: m`published`,
  queued: m`queued`,
  rejected: m`rejected`,
  running: m`running`,
  scheduled: m`scheduled`,
  sending: m`sending`,
  sent: m`sent`,
  skipped: m`skipped`,
  superseded: m`superseded`,
  viewed: m`viewed`,
  waiting: m`waiting`,
  withdrawn: m`withdrawn`,
};

/** A record's state, as a message's value: its word in the message's language. */
export const stateName = (state: string): Value => (Object.hasOwn(STATES, state) ? STATES[state] : state);

/** The application modules of src/lib/app-modules.ts, by key. */
const MODULES: Readonly<Record<string, Value>> = {
  appointments: m`appointments`,
  documents: m`documents`,
  events: m`events`,
  "exit-permissions": m`exit-permissions`,
  invitations: m`invitations`,
  "lost-articles": m`lost-articles`,
  notifications: m`notifications`,
  tasks: m`tasks`,
  transport: m`transport`,
};

/** An application module, as a message's value: its name in the message's language. */
export const moduleName = (key: string): Value => (Object.hasOwn(MODULES, key) ? MODULES[key] : key);
