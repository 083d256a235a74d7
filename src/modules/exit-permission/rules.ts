/**
 * The rules of an exit permission: PURE functions over one snapshot of what they need (the school's
 * day, the student's schedule, the caller's link to the student, the target route, trusted people
 * and addresses). `./snapshot.ts` reads it in one round trip; `decide` answers every failed rule,
 * never just the first, each `{ code, message, ...facts }` with its message in the language of the
 * answer (src/lib/message.ts).
 *
 * Staff (`exit-permission.manage`) record what a family said by phone: for them `too-late` and
 * `too-far` are warnings, not failures (kept in the answer); every other rule holds for everyone.
 */
import type { ExitPermissionKind } from "../../db/schema/exit-permission";
import type { Level } from "../../lib/levels";
import { Message, m, type Value } from "../../lib/message";
import { addDays, calendarDate, isoWeekday } from "../../lib/zoned-time";
import { changeDeadline } from "../school-schedule/api";

export interface RuleFailure {
  code: RuleCode;
  /** Rendered in the language of the answer (a message in a JSON body is). */
  message: Message;
  [fact: string]: unknown;
}

/** A guardian link as the rules read it. */
export interface Link {
  parentId: number;
  canPickUp: boolean;
  canRequestChanges: boolean;
  restricted: boolean;
  restrictionFrom: string | null;
  restrictionUntil: string | null;
}

/** Whether a restriction holds on `date` (bounds inclusive, either open when null). */
export function restrictedOn(link: Link, date: string): boolean {
  if (!link.restricted) return false;
  if (link.restrictionFrom !== null && date < link.restrictionFrom) return false;
  if (link.restrictionUntil !== null && date > link.restrictionUntil) return false;
  return true;
}

/** Who asks, relative to the student. */
export type Asker =
  /** `exit-permission.manage` (staff), or a job acting for the school. */
  | { as: "staff" }
  /** A guardian of the student (themself, or the parent they are a valid delegate of). */
  | { as: "guardian"; link: Link }
  /** A recorded asker (a fixed permission's) whose guardian link to the student is gone. */
  | { as: "not-guardian"; parentId: number }
  /** A delegate of a guardian, outside the delegation's dates. */
  | { as: "delegate-outside"; validFrom: string; validUntil: string }
  /** A parent collecting another family's child (the child's guardian answers first). */
  | { as: "collector"; parentId: number }
  /** An accepted invitation: the invited child's guardian already agreed. */
  | { as: "invitation" };

export interface RouteFacts {
  id: number;
  name: string;
  direction: "home" | "to_school";
  weekdays: number;
  levels: readonly Level[];
  vehicleActive: boolean;
  /** The school cancelled the route that day. */
  cancelled?: boolean;
  seats: number;
  available: number;
  /** Whether the student already rides this route that day (a stop change, not a seat). */
  rides: boolean;
}

/** Everything the rules read for one ask. */
export interface Snapshot {
  now: Date;
  timeZone: string;
  /** The school's local date at `now`. */
  today: string;
  holiday: boolean;
  level: Level | null;
  /** The student asked for, when the snapshot knows it: not active (inactive, graduated) is refused. */
  student?: { id: number; active: boolean };
  /** The level's schedule on the date's weekday (school-local `HH:mm`), or null. */
  schedule: { entry: string; dismissal: string } | null;
  permissionTimeLimit: number;
  permissionWeeksInAdvance: number;
  asker: Asker;
  /** Route changes: the target route (by id, or the stop's, or the trusted address's stop's). */
  route?: RouteFacts;
  /** Route changes: the named stop and whether it is on the route. */
  stop?: { id: number; onRoute: boolean };
  trustedAddress?: { id: number; approved: boolean; ofStudent: boolean };
  /**
   * Auto pickup by a parent: their link to the student (none: not a guardian), whether an accepted
   * invitation names them, whether they are the asker.
   */
  pickup?: { parentId: number; link?: Link; invited: boolean; self: boolean };
  trustedPerson?: { id: number; approved: boolean; ofStudent: boolean };
}

export interface RuleAsk {
  date: string;
  kind: ExitPermissionKind;
}

