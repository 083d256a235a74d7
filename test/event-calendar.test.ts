/**
 * Calendar feeds: a family's (its parents, or staff for them) and the school's (staff); subscribed
 * without a bearer header through a secret link that rotating and deleting revoke; read back with an
 * independent RFC 5545 parser (ical.js): CRLF lines folded at 75 octets, TEXT escaped, events in the
 * school's zone (TZID and its VTIMEZONE, converted to the right instants across daylight-saving
 * changes), stable UIDs, cancelled events marked so, holidays as all-day events; what each feed
 * shows (the family's children's levels and groups, the school's whole-school events).
 */
import { and, eq } from "drizzle-orm";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { schoolModules } from "../src/db/schema/application-module";
import { APP_MODULES } from "../src/lib/app-modules";
import { calendarText, fold } from "../src/lib/ical";
import { grantsOf } from "../src/modules";
import { createVia, uniq } from "./fixture-kit";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const CAL = "/api/v1/event-calendar";
type Feed = { id: number; kind: string; familyId: number | null; path: string; url: string; webcal: string };

const as = (t: TestApp, userId: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [NORTH]: grantsOf(role).map((p) => p.name) });
const admin = (t: TestApp) => as(t, DEMO.northAdmin.id, "school-admin");
const parent = (t: TestApp) => as(t, DEMO.northParent.id, "parent");

async function feed(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request(CAL, { method: "POST", token, body });
}

