/**
 * Excel downloads of exit permissions: staff with exit-permission.manage get every permission the
 * filters keep, a parent only their children's; the route-change download names the route and stop
 * left and the one taken.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { parents } from "../src/db/schema/parent";
import { guardians } from "../src/db/schema/student";
import { readXlsx } from "../src/lib/xlsx";
import { grantsOf } from "../src/modules";
import { addRiderDays, makePermission } from "./fixtures/afternoon";
import { makeRoute, makeStudents } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const E = "/api/v1/exit-permission";
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
const parentToken = () => t.token(DEMO.northParent.id, { [NORTH]: grantsOf("parent").map((p) => p.name) });

async function sheet(path: string, token: string, school = NORTH) {
  const res = await t.request(path, { token, school });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("content-type")).toContain("spreadsheetml");
  return readXlsx(new Uint8Array(await res.arrayBuffer()));
}

/** A date only this file uses, so the sheets hold this file's rows. */
const DATE = "2027-06-07"; // a Monday

let seeded = 0;
async function seed() {
  seeded++;
  const usual = await makeRoute(t, NORTH, { riders: [["Ximena", "Xolo"]], name: `Ruta Norte ${seeded}` });
  await addRiderDays(t, usual.routeId);
  const other = await makeRoute(t, NORTH, { name: `Ruta Sur ${seeded}` });
  const [mine] = await makeStudents(t, NORTH, [["Yago", "Yañez"]]);
  const ximena = usual.studentIds[0] ?? 0;
  const [parent] = await t.db.select().from(parents).where(eq(parents.userId, DEMO.northParent.id));
  if (!parent || mine === undefined) throw new Error("no demo parent");
  await t.db.insert(guardians).values({ schoolId: NORTH, studentId: mine, parentId: parent.id });
  const change = await makePermission(t, {
    schoolId: NORTH,
    studentId: ximena,
    date: DATE,
    kind: "route_change",
    status: "confirmed",
    routeId: other.routeId,
    stopId: other.stopIds[0] ?? null,
    askedBy: DEMO.northAdmin.id,
    reason: "Visits her cousin",
  });
  const own = await makePermission(t, {
    schoolId: NORTH,
    studentId: mine,
    date: DATE,
    kind: "absence",
    status: "pending",
    askedBy: DEMO.northParent.id,
    parentId: parent.id,
  });
  return { change, own, usual, other };
}

describe("exit permission downloads", () => {
  it("gives staff every permission of the filters, in date order", async () => {
    const { change, own } = await seed();
    const rows = await sheet(`${E}/download?date=${DATE}`, await admin());
    expect(rows[0]?.slice(0, 7)).toEqual(["Id", "Date", "Student id number", "Student", "Level", "Kind", "Status"]);
    const ids = rows.slice(1).map((r) => r[0]);
    expect(ids).toEqual(expect.arrayContaining([change.id, own.id]));
    const changeRow = rows.find((r) => r[0] === change.id);
    expect(changeRow).toEqual(
      expect.arrayContaining([
        DATE,
        "Ximena Xolo",
        "Route change",
        "confirmed",
        "Ruta Sur 1",
        "Plaza Mayor",
        "Visits her cousin",
      ]),
    );
    const confirmed = await sheet(`${E}/download?date=${DATE}&status=confirmed`, await admin());
    expect(confirmed.slice(1).map((r) => r[0])).toEqual([change.id]);
    const absences = await sheet(`${E}/download?from=${DATE}&to=${DATE}&kind=absence`, await admin());
    expect(absences.slice(1).map((r) => r[0])).toEqual([own.id]);
  });

  it("gives a parent only their children's permissions", async () => {
    const { change, own } = await seed();
    const rows = await sheet(`${E}/download?date=${DATE}`, await parentToken());
    const ids = rows.slice(1).map((r) => r[0]);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(change.id);
  });

  it("lists route changes with the route and stop left and the one taken", async () => {
    const { change, own } = await seed();
    const rows = await sheet(`${E}/route-change/download?date=${DATE}`, await admin());
    expect(rows[0]).toEqual(expect.arrayContaining(["From route", "From stop", "To route", "To stop"]));
    const header = rows[0] ?? [];
    const row = rows.find((r) => r[0] === change.id) ?? [];
    const cell = (name: string) => row[header.indexOf(name)];
    expect(cell("From route")).toBe(`Ruta Norte ${seeded}`);
    expect(cell("From stop")).toBe("Plaza Mayor");
    expect(cell("To route")).toBe(`Ruta Sur ${seeded}`);
    expect(cell("To stop")).toBe("Plaza Mayor");
    expect(rows.some((r) => r[0] === own.id)).toBe(false);
  });

  it("refuses a reversed range, unknown values, and callers without read; another school sees none of it", async () => {
    const { change } = await seed();
    for (const q of ["from=2027-06-08&to=2027-06-07", "kind=walk", "status=done", "date=2027-13-01", "page=0"]) {
      const res = await t.request(`${E}/download?${q}`, { token: await admin(), school: NORTH });
      expect(res.status, q).toBe(400);
      expect((await problem(res)).status).toBe(400);
    }
    const none = await t.token(DEMO.northTeacher.id, { [NORTH]: [] });
    expect((await t.request(`${E}/download`, { token: none, school: NORTH })).status).toBe(403);
    const south = await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });
    const res = await t.request(`${E}/download?date=${DATE}`, { token: south, school: SOUTH });
    // Southside may have the module off (403 naming it) or answer its own, empty, file.
    if (res.status === 200) {
      const rows = readXlsx(new Uint8Array(await res.arrayBuffer()));
      expect(rows.slice(1).map((r) => r[0])).not.toContain(change.id);
    } else expect(res.status).toBe(403);
  });
});
