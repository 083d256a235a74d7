/**
 * School set-up: school configurations (school years), their holiday cycles and the one schedule
 * configuration per school. All scoped to the current school:
 * another school's ids are 404s and never listed.
 */
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { scheduleConfigurations } from "../src/db/schema/schedule-configuration";
import type { Page } from "../src/lib/pagination";
import { makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
/** Seeded school configurations (seed/demo.sql). */
const NORTH_CONFIG = 1;
const SOUTH_CONFIG = 2;

const northAdmin = (t: TestApp) => t.token(2, { [NORTH]: "all" });
const southAdmin = (t: TestApp) => t.token(5, { [SOUTH]: "all" });

/** Expects a 400 problem naming `field` among its field errors. */
async function expect400(res: Response, field: string) {
  expect(res.status, `expected 400 for ${field}`).toBe(400);
  const body = await problem(res);
  expect(body.errors?.map((e) => e.path).join(" | ")).toContain(field);
  return body;
}

async function expectStatus(res: Response, status: number) {
  expect(res.status, await res.clone().text()).toBe(status);
  return problem(res);
}

/** Raw requests for malformed bodies (bad JSON, no body, another content type). */
function raw(t: TestApp, path: string, method: string, token: string, body?: string, type = "application/json") {
  return t.request(path, {
    method,
    token,
    school: NORTH,
    headers: body === undefined ? {} : { "content-type": type },
    body,
  });
}

// ---------------------------------------------------------------------------------------------

describe("school configuration", () => {
  const PATH = "/api/v1/school-configuration";
  type Config = {
    id: number;
    createdAt: string;
    updatedAt: string;
    name: string;
    startDate: string;
    endDate: string;
    maxParentsPerFamily: number;
  };
  const t = makeTestApp();
  const valid = { name: "2027-2028", startDate: "2027-08-23", endDate: "2028-06-30" };

  async function create(body: Record<string, unknown> = valid) {
    const res = await t.request(PATH, { method: "POST", token: await northAdmin(t), school: NORTH, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Config;
  }
  const get = async (id: number, token?: string) =>
    t.request(`${PATH}/${id}`, { token: token ?? (await northAdmin(t)), school: NORTH });

  it("creates a school year with the default parents limit, and reads it back", async () => {
    const created = await create({ ...valid, name: "  2027-2028  " });
    expect(created).toEqual({
      id: expect.any(Number),
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      name: "2027-2028",
      startDate: "2027-08-23",
      endDate: "2028-06-30",
      maxParentsPerFamily: 2,
      autoConfirmExitPermissions: false,
      keepBusPositions: true,
    });
    const res = await get(created.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it("lists only the current school's configurations, oldest school year first", async () => {
    const older = await create({ name: "2025-2026", startDate: "2025-08-25", endDate: "2026-06-30" });
    const res = await t.request(`${PATH}?pageSize=100`, { token: await northAdmin(t), school: NORTH });
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page<Config>;
    const ids = page.data.map((c) => c.id);
    expect(ids).toContain(NORTH_CONFIG);
    expect(ids).not.toContain(SOUTH_CONFIG);
    expect(ids[0]).toBe(older.id);
    const starts = page.data.map((c) => c.startDate);
    expect(starts).toEqual([...starts].sort());

    const desc = (await (
      await t.request(`${PATH}?sort=-startDate`, { token: await northAdmin(t), school: NORTH })
    ).json()) as Page<Config>;
    expect(desc.data.at(-1)?.id).toBe(older.id);

    const south = (await (await t.request(PATH, { token: await southAdmin(t), school: SOUTH })).json()) as Page<Config>;
    expect(south.data.map((c) => c.id)).toEqual([SOUTH_CONFIG]);
  });

  it("refuses an end date before the start date, and accepts a one-day year", async () => {
    const token = await northAdmin(t);
    const res = await t.request(PATH, {
      method: "POST",
      token,
      school: NORTH,
      body: { ...valid, startDate: "2027-08-23", endDate: "2027-08-22" },
    });
    const body = await expect400(res, "endDate");
    expect(body.detail).toContain("endDate");
    await create({ ...valid, startDate: "2027-08-23", endDate: "2027-08-23" });
  });

  it("accepts maxParentsPerFamily from 1 to 6 only", async () => {
    expect((await create({ ...valid, maxParentsPerFamily: 1 })).maxParentsPerFamily).toBe(1);
    expect((await create({ ...valid, maxParentsPerFamily: 6 })).maxParentsPerFamily).toBe(6);
    const token = await northAdmin(t);
    for (const bad of [0, 7, -1, 1.5, "2", null]) {
      const res = await t.request(PATH, {
        method: "POST",
        token,
        school: NORTH,
        body: { ...valid, maxParentsPerFamily: bad },
      });
      await expect400(res, "maxParentsPerFamily");
    }
  });

  it("refuses malformed input with 400 problem details", async () => {
    const token = await northAdmin(t);
    const post = (body: unknown) => t.request(PATH, { method: "POST", token, school: NORTH, body });
    for (const bad of ["2026-02-30", "2026/08/24", "2026-8-24", "2026-08-24T00:00:00Z", "", 20260824, null]) {
      await expect400(await post({ ...valid, startDate: bad }), "startDate");
    }
    await expect400(await post({ ...valid, name: "" }), "name");
    await expect400(await post({ ...valid, name: "   " }), "name");
    await expect400(await post({ ...valid, name: "x".repeat(101) }), "name");
    await expect400(await post({ ...valid, name: 2027 }), "name");
    await expect400(await post({ name: "No dates" }), "startDate");
    await expect400(await post({ ...valid, schoolId: SOUTH }), "schoolId");
    await expect400(await post({ ...valid, status: "active" }), "status");
    await expect400(await post({ ...valid, id: 99 }), "id");
    await expectStatus(await post([valid]), 400);
    await expectStatus(await raw(t, PATH, "POST", token, "{bad json"), 400);
    await expectStatus(await raw(t, PATH, "POST", token, JSON.stringify(valid), "text/plain"), 415);
  });

  it("updates with PUT (204), comparing a lone date with the stored one", async () => {
    const created = await create();
    const token = await northAdmin(t);
    const put = (body: unknown, id = created.id) =>
      t.request(`${PATH}/${id}`, { method: "PUT", token, school: NORTH, body });

    t.clock.advance(60);
    const ok = await put({ name: "Renamed", maxParentsPerFamily: 3 });
    expect(ok.status).toBe(204);
    expect(await ok.text()).toBe("");
    const after = (await (await get(created.id)).json()) as Config;
    expect(after).toMatchObject({ name: "Renamed", maxParentsPerFamily: 3, startDate: valid.startDate });
    expect(after.updatedAt).toBe(t.clock.now().toISOString());
    expect(after.createdAt).toBe(created.createdAt);

    // Stored 2027-08-23 .. 2028-06-30.
    await expect400(await put({ endDate: "2027-08-22" }), "endDate");
    await expect400(await put({ startDate: "2028-07-01" }), "endDate");
    await expect400(await put({ startDate: "2028-01-10", endDate: "2028-01-09" }), "endDate");
    expect((await put({ startDate: "2028-06-30" })).status).toBe(204);
    expect((await put({ endDate: "2028-07-15" })).status).toBe(204);
    expect(await (await get(created.id)).json()).toMatchObject({ startDate: "2028-06-30", endDate: "2028-07-15" });

    await expect400(await put({}), "");
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token), 400);
    await expect400(await put({ schoolId: SOUTH }), "schoolId");
    await expect400(await put({ maxParentsPerFamily: 9 }), "maxParentsPerFamily");
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token, "{"), 400);
    await expect400(await put({ name: "x" }, 0), "id");
    await expect400(await put({ name: "x" }, "abc" as never), "id");
    expect((await expectStatus(await put({ name: "x" }, 987654), 404)).detail).toBe(
      "School configuration 987654 not found",
    );
    // Only one date sent for a missing record: still a 404, not a 400.
    await expectStatus(await put({ endDate: "2000-01-01" }, 987654), 404);
  });

  it("answers 404 for another school's configuration on GET, PUT and DELETE, and leaves it alone", async () => {
    const token = await northAdmin(t);
    await expectStatus(await get(SOUTH_CONFIG), 404);
    const put = await t.request(`${PATH}/${SOUTH_CONFIG}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: "Taken" },
    });
    expect((await expectStatus(put, 404)).detail).toBe(`School configuration ${SOUTH_CONFIG} not found`);
    await expectStatus(
      await t.request(`${PATH}/${SOUTH_CONFIG}`, {
        method: "PUT",
        token,
        school: NORTH,
        body: { endDate: "2000-01-01" },
      }),
      404,
    );
    await expectStatus(await t.request(`${PATH}/${SOUTH_CONFIG}`, { method: "DELETE", token, school: NORTH }), 404);
    const south = await t.request(`${PATH}/${SOUTH_CONFIG}`, { token: await southAdmin(t), school: SOUTH });
    expect(await south.json()).toMatchObject({ id: SOUTH_CONFIG, name: "2026-2027", endDate: "2027-06-18" });
  });

  it("deletes (204), then the record is gone", async () => {
    const created = await create();
    const token = await northAdmin(t);
    const del = await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH });
    expect(del.status).toBe(204);
    await expectStatus(await get(created.id), 404);
    await expectStatus(await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH }), 404);
  });

  it("needs school-configuration.read to read and .write to change", async () => {
    const reader = await t.token(3, { [NORTH]: ["school-configuration.read"] });
    expect((await get(NORTH_CONFIG, reader)).status).toBe(200);
    await expectStatus(await t.request(PATH, { method: "POST", token: reader, school: NORTH, body: valid }), 403);
    const teacher = await t.token(3, { [NORTH]: ["holiday-cycle.read", "schedule-configuration.read"] });
    await expectStatus(await t.request(PATH, { token: teacher, school: NORTH }), 403);
    await expectStatus(await t.request(PATH), 401);
  });

  it("refuses unknown query parameters and sort fields", async () => {
    const token = await northAdmin(t);
    await expect400(await t.request(`${PATH}?sort=name`, { token, school: NORTH }), "sort");
    await expect400(await t.request(`${PATH}?schoolId=2`, { token, school: NORTH }), "schoolId");
    await expect400(await t.request(`${PATH}?pageSize=101`, { token, school: NORTH }), "pageSize");
  });
});

// ---------------------------------------------------------------------------------------------

describe("school holiday cycles", () => {
  const PATH = "/api/v1/school-holiday-cycle";
  type Cycle = { id: number; createdAt: string; updatedAt: string; startHolidays: string; endHolidays: string };
  const t = makeTestApp();
  const winter = {
    startHolidays: "2026-12-19T00:00:00-06:00",
    endHolidays: "2027-01-07T00:00:00-06:00",
    schoolConfigurationId: NORTH_CONFIG,
  };

  async function create(body: Record<string, unknown> = winter, school = NORTH) {
    const token = school === NORTH ? await northAdmin(t) : await southAdmin(t);
    const res = await t.request(PATH, { method: "POST", token, school, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Cycle;
  }
  const get = async (id: number | string, token?: string) =>
    t.request(`${PATH}/${id}`, { token: token ?? (await northAdmin(t)), school: NORTH });
  const post = async (body: unknown) =>
    t.request(PATH, { method: "POST", token: await northAdmin(t), school: NORTH, body });
  const put = async (id: number | string, body: unknown, token?: string) =>
    t.request(`${PATH}/${id}`, { method: "PUT", token: token ?? (await northAdmin(t)), school: NORTH, body });
  const list = async (query = "", token?: string, school = NORTH) => {
    const res = await t.request(`${PATH}${query}`, { token: token ?? (await northAdmin(t)), school });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Page<Cycle>;
  };

  it("creates a cycle (201) in UTC, without schoolConfigurationId in the record", async () => {
    const created = await create();
    expect(created).toEqual({
      id: expect.any(Number),
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      startHolidays: "2026-12-19T06:00:00.000Z",
      endHolidays: "2027-01-07T06:00:00.000Z",
    });
    const res = await get(created.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it("accepts Z and fractional seconds, and an end equal to the start", async () => {
    const same = await create({
      startHolidays: "2027-04-01T12:30:00.5Z",
      endHolidays: "2027-04-01T12:30:00.500Z",
      schoolConfigurationId: NORTH_CONFIG,
    });
    expect(same).toMatchObject({ startHolidays: "2027-04-01T12:30:00.500Z", endHolidays: "2027-04-01T12:30:00.500Z" });
  });

  it("refuses an end before the start with a field error on endHolidays, offsets included", async () => {
    const body = await expect400(
      await post({ ...winter, startHolidays: "2027-01-07T00:00:00Z", endHolidays: "2027-01-06T23:59:59Z" }),
      "endHolidays",
    );
    expect(body.errors).toEqual([{ path: "endHolidays", message: "Must not be before startHolidays" }]);
    // Same wall-clock text, but 01:00+02:00 is 23:00Z the day before: before the start.
    await expect400(
      await post({ ...winter, startHolidays: "2027-01-07T00:00:00Z", endHolidays: "2027-01-07T01:00:00+02:00" }),
      "endHolidays",
    );
  });

  it("answers 404 for another school's configuration or an unknown one, as if it did not exist", async () => {
    const south = await expectStatus(await post({ ...winter, schoolConfigurationId: SOUTH_CONFIG }), 404);
    expect(south.detail).toBe(`School configuration ${SOUTH_CONFIG} not found`);
    const unknown = await expectStatus(await post({ ...winter, schoolConfigurationId: 987654 }), 404);
    expect(unknown.detail).toBe("School configuration 987654 not found");
    // The south admin uses their own configuration.
    await create({ ...winter, schoolConfigurationId: SOUTH_CONFIG }, SOUTH);
  });

  it("refuses malformed input with 400 problem details", async () => {
    for (const bad of [0, -1, "abc", "1", 1.5, null, true, 2 ** 60]) {
      await expect400(await post({ ...winter, schoolConfigurationId: bad }), "schoolConfigurationId");
    }
    const { schoolConfigurationId: _, ...noConfig } = winter;
    await expect400(await post(noConfig), "schoolConfigurationId");
    await expect400(await post({ ...winter, startHolidays: undefined }), "startHolidays");
    for (const bad of [
      "2026-12-19",
      "2026-12-19T00:00:00",
      "2026-12-19 00:00:00Z",
      "2026-02-30T00:00:00Z",
      "2026-12-19T25:00:00Z",
      "19/12/2026",
      "",
      1766102400000,
      null,
      "0000-01-01T00:30:00+01:00",
    ]) {
      await expect400(await post({ ...winter, startHolidays: bad }), "startHolidays");
    }
    await expect400(await post({ ...winter, endHolidays: "tomorrow" }), "endHolidays");
    await expect400(await post({ ...winter, schoolId: SOUTH }), "schoolId");
    await expect400(await post({ ...winter, status: "active" }), "status");
    await expect400(await post({ ...winter, id: 5 }), "id");
    const token = await northAdmin(t);
    await expectStatus(await raw(t, PATH, "POST", token, JSON.stringify("just a string")), 400);
    await expectStatus(await raw(t, PATH, "POST", token, "just a string"), 400);
    await expectStatus(await raw(t, PATH, "POST", token, '{"startHolidays":'), 400);
    await expectStatus(await raw(t, PATH, "POST", token), 400);
    await expectStatus(await raw(t, PATH, "POST", token, JSON.stringify(winter), "text/plain"), 415);
  });

  it("lists the current school's cycles in start order, with pagination and filters", async () => {
    const config = (await (
      await t.request("/api/v1/school-configuration", {
        method: "POST",
        token: await northAdmin(t),
        school: NORTH,
        body: { name: "Listing year", startDate: "2030-08-01", endDate: "2031-06-30" },
      })
    ).json()) as { id: number };
    const at = (d: string) => `2030-${d}T00:00:00Z`;
    const cycle = (start: string, end: string) =>
      create({ startHolidays: at(start), endHolidays: at(end), schoolConfigurationId: config.id });
    // Created out of order: the list sorts by start.
    const c = await cycle("12-20", "12-31");
    const a = await cycle("10-01", "10-05");
    const b = await cycle("11-01", "11-03");
    const southCycle = await create({ ...winter, schoolConfigurationId: SOUTH_CONFIG }, SOUTH);

    const byConfig = await list(`?schoolConfigurationId=${config.id}`);
    expect(byConfig.data.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(byConfig.total).toBe(3);

    const first = await list(`?schoolConfigurationId=${config.id}&pageSize=2`);
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 3, lastPage: 2, previous: null });
    expect(first.data.map((x) => x.id)).toEqual([a.id, b.id]);
    expect(first.next).toBe(`${PATH}?schoolConfigurationId=${config.id}&pageSize=2&page=2`);
    const second = await list(first.next?.slice(PATH.length));
    expect(second.data.map((x) => x.id)).toEqual([c.id]);

    const descending = await list(`?schoolConfigurationId=${config.id}&sort=-startHolidays`);
    expect(descending.data.map((x) => x.id)).toEqual([c.id, b.id, a.id]);

    // Window filters: cycles overlapping [from, to]; an ongoing cycle counts.
    expect((await list(`?from=${at("11-02")}`)).data.map((x) => x.id)).toEqual([b.id, c.id]);
    expect((await list(`?from=${at("10-02")}&to=${at("11-01")}`)).data.map((x) => x.id)).toEqual([a.id, b.id]);
    expect((await list(`?from=2030-11-04T00:00:00%2B01:00&to=${at("12-19")}`)).data).toEqual([]);
    expect((await list(`?from=${at("12-31")}`)).data.map((x) => x.id)).toEqual([c.id]);

    // The whole list is in start order, holds the north cycles and never the south one.
    const all = await list("?pageSize=100");
    const starts = all.data.map((x) => x.startHolidays);
    expect(starts).toEqual([...starts].sort());
    expect(all.data.map((x) => x.id)).not.toContain(southCycle.id);
    expect((await list(`?schoolConfigurationId=${SOUTH_CONFIG}`)).data).toEqual([]);
    const southList = await list("?pageSize=100", await southAdmin(t), SOUTH);
    expect(southList.data.map((x) => x.id)).toContain(southCycle.id);
    expect(southList.data.map((x) => x.id)).not.toContain(a.id);
  });

  it("refuses bad list queries", async () => {
    const token = await northAdmin(t);
    const q = (query: string) => t.request(`${PATH}${query}`, { token, school: NORTH });
    await expect400(await q("?schoolConfigurationId=0"), "schoolConfigurationId");
    await expect400(await q("?schoolConfigurationId=abc"), "schoolConfigurationId");
    await expect400(await q("?from=2026-12-01"), "from");
    await expect400(await q("?to=soon"), "to");
    await expect400(await q("?sort=endHolidays"), "sort");
    await expect400(await q("?page=0"), "page");
    await expect400(await q("?schoolId=2"), "schoolId");
  });

  it("updates with PUT (204), comparing a lone date-time with the stored one", async () => {
    const created = await create();
    t.clock.advance(120);
    const ok = await put(created.id, { endHolidays: "2027-01-08T00:00:00-06:00" });
    expect(ok.status).toBe(204);
    expect(await ok.text()).toBe("");
    const after = (await (await get(created.id)).json()) as Cycle;
    expect(after).toEqual({
      ...created,
      endHolidays: "2027-01-08T06:00:00.000Z",
      updatedAt: t.clock.now().toISOString(),
    });

    // Stored 2026-12-19T06:00Z .. 2027-01-08T06:00Z.
    const early = await expect400(await put(created.id, { endHolidays: "2026-12-19T05:59:59Z" }), "endHolidays");
    expect(early.errors).toEqual([{ path: "endHolidays", message: "Must not be before startHolidays" }]);
    await expect400(await put(created.id, { startHolidays: "2027-01-08T06:00:01Z" }), "endHolidays");
    await expect400(
      await put(created.id, { startHolidays: "2027-02-01T00:00:00Z", endHolidays: "2027-01-31T00:00:00Z" }),
      "endHolidays",
    );
    expect((await put(created.id, { startHolidays: "2027-01-08T06:00:00Z" })).status).toBe(204);
    expect(
      (await put(created.id, { startHolidays: "2027-02-01T00:00:00Z", endHolidays: "2027-02-05T00:00:00Z" })).status,
    ).toBe(204);
    expect(await (await get(created.id)).json()).toMatchObject({
      startHolidays: "2027-02-01T00:00:00.000Z",
      endHolidays: "2027-02-05T00:00:00.000Z",
    });
  });

  it("refuses malformed updates", async () => {
    const created = await create();
    const token = await northAdmin(t);
    await expect400(await put(created.id, {}), "");
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token), 400);
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token, "not json"), 400);
    await expect400(await put(created.id, { schoolConfigurationId: NORTH_CONFIG }), "schoolConfigurationId");
    await expect400(await put(created.id, { schoolId: SOUTH }), "schoolId");
    await expect400(await put(created.id, { startHolidays: "2027-01-01" }), "startHolidays");
    await expect400(await put(created.id, { endHolidays: 5 }), "endHolidays");
    for (const id of ["0", "-1", "abc", "1.5"]) {
      await expect400(await put(id, { endHolidays: "2027-01-08T00:00:00Z" }), "id");
      await expect400(await get(id), "id");
    }
    const missing = await expectStatus(await put(987654, { endHolidays: "2027-01-08T00:00:00Z" }), 404);
    expect(missing.detail).toBe("School holiday cycle 987654 not found");
    expect(await (await get(created.id)).json()).toEqual(created);
  });

  it("answers 404 for another school's cycle on GET, PUT and DELETE, and leaves it alone", async () => {
    const southCycle = await create({ ...winter, schoolConfigurationId: SOUTH_CONFIG }, SOUTH);
    const token = await northAdmin(t);
    await expectStatus(await get(southCycle.id), 404);
    await expectStatus(await put(southCycle.id, { endHolidays: "2030-01-01T00:00:00Z" }), 404);
    await expectStatus(
      await put(southCycle.id, { startHolidays: "2026-01-01T00:00:00Z", endHolidays: "2030-01-01T00:00:00Z" }),
      404,
    );
    await expectStatus(await t.request(`${PATH}/${southCycle.id}`, { method: "DELETE", token, school: NORTH }), 404);
    const still = await t.request(`${PATH}/${southCycle.id}`, { token: await southAdmin(t), school: SOUTH });
    expect(await still.json()).toEqual(southCycle);
  });

  it("deletes (204), and deleting a school configuration deletes its cycles", async () => {
    const token = await northAdmin(t);
    const created = await create();
    expect((await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH })).status).toBe(204);
    await expectStatus(await get(created.id), 404);
    await expectStatus(await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH }), 404);

    const config = (await (
      await t.request("/api/v1/school-configuration", {
        method: "POST",
        token,
        school: NORTH,
        body: { name: "Short-lived", startDate: "2040-08-01", endDate: "2041-06-30" },
      })
    ).json()) as { id: number };
    const cycle = await create({ ...winter, schoolConfigurationId: config.id });
    const del = await t.request(`/api/v1/school-configuration/${config.id}`, {
      method: "DELETE",
      token,
      school: NORTH,
    });
    expect(del.status).toBe(204);
    await expectStatus(await get(cycle.id), 404);
    await expectStatus(await post({ ...winter, schoolConfigurationId: config.id }), 404);
  });

  it("lets parents and teachers read (holiday-cycle.read) but not write", async () => {
    const created = await create();
    const parent = await t.token(4, { [NORTH]: ["school.read", "transport-rules.read", "holiday-cycle.read"] });
    expect((await get(created.id, parent)).status).toBe(200);
    expect((await list("", parent)).total).toBeGreaterThan(0);
    await expectStatus(await t.request(PATH, { method: "POST", token: parent, school: NORTH, body: winter }), 403);
    await expectStatus(await put(created.id, { endHolidays: "2027-01-09T00:00:00Z" }, parent), 403);
    await expectStatus(
      await t.request(`${PATH}/${created.id}`, { method: "DELETE", token: parent, school: NORTH }),
      403,
    );
    const none = await t.token(4, { [NORTH]: ["school.read"] });
    await expectStatus(await get(created.id, none), 403);
  });
});

// ---------------------------------------------------------------------------------------------

describe("schedule configuration", () => {
  const PATH = "/api/v1/schedule-configuration";
  type Schedule = {
    id: number;
    createdAt: string;
    updatedAt: string;
    permissionTimeLimit: number;
    permissionWeeksInAdvance: number;
  };
  const t = makeTestApp();
  const valid = { permissionTimeLimit: 24, permissionWeeksInAdvance: 2 };

  // One per school: every test starts with neither school configured.
  beforeEach(async () => {
    // Each school's database (docs/scaling.md "Shards"): demo school 2's is the shard.
    for (const db of Object.values(t.deps.shards ?? { DB: t.db })) await db.delete(scheduleConfigurations);
  });

  async function create(body: Record<string, unknown> = valid, school = NORTH) {
    const token = school === NORTH ? await northAdmin(t) : await southAdmin(t);
    const res = await t.request(PATH, { method: "POST", token, school, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Schedule;
  }
  const post = async (body: unknown) =>
    t.request(PATH, { method: "POST", token: await northAdmin(t), school: NORTH, body });
  const put = async (id: number | string, body: unknown) =>
    t.request(`${PATH}/${id}`, { method: "PUT", token: await northAdmin(t), school: NORTH, body });
  const get = async (id: number | string, token?: string) =>
    t.request(`${PATH}/${id}`, { token: token ?? (await northAdmin(t)), school: NORTH });
  const forSchool = async (token?: string, school = NORTH) => {
    const res = await t.request(PATH, { token: token ?? (await northAdmin(t)), school });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Page<Schedule>;
  };

  it("GET on the collection is the school's configuration: empty until one is created", async () => {
    expect(await forSchool()).toEqual({
      data: [],
      page: 1,
      pageSize: 20,
      total: 0,
      lastPage: 1,
      next: null,
      previous: null,
    });
    const created = await create();
    expect(created).toEqual({
      id: expect.any(Number),
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      permissionTimeLimit: 24,
      permissionWeeksInAdvance: 2,
    });
    const page = await forSchool();
    expect(page.data).toEqual([created]);
    expect(page.total).toBe(1);
    expect(await (await get(created.id)).json()).toEqual(created);
  });

  it("allows one per school: a second POST is a 409, another school has its own", async () => {
    const north = await create();
    const again = await expectStatus(await post({ permissionTimeLimit: 48, permissionWeeksInAdvance: 4 }), 409);
    expect(again.detail).toContain("already has a schedule configuration");
    expect(await (await get(north.id)).json()).toEqual(north);

    const south = await create({ permissionTimeLimit: 0, permissionWeeksInAdvance: 1 }, SOUTH);
    expect((await forSchool()).data).toEqual([north]);
    expect((await forSchool(await southAdmin(t), SOUTH)).data).toEqual([south]);
  });

  it("accepts permissionWeeksInAdvance 1 to 4 and a whole number of hours from 0 to 168", async () => {
    const created = await create({ permissionTimeLimit: 0, permissionWeeksInAdvance: 1 });
    for (const weeks of [2, 3, 4])
      expect((await put(created.id, { permissionWeeksInAdvance: weeks })).status).toBe(204);
    expect((await put(created.id, { permissionTimeLimit: 168 })).status).toBe(204);
    expect(await (await get(created.id)).json()).toMatchObject({
      permissionTimeLimit: 168,
      permissionWeeksInAdvance: 4,
    });
  });

  it("refuses out-of-range, wrongly typed and unknown fields", async () => {
    for (const bad of [0, 5, -1, 2.5, "2", null, [2]]) {
      await expect400(await post({ ...valid, permissionWeeksInAdvance: bad }), "permissionWeeksInAdvance");
    }
    for (const bad of [1.5, -1, 169, "24", null, 1e9]) {
      await expect400(await post({ ...valid, permissionTimeLimit: bad }), "permissionTimeLimit");
    }
    await expect400(await post({ permissionTimeLimit: 24 }), "permissionWeeksInAdvance");
    await expect400(await post({ permissionWeeksInAdvance: 2 }), "permissionTimeLimit");
    await expect400(await post({ ...valid, schoolId: SOUTH }), "schoolId");
    await expect400(await post({ ...valid, status: "active" }), "status");
    const token = await northAdmin(t);
    await expectStatus(await raw(t, PATH, "POST", token, "{,}"), 400);
    await expectStatus(
      await raw(t, PATH, "POST", token, JSON.stringify(valid), "application/x-www-form-urlencoded"),
      415,
    );
    expect((await forSchool()).total).toBe(0);
  });

  it("refuses malformed updates, and answers 404 for ids that are not the school's", async () => {
    const created = await create();
    const token = await northAdmin(t);
    await expect400(await put(created.id, {}), "");
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token), 400);
    await expectStatus(await raw(t, `${PATH}/${created.id}`, "PUT", token, "nope"), 400);
    await expect400(await put(created.id, { permissionWeeksInAdvance: 5 }), "permissionWeeksInAdvance");
    await expect400(await put(created.id, { permissionWeeksInAdvance: "3" }), "permissionWeeksInAdvance");
    await expect400(await put(created.id, { permissionTimeLimit: 169 }), "permissionTimeLimit");
    await expect400(await put(created.id, { schoolId: SOUTH }), "schoolId");
    // No literal sub-path exists: `current` or any other word is a malformed id on every method.
    for (const id of ["current", "0", "-1"]) {
      await expect400(await get(id), "id");
      await expect400(await put(id, valid), "id");
      await expect400(await t.request(`${PATH}/${id}`, { method: "DELETE", token, school: NORTH }), "id");
    }
    expect(await (await get(created.id)).json()).toEqual(created);

    const south = await create(valid, SOUTH);
    await expectStatus(await get(south.id), 404);
    await expectStatus(await put(south.id, { permissionTimeLimit: 1 }), 404);
    await expectStatus(await t.request(`${PATH}/${south.id}`, { method: "DELETE", token, school: NORTH }), 404);
    expect((await forSchool(await southAdmin(t), SOUTH)).data).toEqual([south]);
  });

  it("updates (204) and deletes (204); after a delete the school can create one again", async () => {
    const created = await create();
    t.clock.advance(30);
    expect((await put(created.id, { permissionTimeLimit: 12 })).status).toBe(204);
    const after = (await (await get(created.id)).json()) as Schedule;
    expect(after).toEqual({ ...created, permissionTimeLimit: 12, updatedAt: t.clock.now().toISOString() });

    const token = await northAdmin(t);
    expect((await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH })).status).toBe(204);
    await expectStatus(await get(created.id), 404);
    expect((await forSchool()).data).toEqual([]);
    const again = await create({ permissionTimeLimit: 6, permissionWeeksInAdvance: 3 });
    expect(again.id).not.toBe(created.id);
    const rows = await t.db.select().from(scheduleConfigurations).where(eq(scheduleConfigurations.schoolId, NORTH));
    expect(rows).toHaveLength(1);
  });

  it("lets teachers read (schedule-configuration.read) but not write; parents cannot read it", async () => {
    const created = await create();
    const teacher = await t.token(3, { [NORTH]: ["schedule-configuration.read", "holiday-cycle.read"] });
    expect((await get(created.id, teacher)).status).toBe(200);
    expect((await forSchool(teacher)).data).toHaveLength(1);
    await expectStatus(await t.request(PATH, { method: "POST", token: teacher, school: NORTH, body: valid }), 403);
    await expectStatus(
      await t.request(`${PATH}/${created.id}`, { method: "PUT", token: teacher, school: NORTH, body: valid }),
      403,
    );
    const parent = await t.token(4, { [NORTH]: ["school.read", "transport-rules.read", "holiday-cycle.read"] });
    await expectStatus(await t.request(PATH, { token: parent, school: NORTH }), 403);
  });
});
