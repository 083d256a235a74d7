/**
 * The rules of an exit permission as pure functions over a snapshot: each rule's code and facts,
 * staff warnings, messages in Spanish and English, the deadline across daylight-saving changes and
 * on an early-release day.
 */
import { describe, expect, it } from "vitest";
import { isoWithOffset } from "../src/lib/zoned-time";
import { decide, type Link, RULES, type Snapshot } from "../src/modules/exit-permission/rules";
import { changeDeadline } from "../src/modules/school-schedule/api";

const link: Link = {
  parentId: 7,
  canPickUp: true,
  canRequestChanges: true,
  restricted: false,
  restrictionFrom: null,
  restrictionUntil: null,
};

/** A Mexico City school on Monday 2026-11-23 at 09:00 local, asking for Wednesday the 25th. */
function snapshot(over: Partial<Snapshot> = {}): Snapshot {
  return {
    now: new Date("2026-11-23T15:00:00.000Z"),
    timeZone: "America/Mexico_City",
    today: "2026-11-23",
    holiday: false,
    level: "elementary",
    schedule: { entry: "08:00", dismissal: "15:00" },
    permissionTimeLimit: 2,
    permissionWeeksInAdvance: 2,
    asker: { as: "guardian", link },
    ...over,
  };
}

const codes = (s: Snapshot, date = "2026-11-25", kind: "absence" | "route_change" | "auto_pickup" = "absence") =>
  decide({ date, kind }, s).failures.map((f) => f.code);

describe("dates", () => {
  it("passes a school day within the limits, and gives the deadline with the school's offset", () => {
    const v = decide({ date: "2026-11-25", kind: "absence" }, snapshot());
    expect(v.failures).toEqual([]);
    expect(v.deadline).toBe("2026-11-25T13:00:00-06:00");
    expect(v.dismissal).toBe("15:00");
    expect(v.latest).toBe("2026-12-07");
  });

  it("refuses an impossible date, a past one, one too far, a weekend, a holiday, a level without schedule", () => {
    expect(codes(snapshot(), "2026-02-30")).toEqual(["invalid-date"]);
    expect(codes(snapshot(), "2026-11-20")).toContain("past-date");
    const far = decide({ date: "2026-12-08", kind: "absence" }, snapshot()).failures[0];
    expect(far).toMatchObject({ code: "too-far", latest: "2026-12-07" });
    const weekend = decide({ date: "2026-11-28", kind: "absence" }, snapshot({ schedule: null })).failures[0];
    expect(weekend).toMatchObject({ code: "not-school-day", reason: "weekend" });
    const holiday = decide({ date: "2026-11-25", kind: "absence" }, snapshot({ holiday: true })).failures[0];
    expect(holiday).toMatchObject({ code: "not-school-day", reason: "holiday" });
    const none = decide({ date: "2026-11-25", kind: "absence" }, snapshot({ schedule: null, level: null }));
    expect(none.failures[0]).toMatchObject({ code: "not-school-day", reason: "no-schedule" });
  });

  it("refuses too late for a family, and only warns staff (also for too far)", () => {
    const late = snapshot({ now: new Date("2026-11-25T19:30:00.000Z"), today: "2026-11-25" });
    const v = decide({ date: "2026-11-25", kind: "absence" }, late);
    expect(v.failures[0]).toMatchObject({
      code: "too-late",
      deadline: "2026-11-25T13:00:00-06:00",
      dismissal: "15:00",
    });
    const staff = decide({ date: "2026-11-25", kind: "absence" }, { ...late, asker: { as: "staff" } });
    expect(staff.failures).toEqual([]);
    expect(staff.warnings.map((w) => w.code)).toEqual(["too-late"]);
    const far = decide({ date: "2026-12-09", kind: "absence" }, snapshot({ asker: { as: "staff" } }));
    expect(far.failures).toEqual([]);
    expect(far.warnings.map((w) => w.code)).toEqual(["too-far"]);
  });

  it("speaks Spanish when asked", () => {
    const [f] = decide({ date: "2026-11-28", kind: "absence" }, snapshot({ schedule: null })).failures;
    expect(f?.message.render("es")).toBe("2026-11-28 no es día de clases (fin de semana)");
    expect(f?.message.render("en")).toBe("2026-11-28 is not a school day (a weekend)");
  });
});

