/**
 * Name search ignores case and accents of every Latin letter, both ways: "joao conceicao" finds
 * "JOÃO CONCEIÇÃO", "zoe muller" finds "Zoë Müller", "loic" finds "Loïc", and "Müller" finds
 * "muller". Walked over every list (and export) of the OpenAPI document with a `name` filter: a
 * new list with a name filter needs a maker below, or this suite fails.
 */
import { describe, expect, it } from "vitest";
import { readXlsx } from "../src/lib/xlsx";
import { fixturePhone } from "./fixture-kit";
import { makeTestApp } from "./helpers";

const t = makeTestApp();
const SCHOOL = 1;
const superAdmin = () => t.token(1, {}, true);

let n = 0;
/** A tag of ASCII letters (its fold is itself) that makes each search match one record. */
const tag = () =>
  `qz${(++n).toString(36)}${Math.random()
    .toString(36)
    .replace(/[^a-z]/g, "")
    .slice(0, 6)}`;

async function post(path: string, body: Record<string, unknown>): Promise<number> {
  const res = await t.request(path, { method: "POST", token: await superAdmin(), school: SCHOOL, body });
  expect(res.status, `POST ${path}: ${await res.clone().text()}`).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

/** Makes a record named `first last` that the list shows; answers the id its rows carry. */
type Maker = (first: string, last: string) => Promise<number>;
const person =
  (path: string, extra: Record<string, unknown> = {}): Maker =>
  (firstName, lastName) =>
    post(path, { phone: fixturePhone(), firstName, lastName, ...extra });
const named =
  (path: string, extra: () => Record<string, unknown>): Maker =>
  (first, last) =>
    post(path, { name: `${first} ${last}`, ...extra() });

const MAKERS: Record<string, Maker> = {
  "/api/v1/user": person("/api/v1/user", { roleIds: [5] }),
  "/api/v1/user/by-role": person("/api/v1/user", { roleIds: [5] }),
  "/api/v1/school-administrator": person("/api/v1/school-administrator"),
  "/api/v1/teacher": person("/api/v1/teacher"),
  "/api/v1/administrative-user": person("/api/v1/administrative-user"),
  "/api/v1/parent": person("/api/v1/parent", { relationship: "mother" }),
  "/api/v1/delegate": person("/api/v1/delegate", { parentId: 1, validFrom: "2026-11-01", validUntil: "2026-12-31" }),
  "/api/v1/student": (firstName, lastName) => post("/api/v1/student", { firstName, lastName }),
  "/api/v1/family": named("/api/v1/family", () => ({ familyNumber: tag() })),
  "/api/v1/group": named("/api/v1/group", () => ({ level: "elementary", schoolYear: "2026-2027" })),
  "/api/v1/role": named("/api/v1/role", () => ({ permissions: [] })),
  "/api/v1/school": named("/api/v1/school", () => ({ timeZone: "UTC", levels: ["elementary"] })),
  "/api/v1/documents": named("/api/v1/documents", () => ({ slug: `${SCHOOL}/documents/${tag()}.pdf` })),
  "/api/v1/application-module": named("/api/v1/application-module", () => ({ key: tag() })),
  "/api/v1/transport": named("/api/v1/transport", () => ({ seats: 40 })),
  "/api/v1/route": async (first, last) =>
    post("/api/v1/route", {
      name: `${first} ${last}`,
      transportId: await post("/api/v1/transport", { name: tag(), seats: 40 }),
      direction: "home",
      weekdays: [1],
      stops: [{ name: "School gate", time: "15:00" }],
    }),
  // A rider is found by their student's name.
  "/api/v1/route-student": async (firstName, lastName) => {
    const transportId = await post("/api/v1/transport", { name: tag(), seats: 40 });
    const routeId = await post("/api/v1/route", {
      name: tag(),
      transportId,
      direction: "home",
      weekdays: [1],
      stops: [{ name: "School gate", time: "15:00" }],
    });
    const route = (await (
      await t.request(`/api/v1/route/${routeId}`, { token: await superAdmin(), school: SCHOOL })
    ).json()) as {
      stops: { id: number }[];
    };
    const studentId = await post("/api/v1/student", { firstName, lastName, level: "elementary" });
    return post("/api/v1/route-student", { routeId, studentId, stopId: route.stops[0]?.id, weekdays: [1] });
  },
  "/api/v1/lost-article": (first, last) =>
    post("/api/v1/lost-article", { name: `${first} ${last}`, category: "other" }),
  // Permission names are dotted lower-case ASCII (no copy: only the term is folded); see ASCII_ONLY.
  "/api/v1/permission": (first, last) => post("/api/v1/permission", { name: `${first}.${last}` }),
};

type Operation = { "x-filters"?: Record<string, string> };
const doc = (await (await t.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Operation>>;
};
/** Every GET with a `name` filter: its path, and the list path whose maker makes its records. */
const searched = Object.entries(doc.paths)
  .filter(([, item]) => item.get?.["x-filters"]?.name !== undefined)
  .map(([path]) => ({ path, list: path.replace(/\/export$/, "") }));

/** Accented names and the plain terms that find them, and a plain name found by an accented term. */
const CASES: { first: string; last: (tag: string) => string; term: (tag: string) => string }[] = [
  { first: "JOÃO", last: (t) => `CONCEIÇÃO ${t}`, term: (t) => `joao conceicao ${t}` },
  { first: "Zoë", last: (t) => `Müller ${t}`, term: (t) => `zoe muller ${t}` },
  { first: "Loïc", last: (t) => t, term: (t) => `loic ${t}` },
  { first: "Jonas", last: (t) => `muller ${t}`, term: (t) => `Müller ${t}` },
];

/** Lists whose names are ASCII by their rules: an accented term finds a plain name. */
const ASCII_ONLY: Record<string, typeof CASES> = {
  "/api/v1/permission": [{ first: "jonas", last: (t) => `muller-${t}`, term: (t) => `Müller-${t}` }],
};

/** The ids a list (or its export) gives for `?<key>=term` (`field`: which field of a row names it). */
async function found(path: string, term: string, key = "name", reader?: () => Promise<string>, field = "id") {
  // The people holding a role are looked up by the role (a required query parameter).
  const role = path === "/api/v1/user/by-role" ? "role=parent&" : "";
  const url = `${path}?${role}${key}=${encodeURIComponent(term)}`;
  const res = await t.request(url, { token: await (reader ?? superAdmin)(), school: SCHOOL });
  expect(res.status, `${url}: ${await res.clone().text()}`).toBe(200);
  if (path.endsWith("/export")) {
    return readXlsx(new Uint8Array(await res.arrayBuffer()))
      .slice(1)
      .map((row) => Number(row[0]));
  }
  return ((await res.json()) as { data: Record<string, unknown>[] }).data.map((r) => Number(r[field]));
}

/**
 * The other text searches (a title, a task's text, a city, a position), by list and filter: what
 * makes a record whose searched text is `text`, the id its rows carry, and who reads the list.
 */
const ADMIN = 2;
const asAdmin = () => t.token(ADMIN, { [SCHOOL]: "all" });
const task = (title: string, extra: Record<string, unknown> = {}) =>
  post("/api/v1/pending", { title, userIds: [ADMIN], ...extra });
const position = (text: string) =>
  post("/api/v1/administrative-user", { phone: fixturePhone(), firstName: tag(), lastName: tag(), position: text });
const TEXT_SEARCHES: Record<
  string,
  { make: (text: string) => Promise<number>; reader?: () => Promise<string>; field?: string }
> = {
  "/api/v1/event?title": {
    make: (title) =>
      post("/api/v1/event", {
        title,
        start: "2026-12-10T09:00",
        end: "2026-12-10T10:00",
        forSchool: true,
        notify: false,
      }),
  },
  "/api/v1/pending?text": { make: (title) => task(title) },
  // A person's own copies: the task's id names the copy.
  "/api/v1/pending/mine?text": { make: (title) => task(title), reader: asAdmin, field: "taskId" },
  "/api/v1/session?text": {
    make: async (title) =>
      post("/api/v1/session", { taskId: await task(tag(), { requiresAppointment: true }), title, slotMinutes: 15 }),
  },
  "/api/v1/address?city": { make: (city) => post("/api/v1/address", { street: "Calle 1", city, country: "MX" }) },
  "/api/v1/administrative-user?position": { make: position },
  "/api/v1/administrative-user/export?position": { make: position },
};
const TEXT_KEYS = ["text", "title", "city", "position"];
const textSearched = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.keys(item.get?.["x-filters"] ?? {})
    .filter((key) => TEXT_KEYS.includes(key))
    .map((key) => ({ path, key })),
);

describe("name search folds case and accents, both ways", () => {
  it("walks every list and export with a name filter", () => {
    expect(searched.length).toBeGreaterThan(15);
    expect(searched.filter(({ list }) => !MAKERS[list]).map(({ path }) => path)).toEqual([]);
  });

  for (const { path, list } of searched) {
    it(`GET ${path}?name=`, async () => {
      const make = MAKERS[list] as Maker;
      for (const c of ASCII_ONLY[list] ?? CASES) {
        const k = tag();
        const id = await make(c.first, c.last(k));
        expect(await found(path, c.term(k)), `${c.first} ${c.last(k)} <- ${c.term(k)}`).toEqual([id]);
      }
    });
  }
});

describe("every other text search folds case and accents too", () => {
  it("walks every list with a text, title, city or position filter", () => {
    expect(textSearched.length).toBeGreaterThanOrEqual(7);
    expect(textSearched.filter(({ path, key }) => !TEXT_SEARCHES[`${path}?${key}`])).toEqual([]);
  });

  for (const { path, key } of textSearched) {
    it(`GET ${path}?${key}=`, async () => {
      const search = TEXT_SEARCHES[`${path}?${key}`];
      if (!search) throw new Error(`no maker for ${path}?${key}`);
      for (const c of CASES) {
        const k = tag();
        const id = await search.make(`${c.first} ${c.last(k)}`);
        expect(
          await found(path, c.term(k), key, search.reader, search.field),
          `${c.first} ${c.last(k)} <- ${c.term(k)}`,
        ).toEqual([id]);
      }
    });
  }
});