export interface Verdict {
  failures: RuleFailure[];
  /** Rules staff may pass (late, far ahead): kept so the office sees what it recorded. */
  warnings: RuleFailure[];
  deadline: string | null;
  dismissal: string | null;
  latest: string | null;
}

type Facts = Record<string, unknown>;
type Text = (facts: Facts) => Message;

/** A fact as a message's value: data stays data (dates, names, ids); a message stays a message. */
const v = (fact: unknown): Value =>
  fact instanceof Message || fact === null || fact === undefined ? fact : String(fact);

/** A fact as an answer shows it: a message written in the current language. */
const shownFact = (fact: unknown) => (fact instanceof Message ? fact.render() : fact);

/** Why a date is not a school day (`reason` of `not-school-day`). */
const NOT_SCHOOL_DAY: Record<string, Message> = {
  holiday: m`a holiday`,
  weekend: m`a weekend`,
  "no-schedule": m`no schedule for the student's level`,
};

/** Who may pass a rule that fails: staff (it is then a warning they see), or nobody. */
export type Override = "staff" | "never";

/** Everything about one rule, declared once. */
export interface Rule {
  /** The request field it is about: a problem's `errors[].path`. */
  field: "date" | "studentId" | "routeId" | "stopId" | "trustedAddressId" | "pickupParentId" | "trustedPersonId";
  /**
   * Whether only the day can tell (its date, its seats): a fixed permission is checked against the
   * others once, on its first date, when it is made; every rule is checked again on each day made.
   */
  perDay: boolean;
  /** Who may pass it: `staff` (a warning for them: the office records a phone call), or `never`. */
  override: Override;
  /**
   * Whether a later change of a fact can make it fail for a permission already asked (a guardian
   * restricted, a trusted person withdrawn, a holiday added): the rules about WHEN one asks (the
   * deadline, the weeks ahead) are not made again.
   */
  rechecked: boolean;
  /** Its message, in English, from the failure's facts; the catalogue has its Spanish. */
  message: Text;
}

/**
 * THE rule table: every rule of an exit permission, its code (the key: stable across versions and
 * languages), its field, whether it is per day, who may override it, whether a change of a fact
 * decides it again, and its message. `RuleCode` is its keys.
 */
export const RULES = {
  "invalid-date": {
    field: "date",
    perDay: true,
    override: "never",
    rechecked: false,
    message: (f) => m`${v(f.date)} is not a calendar date`,
  },
  "past-date": {
    field: "date",
    perDay: true,
    override: "never",
    rechecked: false,
    message: (f) => m`${v(f.date)} has passed (the school's today is ${v(f.today)})`,
  },
  "too-far": {
    field: "date",
    perDay: true,
    override: "staff",
    rechecked: false,
    message: (f) => m`${v(f.date)} is too far ahead: changes may be asked up to ${v(f.latest)}`,
  },
  "not-school-day": {
    field: "date",
    perDay: true,
    override: "never",
    rechecked: true,
    message: (f) => m`${v(f.date)} is not a school day (${NOT_SCHOOL_DAY[String(f.reason)] ?? v(f.reason)})`,
  },
  "too-late": {
    field: "date",
    perDay: true,
    override: "staff",
    rechecked: false,
    message: (f) =>
      f.deadline === undefined
        ? m`Too late: changes for ${v(f.date)} are closed`
        : m`Too late: changes for ${v(f.date)} had to arrive by ${v(f.deadline)} (dismissal ${v(f.dismissal)})`,
  },
  "route-not-running": {
    field: "routeId",
    perDay: true,
    override: "never",
    rechecked: true,
    message: (f) => m`Route ${v(f.route)} does not run on ${v(f.date)}`,
  },
  "route-cancelled": {
    field: "routeId",
    perDay: true,
    override: "never",
    rechecked: true,
    message: (f) => m`Route ${v(f.route)} is cancelled on ${v(f.date)}`,
  },
  "route-not-home": {
    field: "routeId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Route ${v(f.route)} goes to school, not home`,
  },
  "route-not-for-level": {
    field: "routeId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) =>
      f.level === null || f.level === undefined
        ? m`Route ${v(f.route)} serves ${v(f.levels)}; the student is of no level`
        : m`Route ${v(f.route)} serves ${v(f.levels)}; the student is ${v(f.level)}`,
  },
  "vehicle-out-of-service": {
    field: "routeId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`The vehicle of route ${v(f.route)} is out of service`,
  },
  "stop-not-on-route": {
    field: "stopId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Stop ${v(f.stopId)} is not a stop of route ${v(f.route)}`,
  },
  "no-seat": {
    field: "routeId",
    perDay: true,
    override: "never",
    rechecked: true,
    message: (f) => m`No seat left on route ${v(f.route)} on ${v(f.date)} (${v(f.seats)} seats)`,
  },
  "trusted-address-not-approved": {
    field: "trustedAddressId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Trusted address ${v(f.trustedAddressId)} is not an approved address of this student`,
  },
  "pickup-not-allowed": {
    field: "pickupParentId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Parent ${v(f.pickupParentId)} may not pick the student up on ${v(f.date)}: ${v(f.reason)}`,
  },
  "trusted-person-not-approved": {
    field: "trustedPersonId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Trusted person ${v(f.trustedPersonId)} is not an approved trusted person of this student`,
  },
  "may-not-ask": {
    field: "studentId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`You may not ask changes for this student: ${v(f.reason)}`,
  },
  "student-not-active": {
    field: "studentId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Student ${v(f.studentId)} is not an active student of the school`,
  },
  "student-removed": {
    field: "studentId",
    perDay: false,
    override: "never",
    rechecked: true,
    message: (f) => m`Student ${v(f.studentId)} is no longer a student of the school`,
  },
} as const satisfies Record<string, Rule>;