describe("the deadline", () => {
  it("keeps the local hour across New York's daylight-saving changes", () => {
    // Fall back on Sunday 2026-11-01: the days around it close at 13:00 local either side.
    expect(changeDeadline("2026-10-30", "15:00", "America/New_York", 2)).toBe("2026-10-30T13:00:00-04:00");
    expect(changeDeadline("2026-11-01", "15:00", "America/New_York", 2)).toBe("2026-11-01T13:00:00-05:00");
    expect(changeDeadline("2026-11-02", "15:00", "America/New_York", 2)).toBe("2026-11-02T13:00:00-05:00");
    // Spring forward on Sunday 2027-03-14.
    expect(changeDeadline("2027-03-14", "15:00", "America/New_York", 2)).toBe("2027-03-14T13:00:00-04:00");
    expect(changeDeadline("2027-03-15", "15:00", "America/New_York", 2)).toBe("2027-03-15T13:00:00-04:00");
    // A limit that crosses midnight lands on the day before, at its local hour.
    expect(changeDeadline("2027-03-15", "15:00", "America/New_York", 24)).toBe("2027-03-14T15:00:00-04:00");
  });

  it("moves with an early-release day (Friday's 13:00 dismissal closes at 11:00)", () => {
    const friday = snapshot({ schedule: { entry: "08:00", dismissal: "13:00" } });
    const v = decide({ date: "2026-11-27", kind: "absence" }, friday);
    expect(v.deadline).toBe("2026-11-27T11:00:00-06:00");
    const at = (iso: string) => ({ ...friday, now: new Date(iso), today: "2026-11-27" });
    expect(decide({ date: "2026-11-27", kind: "absence" }, at("2026-11-27T16:59:00.000Z")).failures).toEqual([]);
    expect(
      decide({ date: "2026-11-27", kind: "absence" }, at("2026-11-27T17:01:00.000Z")).failures.map((f) => f.code),
    ).toEqual(["too-late"]);
  });

  it("writes instants with the zone's offset", () => {
    expect(isoWithOffset(new Date("2026-07-01T12:00:00Z"), "Asia/Kolkata")).toBe("2026-07-01T17:30:00+05:30");
    expect(isoWithOffset(new Date("2026-07-01T12:00:00Z"), "UTC")).toBe("2026-07-01T12:00:00+00:00");
  });
});

describe("who asks", () => {
  it("refuses a guardian who may not request changes, or is restricted, and a delegate outside their dates", () => {
    const noRights = snapshot({ asker: { as: "guardian", link: { ...link, canRequestChanges: false } } });
    expect(codes(noRights)).toEqual(["may-not-ask"]);
    const restricted = snapshot({
      asker: {
        as: "guardian",
        link: { ...link, restricted: true, restrictionFrom: "2026-11-01", restrictionUntil: null },
      },
    });
    expect(codes(restricted)).toEqual(["may-not-ask"]);
    const outside = snapshot({ asker: { as: "delegate-outside", validFrom: "2026-12-01", validUntil: "2026-12-05" } });
    expect(decide({ date: "2026-11-25", kind: "absence" }, outside).failures[0]).toMatchObject({
      code: "may-not-ask",
      validFrom: "2026-12-01",
    });
  });
});

