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

/** The ids a list (or its export) gives for `?name=term`. */
async function found(path: string, term: string): Promise<number[]> {
  // The people holding a role are looked up by the role (a required query parameter).
  const role = path === "/api/v1/user/by-role" ? "role=parent&" : "";
  const url = `${path}?${role}name=${encodeURIComponent(term)}`;
  const res = await t.request(url, { token: await superAdmin(), school: SCHOOL });
  expect(res.status, `${url}: ${await res.clone().text()}`).toBe(200);
  if (path.endsWith("/export")) {
    return readXlsx(new Uint8Array(await res.arrayBuffer()))
      .slice(1)
      .map((row) => Number(row[0]));
  }
  return ((await res.json()) as { data: { id: number }[] }).data.map((r) => r.id);
}

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