/** A rule's code: a key of the rule table. */
export type RuleCode = keyof typeof RULES;

/** Whether `code` names a rule (a stored failure's code read back). */
export const isRuleCode = (code: string): code is RuleCode => Object.hasOwn(RULES, code);

/** A failure with its message (written in the language of the answer). */
export function failure(code: RuleCode, facts: Facts = {}): RuleFailure {
  return { code, message: RULES[code].message(facts), ...facts };
}

/** Where a failure goes for this asker: a warning when staff may pass the rule, else a failure. */
function refuse(out: Verdict, staff: boolean, f: RuleFailure) {
  (staff && RULES[f.code].override === "staff" ? out.warnings : out.failures).push(f);
}

/** A failure as an answer's schema shows it: its message (and its reason) written in the current language. */
export function shown(f: RuleFailure) {
  const { message, reason, ...facts } = f;
  return {
    ...facts,
    message: message.render(),
    ...(reason === undefined ? {} : { reason: String(shownFact(reason)) }),
  };
}

/** Not a guardian of the student: `pickUpRefusal`'s answer an accepted invitation overrides. */
export const NOT_A_GUARDIAN = m`not a guardian`;

/** Why a guardian may not pick up on `date`, or null. */
export function pickUpRefusal(link: Link | undefined, date: string): Message | null {
  if (!link) return NOT_A_GUARDIAN;
  if (restrictedOn(link, date))
    return link.restrictionUntil ? m`restricted until ${link.restrictionUntil}` : m`restricted`;
  return link.canPickUp ? null : m`may not pick up`;
}

/** The date rules: a real date, not past, not too far, a school day, in time. */
function dateRules(ask: RuleAsk, s: Snapshot, out: Verdict): boolean {
  const staff = s.asker.as === "staff";
  const { date } = ask;
  if (!calendarDate(date)) {
    out.failures.push(failure("invalid-date", { date }));
    return false;
  }
  if (date < s.today) out.failures.push(failure("past-date", { date, today: s.today }));
  const latest = addDays(s.today, s.permissionWeeksInAdvance * 7);
  out.latest = latest;
  if (date > latest) refuse(out, staff, failure("too-far", { date, latest }));
  const weekday = isoWeekday(date);
  if (s.holiday) out.failures.push(failure("not-school-day", { date, reason: "holiday" }));
  else if (!s.schedule) {
    const reason = weekday >= 6 ? "weekend" : "no-schedule";
    // A collector of another family's child learns nothing of the child, its level neither.
    const level = s.asker.as === "collector" ? {} : { level: s.level };
    out.failures.push(failure("not-school-day", { date, reason, ...level }));
  }
  if (s.schedule) {
    const deadline = changeDeadline(date, s.schedule.dismissal, s.timeZone, s.permissionTimeLimit);
    // A collector of another family's child learns nothing of the child's day: not when it ends.
    const day = s.asker.as === "collector" ? {} : { deadline, dismissal: s.schedule.dismissal };
    out.deadline = day.deadline ?? null;
    out.dismissal = day.dismissal ?? null;
    if (date >= s.today && s.now.getTime() > Date.parse(deadline)) {
      refuse(out, staff, failure("too-late", { date, ...day }));
    }
  }
  return true;
}