describe("route changes", () => {
  const route = {
    id: 3,
    name: "Ruta Norte",
    direction: "home" as const,
    weekdays: 0b11111,
    levels: ["elementary" as const],
    vehicleActive: true,
    seats: 10,
    available: 4,
    rides: false,
  };

  it("passes a route that runs, serves the level, has a seat and the stop", () => {
    expect(codes(snapshot({ route, stop: { id: 9, onRoute: true } }), "2026-11-25", "route_change")).toEqual([]);
  });

  it("lists every route failure at once", () => {
    const bad = snapshot({
      level: "high",
      route: { ...route, weekdays: 0b00001, vehicleActive: false, available: 0, direction: "to_school" },
      stop: { id: 9, onRoute: false },
      trustedAddress: { id: 4, approved: false, ofStudent: true },
    });
    const failures = decide({ date: "2026-11-25", kind: "route_change" }, bad).failures;
    expect(failures.map((f) => f.code).sort()).toEqual([
      "no-seat",
      "route-not-for-level",
      "route-not-home",
      "route-not-running",
      "stop-not-on-route",
      "trusted-address-not-approved",
      "vehicle-out-of-service",
    ]);
    expect(failures.find((f) => f.code === "no-seat")).toMatchObject({ seats: 10, available: 0 });
  });

  it("needs no seat for another stop of the student's own route", () => {
    expect(codes(snapshot({ route: { ...route, available: 0, rides: true } }), "2026-11-25", "route_change")).toEqual(
      [],
    );
  });
});

describe("auto pickup", () => {
  it("refuses a guardian who may not pick up or is restricted that day, and a trusted person not approved", () => {
    const mayNot = snapshot({
      pickup: { parentId: 8, link: { ...link, canPickUp: false }, invited: false, self: false },
    });
    // As an answer shows them (JSON writes each message in the current language: English here).
    const shown = (s: Snapshot) => JSON.parse(JSON.stringify(decide({ date: "2026-11-25", kind: "auto_pickup" }, s)));
    expect(shown(mayNot).failures[0]).toMatchObject({
      code: "pickup-not-allowed",
      reason: "may not pick up",
      pickupParentId: 8,
    });
    const restricted = snapshot({
      pickup: {
        parentId: 8,
        link: { ...link, restricted: true, restrictionFrom: null, restrictionUntil: "2026-12-01" },
        invited: false,
        self: false,
      },
    });
    expect(shown(restricted).failures[0]).toMatchObject({
      reason: "restricted until 2026-12-01",
    });
    const notGuardian = snapshot({ pickup: { parentId: 8, invited: false, self: false } });
    expect(codes(notGuardian, "2026-11-25", "auto_pickup")).toEqual(["pickup-not-allowed"]);
    const invited = snapshot({ pickup: { parentId: 8, invited: true, self: false } });
    expect(codes(invited, "2026-11-25", "auto_pickup")).toEqual([]);
    // An invitation does not lift a guardian's own refusal.
    const invitedGuardian = snapshot({
      pickup: { parentId: 8, link: { ...link, canPickUp: false }, invited: true, self: false },
    });
    expect(codes(invitedGuardian, "2026-11-25", "auto_pickup")).toEqual(["pickup-not-allowed"]);
    const person = snapshot({ trustedPerson: { id: 5, approved: false, ofStudent: true } });
    expect(codes(person, "2026-11-25", "auto_pickup")).toEqual(["trusted-person-not-approved"]);
  });
});

describe("the rule table", () => {
  it("declares every rule once: only the deadline and the weeks ahead are the office's to pass", () => {
    const staff = Object.entries(RULES)
      .filter(([, r]) => r.override === "staff")
      .map(([code]) => code);
    expect(staff.sort()).toEqual(["too-far", "too-late"]);
    // The rules of when one asks are not made again after a fact changes; the others are.
    const once = Object.entries(RULES)
      .filter(([, r]) => !r.rechecked)
      .map(([code]) => code);
    expect(once.sort()).toEqual(["invalid-date", "past-date", "too-far", "too-late"]);
    for (const [code, rule] of Object.entries(RULES)) {
      expect(rule.field, code).toMatch(
        /^(date|studentId|routeId|stopId|trustedAddressId|pickupParentId|trustedPersonId)$/,
      );
    }
  });

  it("a recorded asker whose guardian link is gone may not ask (a fixed permission's day)", () => {
    const gone = snapshot({ asker: { as: "not-guardian", parentId: 7 } });
    const [f] = decide({ date: "2026-11-25", kind: "absence" }, gone).failures;
    expect(f).toMatchObject({ code: "may-not-ask" });
    expect(f?.message.render("en")).toBe(
      "You may not ask changes for this student: no longer a guardian of this student",
    );
  });
});