async function event(t: TestApp, body: Record<string, unknown>) {
  const res = await t.request("/api/v1/event", {
    method: "POST",
    token: await admin(t),
    body: { start: "2026-12-05T10:00", end: "2026-12-05T13:00", notify: false, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number; title: string };
}

/** The demo family's feed made anew (an earlier test of this file may have made one) in `language`. */
async function familyFeed(t: TestApp, language: "es" | "en"): Promise<Feed> {
  const token = await parent(t);
  const mine = (await (await t.request(CAL, { token })).json()) as { data: Feed[] };
  for (const f of mine.data) expect((await t.request(`${CAL}/${f.id}`, { method: "DELETE", token })).status).toBe(204);
  const res = await feed(t, token, { kind: "family", language });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Feed;
}

/** The feed's text, checked line by line as RFC 5545 asks, and its parsed events. */
async function fetchFeed(t: TestApp, path: string) {
  const res = await t.request(path);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
  const text = await res.text();
  expect(text.endsWith("\r\n")).toBe(true);
  const lines = text.slice(0, -2).split("\r\n");
  for (const line of lines) {
    expect(line.includes("\n") || line.includes("\r"), "a bare line break").toBe(false);
    expect(new TextEncoder().encode(line).length, line).toBeLessThanOrEqual(75);
  }
  const calendar = new ICAL.Component(ICAL.parse(text));
  for (const zone of calendar.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(zone);
  const events = calendar.getAllSubcomponents("vevent").map((v) => new ICAL.Event(v));
  return { text, calendar, events };
}

describe("making a feed", () => {
  it("a parent makes their family's (one per family), not the school's nor another family's", async () => {
    const t = makeTestApp();
    const res = await feed(t, await parent(t), { kind: "family" });
    expect(res.status, await res.clone().text()).toBe(201);
    const made = (await res.json()) as Feed;
    expect(made).toMatchObject({ kind: "family", familyId: 1 });
    expect(made.url).toBe(`http://localhost${made.path}`);
    expect(made.webcal).toBe(`webcal://localhost${made.path}`);
    // The token is the one query parameter: nothing in it needs escaping, so the URL pastes as it is.
    expect(made.path).toMatch(/^\/api\/v1\/event-calendar\/feed\?token=\d+\.[A-Za-z0-9_-]{43}$/);
    expect((await feed(t, await parent(t), { kind: "family" })).status).toBe(409);
    expect((await feed(t, await parent(t), { kind: "school" })).status).toBe(403);
    const other = await createVia(t, "/api/v1/family", NORTH, { familyNumber: uniq("F"), name: "Other" });
    expect((await feed(t, await parent(t), { kind: "family", familyId: other })).status).toBe(404);
    // A teacher belongs to no family.
    const teacher = await feed(t, await as(t, DEMO.northTeacher.id, "teacher"), { kind: "family" });
    expect(teacher.status).toBe(422);
    // Staff make any family's, and the school's; a parent lists their family's only.
    expect((await feed(t, await admin(t), { kind: "family", familyId: other })).status).toBe(201);
    expect((await feed(t, await admin(t), { kind: "school" })).status).toBe(201);
    const listed = await t.request(`${CAL}?pageSize=100`, { token: await parent(t) });
    expect(((await listed.json()) as { data: Feed[] }).data.map((f) => f.id)).toEqual([made.id]);
    const got = await t.request(`${CAL}/${made.id}`, { token: await parent(t) });
    expect(((await got.json()) as Feed).url).toBe(made.url);
  });
});

describe("the feed", () => {
  it("is the family's events and the holidays, in the school's zone, read back by an RFC 5545 parser", async () => {
    const t = makeTestApp();
    const title = 'Festival, invierno; "niños" \\ más';
    const school = await event(t, {
      title,
      forSchool: true,
      description: "Traigan abrigo.\nHabrá chocolate, pan y música",
      place: "Patio norte, cancha 2",
    });
    const pablo = await event(t, {
      title: uniq("Primaria 3°A"),
      groupIds: [2008],
      start: "2027-03-20T09:00",
      end: "2027-03-20T10:30",
    });
    const paloma = await event(t, { title: uniq("Preescolar"), levels: ["preschool"] });
    const high = await event(t, { title: uniq("Bachillerato"), levels: ["high"] });
    const other = await event(t, { title: uniq("Otro grupo"), groupIds: [2010] });
    const long = await event(t, {
      title: `${"Excursión al Museo de Antropología e Historia ".repeat(3)}ñ`,
      forSchool: true,
    });
    const cancelled = await event(t, { title: uniq("Kermés"), forSchool: true });
    await t.request(`/api/v1/event/${cancelled.id}/delete`, {
      method: "POST",
      token: await admin(t),
      body: { reason: "Lluvia" },
    });
    const holiday = await createVia(t, "/api/v1/school-holiday-cycle", NORTH, {
      startHolidays: "2026-12-19T00:00:00-06:00",
      endHolidays: "2027-01-07T00:00:00-06:00",
      schoolConfigurationId: 1,
    });
    const made = await familyFeed(t, "es");
    const { text, calendar, events } = await fetchFeed(t, made.path);

    expect(calendar.getFirstPropertyValue("version")).toBe("2.0");
    expect(calendar.getFirstPropertyValue("method")).toBe("PUBLISH");
    expect(calendar.getFirstSubcomponent("vtimezone")?.getFirstPropertyValue("tzid")).toBe("America/Mexico_City");
    const byUid = new Map(events.map((e) => [e.uid, e]));
    const uid = (id: number) => `event-${id}.school-1@school-api`;
    for (const id of [school.id, pablo.id, paloma.id, long.id, cancelled.id])
      expect(byUid.has(uid(id)), `${id}`).toBe(true);
    for (const id of [high.id, other.id]) expect(byUid.has(uid(id)), `${id}`).toBe(false);

    const festival = byUid.get(uid(school.id));
    expect(festival?.summary).toBe(title);
    expect(festival?.description).toBe("Traigan abrigo.\nHabrá chocolate, pan y música");
    expect(festival?.location).toBe("Patio norte, cancha 2");
    expect(festival?.startDate.zone?.tzid).toBe("America/Mexico_City");
    expect(festival?.startDate.toJSDate().toISOString()).toBe("2026-12-05T16:00:00.000Z");
    expect(festival?.endDate.toJSDate().toISOString()).toBe("2026-12-05T19:00:00.000Z");
    expect(text).toContain("DTSTART;TZID=America/Mexico_City:20261205T100000");
    expect(byUid.get(uid(pablo.id))?.startDate.toJSDate().toISOString()).toBe("2027-03-20T15:00:00.000Z");
    expect(byUid.get(uid(long.id))?.summary).toBe(`${"Excursión al Museo de Antropología e Historia ".repeat(3)}ñ`);

    const off = byUid.get(uid(cancelled.id));
    expect(off?.component.getFirstPropertyValue("status")).toBe("CANCELLED");
    expect(off?.sequence).toBe(1);
    expect(off?.summary).toMatch(/^Cancelado: /);

    const holidays = byUid.get(`holiday-${holiday}.school-1@school-api`);
    expect(holidays?.summary).toBe("Sin clases (vacaciones)");
    expect(holidays?.startDate.isDate).toBe(true);
    expect(holidays?.startDate.toString()).toBe("2026-12-19");
    // The end is exclusive: the last day off is 6 January.
    expect(holidays?.endDate.toString()).toBe("2027-01-07");

    // The same UIDs on the next fetch.
    const again = await fetchFeed(t, made.path);
    expect(again.events.map((e) => e.uid).sort()).toEqual(events.map((e) => e.uid).sort());
  });

  it("answers the link as a calendar app fetches it: webcal as http, a parameter of the app's own added, HEAD", async () => {
    const t = makeTestApp();
    const made = await familyFeed(t, "en");
    // A phone turns webcal:// into http(s):// and asks for the rest of the URL as it is.
    const subscribed = new URL(made.webcal.replace(/^webcal:/, "http:"));
    expect(`${subscribed.pathname}${subscribed.search}`).toBe(made.path);
    expect(subscribed.searchParams.get("token")).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    await fetchFeed(t, `${subscribed.pathname}${subscribed.search}`);
    // Some apps add a cache-buster: a public route's query is lenient.
    await fetchFeed(t, `${made.path}&_=1767225600000`);
    // Some ask with HEAD before they subscribe.
    const head = await t.request(made.path, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
    // Without its token the link is a 400 naming it, not a feed.
    const bare = await t.request(`${CAL}/feed`);
    expect(bare.status).toBe(400);
    expect((await problem(bare)).errors?.[0]?.path).toBe("token");
  });

  it("the school's feed shows the whole school's events only", async () => {
    const t = makeTestApp();
    const whole = await event(t, { title: uniq("Todos"), forSchool: true });
    const level = await event(t, { title: uniq("Primaria"), levels: ["elementary"] });
    const token = await admin(t);
    const schools = (await (await t.request(`${CAL}?pageSize=100`, { token })).json()) as { data: Feed[] };
    for (const f of schools.data.filter((x) => x.kind === "school")) {
      await t.request(`${CAL}/${f.id}`, { method: "DELETE", token });
    }
    const res = await feed(t, token, { kind: "school", language: "en" });
    expect(res.status).toBe(201);
    const made = (await res.json()) as Feed;
    const { events, calendar } = await fetchFeed(t, made.path);
    const uids = events.map((e) => e.uid);
    expect(uids).toContain(`event-${whole.id}.school-1@school-api`);
    expect(uids).not.toContain(`event-${level.id}.school-1@school-api`);
    expect(calendar.getFirstPropertyValue("x-wr-calname")).toBe("Northside Demo School");
  });

  it("rotating and deleting revoke the link; a disabled module, unknown links and too many guesses are refused", async () => {
    const t = makeTestApp();
    const made = await familyFeed(t, "en");
    expect((await t.request(made.path)).status).toBe(200);
    const rotated = await t.request(`${CAL}/${made.id}/rotate`, { method: "PATCH", token: await parent(t) });
    expect(rotated.status).toBe(200);
    const fresh = (await rotated.json()) as Feed;
    expect(fresh.path).not.toBe(made.path);
    expect((await t.request(made.path)).status).toBe(404);
    expect((await t.request(fresh.path)).status).toBe(200);
    // A forged mac on a real id is refused too.
    const forged = fresh.path.replace(/\.[A-Za-z0-9_-]{43}$/, `.${"A".repeat(43)}`);
    expect((await t.request(forged)).status).toBe(404);

    const superAdmin = await t.token(1, {}, true);
    const set = async (enabled: boolean) => {
      const res = await t.request("/api/v1/application-module/school/events/enabled", {
        method: "PUT",
        token: superAdmin,
        school: NORTH,
        body: { enabled },
      });
      expect(res.status).toBe(204);
    };
    await set(false);
    try {
      expect((await t.request(fresh.path)).status).toBe(404);
    } finally {
      await set(true);
    }
    expect((await t.request(`${CAL}/${made.id}`, { method: "DELETE", token: await parent(t) })).status).toBe(204);
    expect((await t.request(fresh.path)).status).toBe(404);

    const headers = { "cf-connecting-ip": "198.51.100.9" };
    let status = 0;
    for (let i = 0; i < 31; i++)
      status = (await t.request(`${CAL}/feed?token=${i + 1}.${"B".repeat(43)}`, { headers })).status;
    expect(status).toBe(429);
    const limited = await t.request(`${CAL}/feed?token=1.${"B".repeat(43)}`, { headers });
    expect((await problem(limited)).status).toBe(429);
  });

  it("a school that never stored the events module's state has it on: the feed and the event's page answer", async () => {
    const t = makeTestApp();
    const made = await familyFeed(t, "en");
    const e = await event(t, { title: uniq("Open day"), forSchool: true });
    const read = await t.request(`/api/v1/event/${e.id}`, { token: await admin(t) });
    const { slug } = (await read.json()) as { slug: string };
    const eventsModule = and(eq(schoolModules.schoolId, NORTH), eq(schoolModules.moduleId, APP_MODULES.events.id));
    const [kept] = await t.db.select().from(schoolModules).where(eventsModule);
    await t.db.delete(schoolModules).where(eventsModule);
    try {
      expect((await t.request(made.path)).status).toBe(200);
      expect((await t.request(`/api/v1/event/public?slug=${slug}`)).status).toBe(200);
    } finally {
      if (kept) await t.db.insert(schoolModules).values(kept).onConflictDoNothing();
    }
  });
});

describe("src/lib/ical.ts", () => {
  it("writes a zone with daylight saving that the parser converts to the right instants, summer and winter", () => {
    const text = calendarText({
      prodId: "-//Test//EN",
      timeZone: "America/New_York",
      stamp: new Date("2026-11-23T15:00:00.000Z"),
      events: [
        {
          uid: "w@x",
          start: new Date("2026-12-10T20:00:00.000Z"),
          end: new Date("2026-12-10T21:00:00.000Z"),
          summary: "Winter",
        },
        {
          uid: "s@x",
          start: new Date("2027-07-10T19:00:00.000Z"),
          end: new Date("2027-07-10T20:00:00.000Z"),
          summary: "Summer",
        },
      ],
    });
    expect(text).toContain("DTSTART;TZID=America/New_York:20261210T150000");
    expect(text).toContain("DTSTART;TZID=America/New_York:20270710T150000");
    const calendar = new ICAL.Component(ICAL.parse(text));
    const zone = calendar.getFirstSubcomponent("vtimezone");
    expect(zone?.getAllSubcomponents("daylight").length).toBeGreaterThan(0);
    const instants = calendar.getAllSubcomponents("vevent").map((v) => {
      const start = v.getFirstPropertyValue("dtstart") as ICAL.Time;
      return start.convertToZone(ICAL.Timezone.utcTimezone).toString();
    });
    expect(instants).toEqual(["2026-12-10T20:00:00Z", "2027-07-10T19:00:00Z"]);
  });

  it("folds at 75 octets without splitting a character, and an empty calendar still names its zone", () => {
    const line = `SUMMARY:${"ñandú ".repeat(40)}`;
    const folded = fold(line);
    for (const part of folded.split("\r\n")) expect(new TextEncoder().encode(part).length).toBeLessThanOrEqual(75);
    expect(folded.split("\r\n ").join("")).toBe(line);
    const empty = calendarText({ prodId: "-//Test//EN", timeZone: "UTC", stamp: new Date(), events: [] });
    expect(new ICAL.Component(ICAL.parse(empty)).getFirstSubcomponent("vtimezone")).not.toBeNull();
  });
});