/** Who asks: a guardian must be allowed to request changes and not restricted that day. */
function askerRules(ask: RuleAsk, s: Snapshot, out: Verdict) {
  const a = s.asker;
  if (a.as === "delegate-outside") {
    out.failures.push(
      failure("may-not-ask", {
        reason: m`your delegation runs from ${a.validFrom} to ${a.validUntil}`,
        validFrom: a.validFrom,
        validUntil: a.validUntil,
      }),
    );
  } else if (a.as === "not-guardian") {
    out.failures.push(failure("may-not-ask", { reason: m`no longer a guardian of this student` }));
  } else if (a.as === "guardian") {
    if (restrictedOn(a.link, ask.date))
      out.failures.push(failure("may-not-ask", { reason: m`restricted by the school` }));
    else if (!a.link.canRequestChanges)
      out.failures.push(failure("may-not-ask", { reason: m`this guardian may not request changes` }));
  }
}

function routeRules(ask: RuleAsk, s: Snapshot, out: Verdict) {
  if (s.trustedAddress && !(s.trustedAddress.approved && s.trustedAddress.ofStudent)) {
    out.failures.push(failure("trusted-address-not-approved", { trustedAddressId: s.trustedAddress.id }));
  }
  const r = s.route;
  if (!r) return;
  const facts = { route: r.name, routeId: r.id, date: ask.date };
  if (calendarDate(ask.date) && (r.weekdays & (1 << (isoWeekday(ask.date) - 1))) === 0)
    out.failures.push(failure("route-not-running", facts));
  else if (r.cancelled) out.failures.push(failure("route-cancelled", facts));
  if (r.direction !== "home") out.failures.push(failure("route-not-home", facts));
  if (r.levels.length > 0 && (s.level === null || !r.levels.includes(s.level)))
    out.failures.push(failure("route-not-for-level", { ...facts, levels: r.levels.join(", "), level: s.level }));
  if (!r.vehicleActive) out.failures.push(failure("vehicle-out-of-service", facts));
  if (s.stop && !s.stop.onRoute) out.failures.push(failure("stop-not-on-route", { ...facts, stopId: s.stop.id }));
  if (!r.rides && r.available <= 0)
    out.failures.push(failure("no-seat", { ...facts, seats: r.seats, available: r.available }));
}

function pickupRules(ask: RuleAsk, s: Snapshot, out: Verdict) {
  const p = s.pickup;
  // An invited collector (their family accepted) is no guardian: that alone does not refuse them;
  // a guardian's own link (may not pick up, restricted) always counts.
  if (p && !(p.self && s.asker.as === "collector")) {
    const refused = pickUpRefusal(p.link, ask.date);
    const reason = refused === NOT_A_GUARDIAN && p.invited ? null : refused;
    if (reason)
      out.failures.push(failure("pickup-not-allowed", { date: ask.date, reason, pickupParentId: p.parentId }));
  }
  if (s.trustedPerson && !(s.trustedPerson.approved && s.trustedPerson.ofStudent)) {
    out.failures.push(failure("trusted-person-not-approved", { trustedPersonId: s.trustedPerson.id }));
  }
}

/** Every rule over one ask: the failures (none: it may be written), warnings, and the day's deadline. */
export function decide(ask: RuleAsk, s: Snapshot): Verdict {
  const out: Verdict = { failures: [], warnings: [], deadline: null, dismissal: null, latest: null };
  const real = dateRules(ask, s, out);
  if (s.student && !s.student.active) out.failures.push(failure("student-not-active", { studentId: s.student.id }));
  askerRules(ask, s, out);
  if (real && ask.kind === "route_change") routeRules(ask, s, out);
  if (ask.kind === "auto_pickup") pickupRules(ask, s, out);
  return out;
}
