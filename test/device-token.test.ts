import { beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "./fixtures";
import { DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
const path = "/api/v1/device-token";

type DeviceToken = {
  id: number;
  userId: number;
  token: string;
  platform: string;
  createdAt: string;
  updatedAt: string;
};
type Page = { data: DeviceToken[]; total: number; page: number; pageSize: number };

let admin: string; // north admin: device-token.read in school 1
let teacher: string;
let parent: string;
let south: string; // south admin: device-token.read in school 2

beforeAll(async () => {
  admin = await t.token(DEMO.northAdmin.id, { 1: "all" });
  teacher = await t.token(DEMO.northTeacher.id, { 1: ["school.read", "document.read", "transport-rules.read"] });
  parent = await t.token(DEMO.northParent.id, { 1: ["school.read", "transport-rules.read"] });
  south = await t.token(DEMO.southAdmin.id, { 2: "all" });
});

let n = 0;
const newToken = (prefix: string) => `${prefix}:APA91b-${Date.now().toString(36)}-${++n}`;

async function register(token: string, body: unknown, school = 1) {
  const res = await t.request(path, { method: "POST", token, school, body });
  expect(res.status).toBe(201);
  return (await res.json()) as DeviceToken;
}

async function list(token: string, query = "", school = 1) {
  const res = await t.request(`${path}${query}`, { token, school });
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}

describe("register (POST)", () => {
  it("registers the caller's device and answers 201 with the record", async () => {
    const value = newToken("parent");
    const created = await register(parent, { token: value, platform: "ios" });
    expect(created).toMatchObject({ userId: DEMO.northParent.id, token: value, platform: "ios" });
    expect(created.id).toBeGreaterThan(0);
    expect(created.createdAt).toBe(t.clock.now().toISOString());
    const res = await t.request(`${path}/${created.id}`, { token: parent, school: 1 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it("registering the same token again updates that row instead of duplicating it", async () => {
    const value = newToken("again");
    const first = await register(parent, { token: value, platform: "android" });
    t.clock.advance(60);
    const second = await register(parent, { token: value, platform: "web" });
    expect(second.id).toBe(first.id);
    expect(second.platform).toBe("web");
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.updatedAt).toBe(t.clock.now().toISOString());
    const mine = await list(parent);
    expect(mine.data.filter((d) => d.token === value)).toHaveLength(1);
  });

  it("a device signed in by another user moves to that user (201 with the same id)", async () => {
    const value = newToken("handover");
    const first = await register(parent, { token: value, platform: "ios" });
    const taken = await register(teacher, { token: value, platform: "ios" });
    expect(taken.id).toBe(first.id);
    expect(taken.userId).toBe(DEMO.northTeacher.id);
    expect((await list(parent)).data.map((d) => d.id)).not.toContain(first.id);
    expect((await list(teacher)).data.map((d) => d.id)).toContain(first.id);
    const gone = await t.request(`${path}/${first.id}`, { token: parent, school: 1 });
    expect(gone.status).toBe(404);
  });

  it("even across schools: the south admin takes over a north device", async () => {
    const value = newToken("cross");
    const first = await register(parent, { token: value, platform: "android" });
    const taken = await register(south, { token: value, platform: "android" }, 2);
    expect(taken).toMatchObject({ id: first.id, userId: DEMO.southAdmin.id });
  });

  it("accepts a token of exactly 4096 characters", async () => {
    const value = `x${"y".repeat(4095)}`;
    const created = await register(parent, { token: value, platform: "web" });
    expect(created.token).toHaveLength(4096);
  });

  it.each([
    ["missing token", { platform: "ios" }, "token"],
    ["missing platform", { token: "abc" }, "platform"],
    ["empty token", { token: "", platform: "ios" }, "token"],
    ["token with spaces", { token: "abc def", platform: "ios" }, "token"],
    ["token too long", { token: "x".repeat(4097), platform: "ios" }, "token"],
    ["token not a string", { token: 12345, platform: "ios" }, "token"],
    ["unknown platform", { token: "abc", platform: "windows" }, "platform"],
    ["platform in capitals", { token: "abc", platform: "IOS" }, "platform"],
    ["unknown field", { token: "abc", platform: "ios", userId: 2 }, "userId"],
    ["null body", null, ""],
    ["array body", [], ""],
  ])("400 for %s", async (_, body, field) => {
    const res = await t.request(path, { method: "POST", token: parent, school: 1, body });
    expect(res.status).toBe(400);
    const p = await problem(res);
    expect(p.errors?.some((e) => e.path === field)).toBe(true);
  });

  it("400 for malformed JSON", async () => {
    const res = await t.request(path, {
      method: "POST",
      token: parent,
      school: 1,
      body: "{ token:",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    await problem(res);
  });

  it("refuses a request without a JSON body", async () => {
    const empty = await t.request(path, { method: "POST", token: parent, school: 1 });
    expect(empty.status).toBe(400);
    await problem(empty);
    const text = await t.request(path, {
      method: "POST",
      token: parent,
      school: 1,
      body: "token=abc&platform=ios",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([400, 415]).toContain(text.status);
    await problem(text);
  });

  it("401 without credentials, 403 in a school the caller has no role in", async () => {
    const anon = await t.request(path, { method: "POST", body: { token: "abc", platform: "ios" } });
    expect(anon.status).toBe(401);
    await problem(anon);
    const elsewhere = await t.request(path, {
      method: "POST",
      token: parent,
      school: 2,
      body: { token: "abc", platform: "ios" },
    });
    expect(elsewhere.status).toBe(403);
    await problem(elsewhere);
  });
});

describe("list and read", () => {
  let parentToken: DeviceToken;
  let teacherToken: DeviceToken;
  let southToken: DeviceToken;

  beforeAll(async () => {
    parentToken = await register(parent, { token: newToken("p"), platform: "ios" });
    teacherToken = await register(teacher, { token: newToken("t"), platform: "android" });
    southToken = await register(south, { token: newToken("s"), platform: "web" }, 2);
  });

  it("a member lists only their own tokens", async () => {
    const page = await list(parent);
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((d) => d.userId === DEMO.northParent.id)).toBe(true);
    expect(page.data.map((d) => d.id)).toContain(parentToken.id);
    expect(page.total).toBe(page.data.length);
  });

  it("an admin lists the tokens of every member of the school, and no one else's", async () => {
    const page = await list(admin, "?pageSize=100");
    const ids = page.data.map((d) => d.id);
    expect(ids).toContain(parentToken.id);
    expect(ids).toContain(teacherToken.id);
    expect(ids).not.toContain(southToken.id);
    expect(page.data.every((d) => [2, 3, 4].includes(d.userId))).toBe(true);
  });

  it("the south admin sees the south school's tokens only", async () => {
    const page = await list(south, "?pageSize=100", 2);
    expect(page.data.map((d) => d.id)).toContain(southToken.id);
    expect(page.data.every((d) => d.userId === DEMO.southAdmin.id)).toBe(true);
  });

  it("filters by user and pages", async () => {
    const byTeacher = await list(admin, `?userId=${DEMO.northTeacher.id}`);
    expect(byTeacher.data.length).toBeGreaterThan(0);
    expect(byTeacher.data.every((d) => d.userId === DEMO.northTeacher.id)).toBe(true);
    // A member filtering on someone else still sees only their own (none of the teacher's).
    expect((await list(parent, `?userId=${DEMO.northTeacher.id}`)).total).toBe(0);
    const first = await list(admin, "?pageSize=1");
    expect(first.data).toHaveLength(1);
    expect(first.pageSize).toBe(1);
  });

  it("reads: own yes, a school member's with device-token.read yes, otherwise 404", async () => {
    expect((await t.request(`${path}/${teacherToken.id}`, { token: admin, school: 1 })).status).toBe(200);
    const notMine = await t.request(`${path}/${teacherToken.id}`, { token: parent, school: 1 });
    expect(notMine.status).toBe(404);
    expect((await problem(notMine)).detail).toBe(`Device token ${teacherToken.id} not found`);
    const otherSchool = await t.request(`${path}/${southToken.id}`, { token: admin, school: 1 });
    expect(otherSchool.status).toBe(404);
    await problem(otherSchool);
    const northFromSouth = await t.request(`${path}/${parentToken.id}`, { token: south, school: 2 });
    expect(northFromSouth.status).toBe(404);
    await problem(northFromSouth);
  });

  it.each([["?page=0"], ["?pageSize=0"], ["?pageSize=101"], ["?userId=abc"], ["?userId=0"], ["?platform=ios"]])(
    "400 for the query %s",
    async (query) => {
      const res = await t.request(`${path}${query}`, { token: admin, school: 1 });
      expect(res.status).toBe(400);
      await problem(res);
    },
  );

  it.each([["abc"], ["0"], ["-1"], ["1.5"], ["99999999999999999999"]])("400 for the id %s", async (id) => {
    const res = await t.request(`${path}/${id}`, { token: admin, school: 1 });
    expect(res.status).toBe(400);
    expect((await problem(res)).errors?.[0]?.path).toBe("id");
  });

  it("404 for an unknown id", async () => {
    const res = await t.request(`${path}/999999`, { token: admin, school: 1 });
    expect(res.status).toBe(404);
    await problem(res);
  });
});

describe("update (PUT) and delete", () => {
  it("updates the caller's own token: platform and token, 204", async () => {
    const mine = await register(parent, { token: newToken("upd"), platform: "ios" });
    t.clock.advance(30);
    const value = newToken("renamed");
    const res = await t.request(`${path}/${mine.id}`, {
      method: "PUT",
      token: parent,
      school: 1,
      body: { token: value, platform: "android" },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const read = (await (await t.request(`${path}/${mine.id}`, { token: parent, school: 1 })).json()) as DeviceToken;
    expect(read).toMatchObject({ token: value, platform: "android", userId: DEMO.northParent.id });
    expect(read.updatedAt).toBe(t.clock.now().toISOString());
  });

  it("409 when the new token is already registered", async () => {
    const a = await register(parent, { token: newToken("a"), platform: "ios" });
    const b = await register(teacher, { token: newToken("b"), platform: "ios" });
    const res = await t.request(`${path}/${a.id}`, {
      method: "PUT",
      token: parent,
      school: 1,
      body: { token: b.token },
    });
    expect(res.status).toBe(409);
    await problem(res);
  });

  it("an admin may read but not change or delete another user's token (404)", async () => {
    const theirs = await register(teacher, { token: newToken("theirs"), platform: "ios" });
    const put = await t.request(`${path}/${theirs.id}`, {
      method: "PUT",
      token: admin,
      school: 1,
      body: { platform: "web" },
    });
    expect(put.status).toBe(404);
    await problem(put);
    const del = await t.request(`${path}/${theirs.id}`, { method: "DELETE", token: admin, school: 1 });
    expect(del.status).toBe(404);
    await problem(del);
    const superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
    const bySuper = await t.request(`${path}/${theirs.id}`, { method: "DELETE", token: superAdmin, school: 1 });
    expect(bySuper.status).toBe(404);
    const read = (await (await t.request(`${path}/${theirs.id}`, { token: admin, school: 1 })).json()) as DeviceToken;
    expect(read.platform).toBe("ios");
  });

  it("another school's token is a 404 for every operation", async () => {
    const southOwn = await register(south, { token: newToken("south"), platform: "web" }, 2);
    for (const init of [
      { method: "GET" },
      { method: "PUT", body: { platform: "ios" } },
      { method: "DELETE" },
    ] as const) {
      const res = await t.request(`${path}/${southOwn.id}`, { ...init, token: admin, school: 1 });
      expect(res.status).toBe(404);
      await problem(res);
    }
  });

  it.each([
    ["an empty body", {}, ""],
    ["an unknown field", { platform: "ios", userId: 3 }, "userId"],
    ["an unknown platform", { platform: "blackberry" }, "platform"],
    ["an empty token", { token: "" }, "token"],
    ["a token too long", { token: "x".repeat(4097) }, "token"],
    ["a null platform", { platform: null }, "platform"],
  ])("PUT with %s is a 400", async (_, body, field) => {
    const mine = await register(parent, { token: newToken("bad"), platform: "ios" });
    const res = await t.request(`${path}/${mine.id}`, { method: "PUT", token: parent, school: 1, body });
    expect(res.status).toBe(400);
    const p = await problem(res);
    if (field) expect(p.errors?.some((e) => e.path === field)).toBe(true);
  });

  it("PUT without a body is a 400", async () => {
    const mine = await register(parent, { token: newToken("nobody"), platform: "ios" });
    const res = await t.request(`${path}/${mine.id}`, { method: "PUT", token: parent, school: 1 });
    expect(res.status).toBe(400);
    await problem(res);
  });

  it("deletes the caller's own token: 204, then 404", async () => {
    const mine = await register(parent, { token: newToken("del"), platform: "ios" });
    const res = await t.request(`${path}/${mine.id}`, { method: "DELETE", token: parent, school: 1 });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await t.request(`${path}/${mine.id}`, { token: parent, school: 1 })).status).toBe(404);
    const again = await t.request(`${path}/${mine.id}`, { method: "DELETE", token: parent, school: 1 });
    expect(again.status).toBe(404);
    await problem(again);
  });
});

describe("conformance fixture", () => {
  it("makes a token in each school that its owner can update and delete", async () => {
    const fixture = FIXTURES["/api/v1/device-token"];
    for (const [school, owner] of [
      [1, admin],
      [2, south],
    ] as const) {
      const id = (await fixture?.create(t, school)) as number;
      const body = fixture?.bodies?.updateDeviceToken;
      expect((await t.request(`${path}/${id}`, { method: "PUT", token: owner, school, body })).status).toBe(204);
      const otherSchool = school === 1 ? { token: south, school: 2 } : { token: admin, school: 1 };
      expect((await t.request(`${path}/${id}`, otherSchool)).status).toBe(404);
      expect((await t.request(`${path}/${id}`, { method: "DELETE", token: owner, school })).status).toBe(204);
    }
  });
});

describe("token values are their owner's only", () => {
  it("an admin listing the school's devices sees other users' values masked, their own in full", async () => {
    const theirs = newToken("mask");
    const mine = newToken("own");
    await register(teacher, { token: theirs, platform: "android" });
    await register(admin, { token: mine, platform: "ios" });
    const page = await list(admin, "?pageSize=100");
    const values = page.data.map((d) => d.token);
    expect(values).not.toContain(theirs);
    expect(values).toContain(`…${theirs.slice(-4)}`);
    expect(values).toContain(mine);
    // Reading one by id masks it too; its owner reads it in full.
    const row = page.data.find((d) => d.token === `…${theirs.slice(-4)}`);
    const one = (await (await t.request(`${path}/${row?.id}`, { token: admin, school: 1 })).json()) as DeviceToken;
    expect(one.token).toBe(`…${theirs.slice(-4)}`);
    const own = (await (await t.request(`${path}/${row?.id}`, { token: teacher, school: 1 })).json()) as DeviceToken;
    expect(own.token).toBe(theirs);
  });

  it("a value another user holds moves only to the caller who presents it, and the move is audited", async () => {
    const value = newToken("moved");
    const first = await register(teacher, { token: value, platform: "android" });
    const moved = await register(parent, { token: value, platform: "ios" });
    expect(moved).toMatchObject({ id: first.id, userId: DEMO.northParent.id, token: value, platform: "ios" });
    expect((await list(teacher, "?pageSize=100")).data.map((d) => d.id)).not.toContain(first.id);
    const audit = await t.request(`/api/v1/audit-log?record=device-token:${first.id}`, { token: admin, school: 1 });
    const entries = ((await audit.json()) as { data: { action: string; changes: Record<string, unknown> }[] }).data;
    expect(entries.map((e) => e.action)).toEqual(["transfer", "create"]);
    expect(entries[0]?.changes).toMatchObject({
      userId: { old: DEMO.northTeacher.id, new: DEMO.northParent.id },
      platform: { old: "android", new: "ios" },
    });
    expect(JSON.stringify(entries)).not.toContain(value);
  });
});
