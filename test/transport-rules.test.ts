import { beforeAll, describe, expect, it } from "vitest";
import { DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
const path = "/api/v1/rules-transportation/content";

type Rules = { content: string; updatedAt: string | null; updatedBy: number | null };

let northAdmin: string;
let southAdmin: string;
let parent: string;
let teacher: string;

beforeAll(async () => {
  northAdmin = await t.token(DEMO.northAdmin.id, { 1: "all" });
  southAdmin = await t.token(DEMO.southAdmin.id, { 2: "all" });
  parent = await t.token(DEMO.northParent.id, { 1: ["school.read", "transport-rules.read", "holiday-cycle.read"] });
  teacher = await t.token(DEMO.northTeacher.id, { 1: ["school.read", "document.read", "transport-rules.read"] });
});

async function read(token: string, school: number) {
  const res = await t.request(path, { token, school });
  expect(res.status).toBe(200);
  return (await res.json()) as Rules;
}

const put = (token: string, school: number, body: unknown, headers?: Record<string, string>) =>
  t.request(path, { method: "PUT", token, school, body, headers });

describe("transportation rules content", () => {
  it("a school that never wrote rules reads an empty text, not a 404", async () => {
    expect(await read(southAdmin, 2)).toEqual({ content: "", updatedAt: null, updatedBy: null });
  });

  it("PUT replaces the text (204) and records who and when; parents and teachers read it", async () => {
    const res = await put(northAdmin, 1, { content: "Be at the stop 5 minutes early." });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const expected = {
      content: "Be at the stop 5 minutes early.",
      updatedAt: t.clock.now().toISOString(),
      updatedBy: DEMO.northAdmin.id,
    };
    expect(await read(parent, 1)).toEqual(expected);
    expect(await read(teacher, 1)).toEqual(expected);

    t.clock.advance(60);
    const staff = await t.token(DEMO.northTeacher.id, { 1: ["transport-rules.read", "transport-rules.write"] });
    expect((await put(staff, 1, { content: "Nueva versión: ¡llegue 10 minutos antes! 🚌" })).status).toBe(204);
    expect(await read(parent, 1)).toEqual({
      content: "Nueva versión: ¡llegue 10 minutos antes! 🚌",
      updatedAt: t.clock.now().toISOString(),
      updatedBy: DEMO.northTeacher.id,
    });
  });

  it("each school has its own text", async () => {
    expect((await put(northAdmin, 1, { content: "North rules" })).status).toBe(204);
    expect((await put(southAdmin, 2, { content: "South rules" })).status).toBe(204);
    expect((await read(northAdmin, 1)).content).toBe("North rules");
    expect((await read(southAdmin, 2)).content).toBe("South rules");
    // Replacing one school's text leaves the other's alone.
    expect((await put(southAdmin, 2, { content: "" })).status).toBe(204);
    expect((await read(northAdmin, 1)).content).toBe("North rules");
    expect((await read(southAdmin, 2)).content).toBe("");
  });

  it("accepts exactly 64 KiB of UTF-8 and refuses one byte more with a 413", async () => {
    const max = "a".repeat(65_536);
    expect((await put(northAdmin, 1, { content: max })).status).toBe(204);
    expect((await read(parent, 1)).content).toHaveLength(65_536);

    const over = await put(northAdmin, 1, { content: `${max}b` });
    expect(over.status).toBe(413);
    expect((await problem(over)).detail).toContain("65536");
    // Counted in bytes, not characters: 21,846 three-byte characters are 65,538 bytes.
    const wide = await put(northAdmin, 1, { content: "€".repeat(21_846) });
    expect(wide.status).toBe(413);
    await problem(wide);
    expect((await read(parent, 1)).content).toBe(max);
  });

  it("a body over the app's 1 MiB limit is a 413 too", async () => {
    const res = await put(northAdmin, 1, { content: "a".repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    await problem(res);
  });

  it.each([
    ["an empty object", {}, "content"],
    ["content not a string", { content: 42 }, "content"],
    ["content null", { content: null }, "content"],
    ["an unknown field", { content: "x", schoolId: 2 }, "schoolId"],
    ["an array", ["x"], ""],
  ])("PUT with %s is a 400", async (_, body, field) => {
    const res = await put(northAdmin, 1, body);
    expect(res.status).toBe(400);
    const p = await problem(res);
    expect(p.errors?.some((e) => e.path === field)).toBe(true);
  });

  it("PUT with malformed JSON, no body, or a non-JSON body is refused", async () => {
    const bad = await put(northAdmin, 1, '{"content": ', { "content-type": "application/json" });
    expect(bad.status).toBe(400);
    await problem(bad);
    const none = await t.request(path, { method: "PUT", token: northAdmin, school: 1 });
    expect(none.status).toBe(400);
    await problem(none);
    const text = await put(northAdmin, 1, "content=x", { "content-type": "text/plain" });
    expect([400, 415]).toContain(text.status);
    await problem(text);
  });

  it("needs transport-rules.read to read and transport-rules.write to replace", async () => {
    const nobody = await t.token(DEMO.northParent.id, { 1: ["school.read"] });
    const cannotRead = await t.request(path, { token: nobody, school: 1 });
    expect(cannotRead.status).toBe(403);
    await problem(cannotRead);
    const cannotWrite = await put(parent, 1, { content: "Parents write the rules now" });
    expect(cannotWrite.status).toBe(403);
    await problem(cannotWrite);
    const anonymous = await t.request(path);
    expect(anonymous.status).toBe(401);
    await problem(anonymous);
    // A north parent has no role in the south school.
    const elsewhere = await t.request(path, { token: parent, school: 2 });
    expect(elsewhere.status).toBe(403);
    await problem(elsewhere);
  });

  it("a malformed X-School-Id is a 400", async () => {
    const res = await t.request(path, { token: parent, headers: { "x-school-id": "abc" } });
    expect(res.status).toBe(400);
    await problem(res);
  });
});
