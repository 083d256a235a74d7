/**
 * Addresses: CRUD of the current school's addresses, ISO country codes,
 * coordinates as a pair, and the school's own address, which cannot be deleted while the school
 * points at it, even when both requests race.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { addresses } from "../src/db/schema/address";
import { schools } from "../src/db/schema/core";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/address";

type Address = {
  id: number;
  createdAt: string;
  updatedAt: string;
  street: string;
  number: string | null;
  neighborhood: string | null;
  city: string;
  state: string | null;
  postalCode: string | null;
  country: string;
  latitude: number | null;
  longitude: number | null;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");

async function create(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PATH, {
    method: "POST",
    token: token ?? (await northAdmin(t)),
    body: { street: "Calle Morelos", city: "Guadalajara", country: "MX", ...body },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Address;
}

async function expect400(res: Response, field: string) {
  expect(res.status, await res.clone().text()).toBe(400);
  expect((await problem(res)).errors?.map((e) => e.path)).toContain(field);
}

describe("addresses", () => {
  it("creates, reads, lists, updates and deletes an address of the current school", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const created = await create(t, {
      number: "45-B",
      neighborhood: "Centro",
      state: "Jalisco",
      postalCode: "44100",
      latitude: 20.6767,
      longitude: -103.3476,
    });
    expect(created).toMatchObject({
      street: "Calle Morelos",
      number: "45-B",
      neighborhood: "Centro",
      city: "Guadalajara",
      state: "Jalisco",
      postalCode: "44100",
      country: "MX",
      latitude: 20.6767,
      longitude: -103.3476,
      createdAt: t.clock.now().toISOString(),
    });
    expect(await (await t.request(`${PATH}/${created.id}`, { token })).json()).toEqual(created);

    const page = (await (await t.request(`${PATH}?city=guadala`, { token })).json()) as Page<Address>;
    expect(page.data.map((a) => a.id)).toEqual([created.id]);
    const all = (await (await t.request(PATH, { token })).json()) as Page<Address>;
    expect(all.data.map((a) => a.id)).toEqual([1, created.id]); // the seeded school address, then ours

    t.clock.advance(60);
    const update = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token,
      body: { number: null, latitude: null, longitude: null, city: "Zapopan" },
    });
    expect(update.status, await update.clone().text()).toBe(204);
    const after = (await (await t.request(`${PATH}/${created.id}`, { token })).json()) as Address;
    expect(after).toMatchObject({
      number: null,
      latitude: null,
      longitude: null,
      city: "Zapopan",
      street: "Calle Morelos",
    });
    expect(after.updatedAt).toBe(t.clock.now().toISOString());

    expect((await t.request(`${PATH}/${created.id}`, { method: "DELETE", token })).status).toBe(204);
    expect((await t.request(`${PATH}/${created.id}`, { token })).status).toBe(404);
  });

  it("refuses unknown countries, half a position and bad fields with 400", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const post = (body: Record<string, unknown>) =>
      t.request(PATH, { method: "POST", token, body: { street: "A", city: "B", country: "MX", ...body } });
    for (const country of ["mx", "ZZ", "MEX", "", "XK"]) await expect400(await post({ country }), "country");
    await expect400(await post({ latitude: 19.4 }), "longitude");
    await expect400(await post({ longitude: -99.1, latitude: null }), "latitude");
    await expect400(await post({ latitude: 91, longitude: 0 }), "latitude");
    await expect400(await post({ latitude: 0, longitude: -181 }), "longitude");
    await expect400(await post({ street: "" }), "street");
    await expect400(await post({ city: undefined }), "city");
    await expect400(await post({ postalCode: "03940;--" }), "postalCode");
    await expect400(await post({ street: "Main\u202eSt" }), "street");
    await expect400(await post({ schoolId: SOUTH }), "schoolId");
    const created = await create(t, { latitude: 1, longitude: 2 });
    const half = await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body: { latitude: 3 } });
    await expect400(half, "longitude");
    await expect400(await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body: {} }), "");
  });

  it("keeps schools apart: another school's address is a 404 and never listed", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    // Address 2 is the south school's (seeded).
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await t.request(`${PATH}/2`, {
        method,
        token,
        body: method === "PUT" ? { city: "Mine" } : undefined,
      });
      expect(res.status, method).toBe(404);
    }
    const page = (await (await t.request(`${PATH}?pageSize=100`, { token })).json()) as Page<Address>;
    expect(page.data.map((a) => a.id)).not.toContain(2);
    const [south] = await (await t.schoolDb(SOUTH)).select().from(addresses).where(eq(addresses.id, 2));
    expect(south?.city).toBe("Brooklyn");
  });

  it("lets staff read addresses but only a school admin change them", async () => {
    const t = makeTestApp();
    const staff = await as(t, DEMO.northTeacher.id, NORTH, "staff");
    expect((await t.request(PATH, { token: staff })).status).toBe(200);
    const refused = await t.request(PATH, {
      method: "POST",
      token: staff,
      body: { street: "A", city: "B", country: "MX" },
    });
    expect(refused.status).toBe(403);
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    expect((await t.request(PATH, { token: teacher })).status).toBe(403);
  });

  it("refuses to delete the address the school points at (409)", async () => {
    const t = makeTestApp();
    const res = await t.request(`${PATH}/1`, { method: "DELETE", token: await northAdmin(t) });
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toContain("is the school's address");
    expect((await t.db.select().from(addresses).where(eq(addresses.id, 1))).length).toBe(1);
  });

  it("never leaves the school pointing at a deleted address when a delete and a PUT race", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    for (let round = 0; round < 8; round++) {
      const address = await create(t, { street: `Race ${round}` });
      const [set, removed] = await Promise.all([
        t.request(`/api/v1/school/${NORTH}/address`, { method: "PUT", token, body: { addressId: address.id } }),
        t.request(`${PATH}/${address.id}`, { method: "DELETE", token }),
      ]);
      const outcome = [set.status, removed.status].join(" ");
      // Either the school took it first (the delete is refused), or it was gone first (404).
      expect(["204 409", "404 204"]).toContain(outcome);
      const [school] = await t.db.select({ addressId: schools.addressId }).from(schools).where(eq(schools.id, NORTH));
      const pointed = await t.db
        .select()
        .from(addresses)
        .where(eq(addresses.id, school?.addressId ?? 0));
      expect(pointed.length, outcome).toBe(1);
    }
  });
});
