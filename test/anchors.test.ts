/**
 * User anchors (docs/scaling.md "Shards", "Anchors"): a school on `DB_SHARD_1` holds a kept copy of
 * the `user` row of every person it names. People added by phone are made in the platform
 * database first, then anchored in the school's batch; a write of a person's row reaches every
 * anchor of it. The school's lists read the names on its own database, and none of its rows is in
 * `DB`.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { DEMO, makeTestApp, recordingBulkQueue, type TestApp } from "./helpers";
import { rowsOf, schoolOnShard1 } from "./shard-kit";
import { FAMILY_COLUMNS, xlsx } from "./sheets";

const NORTH = 1;
const superAdmin = (t: TestApp) => t.token(DEMO.superAdmin.id, {}, true);

let next = 0;
const newPhone = () => `+1555${7_300_000 + ++next}`;

type UserRow = { id: number; phone: string; first_name: string; last_name: string; status: string };
const userIn = (db: D1Database, id: number) =>
  db.prepare("SELECT id, phone, first_name, last_name, status FROM user WHERE id = ?").bind(id).first<UserRow>();
const userByPhone = (db: D1Database, phone: string) =>
  db.prepare("SELECT id, phone, first_name, last_name, status FROM user WHERE phone = ?").bind(phone).first<UserRow>();

type Parent = { id: number; userId: number; firstName: string; lastName: string; phone: string };

async function addParent(t: TestApp, school: number, body: Record<string, unknown>) {
  const res = await t.request("/api/v1/parent", { method: "POST", token: await superAdmin(t), school, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Parent;
}

async function parentNames(t: TestApp, school: number, name?: string) {
  const query = name ? `?name=${encodeURIComponent(name)}` : "";
  const res = await t.request(`/api/v1/parent${query}`, { token: await superAdmin(t), school });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { data: Parent[] }).data.map((p) => `${p.firstName} ${p.lastName}`);
}

describe("user anchors on a shard", () => {
  it("people added by phone are made in DB, anchored in the school's shard, and listed from there", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, `Anchored School ${++next}`);

    // A parent added by phone: the user in DB, its anchor (same id, same values) in the shard.
    const phone = newPhone();
    const parent = await addParent(t, school, {
      phone,
      firstName: "Lucía",
      lastName: "Fragmento",
      relationship: "mother",
    });
    const platform = await userIn(env.DB, parent.userId);
    expect(platform).toMatchObject({ phone, first_name: "Lucía", last_name: "Fragmento", status: "invited" });
    expect(await userIn(env.DB_SHARD_1, parent.userId)).toEqual(platform);

    // Invited by phone: a new number and a number DB knows already (a demo parent's) both anchored.
    const invited = newPhone();
    const res = await t.request("/api/v1/user/invite/school", {
      method: "POST",
      token,
      school,
      body: { phones: [invited, DEMO.northParent.phone] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const made = await userByPhone(env.DB, invited);
    expect(made).toMatchObject({ status: "invited" });
    expect(await userByPhone(env.DB_SHARD_1, invited)).toEqual(made);
    const known = await userByPhone(env.DB, DEMO.northParent.phone);
    expect(await userIn(env.DB_SHARD_1, known?.id ?? 0)).toEqual(known);

    // The school's list reads the names on the shard; none of the school's rows is in DB.
    expect(await parentNames(t, school)).toEqual(["Lucía Fragmento"]);
    expect(await rowsOf(env.DB, school)).toEqual({});
    expect(await rowsOf(env.DB_SHARD_1, school)).toMatchObject({ parent: 1, school_user: 3 });

    // A school on DB is unaffected: a person added there has no anchor in the shard.
    const north = await addParent(t, NORTH, {
      phone: newPhone(),
      firstName: "Norte",
      lastName: "Plataforma",
      relationship: "father",
    });
    expect(await userIn(env.DB_SHARD_1, north.userId)).toBeNull();
    expect(await parentNames(t, NORTH, "Plataforma")).toEqual(["Norte Plataforma"]);
    expect(await parentNames(t, NORTH, "Fragmento")).toEqual([]);
    expect(await rowsOf(env.DB_SHARD_1, NORTH)).toEqual({});
  });

  it("a person's own edit, the super-admin's and a deactivation reach the anchor on the shard", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, `Anchored School ${++next}`);
    const parent = await addParent(t, school, {
      phone: newPhone(),
      firstName: "Marta",
      lastName: "Antes",
      relationship: "mother",
    });

    // The person's own edit (no school): DB first, then the anchor.
    const me = await t.token(parent.userId, {});
    const own = await t.request("/api/v1/user/me", { method: "PUT", token: me, body: { lastName: "Propia" } });
    expect(own.status, await own.clone().text()).toBe(204);
    expect(await userIn(env.DB, parent.userId)).toMatchObject({ last_name: "Propia" });
    expect(await userIn(env.DB_SHARD_1, parent.userId)).toMatchObject({ last_name: "Propia" });
    expect(await parentNames(t, school)).toEqual(["Marta Propia"]);

    // The super-admin's edit in the school: the anchor and DB alike.
    const edit = await t.request(`/api/v1/user/${parent.userId}`, {
      method: "PUT",
      token,
      school,
      body: { firstName: "Martina" },
    });
    expect(edit.status, await edit.clone().text()).toBe(204);
    expect(await userIn(env.DB_SHARD_1, parent.userId)).toMatchObject({ first_name: "Martina" });
    expect(await userIn(env.DB, parent.userId)).toMatchObject({ first_name: "Martina" });
    expect(await parentNames(t, school)).toEqual(["Martina Propia"]);

    // A deactivation: the status in both.
    const off = await t.request(`/api/v1/user/${parent.userId}`, {
      method: "PUT",
      token,
      school,
      body: { status: "inactive" },
    });
    expect(off.status, await off.clone().text()).toBe(204);
    expect(await userIn(env.DB, parent.userId)).toMatchObject({ status: "inactive" });
    expect(await userIn(env.DB_SHARD_1, parent.userId)).toMatchObject({ status: "inactive" });
    const listed = await t.request("/api/v1/parent", { token, school });
    expect(((await listed.json()) as { data: { status: string }[] }).data.map((p) => p.status)).toEqual(["inactive"]);

    expect(await rowsOf(env.DB, school)).toEqual({});
  });

  it("a family import and a people import on a shard: users made in DB, anchored, the lists read on the shard", async () => {
    const { sent, queue } = recordingBulkQueue();
    const t = makeTestApp({ queues: { bulk: queue } });
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, `Anchored School ${++next}`);
    const runImport = async (path: string, bytes: Uint8Array) => {
      const slug = `${school}/documents/anchors-${++next}.xlsx`;
      const doc = await t.request("/api/v1/documents", { method: "POST", token, school, body: { name: "File", slug } });
      expect(doc.status, await doc.clone().text()).toBe(201);
      await env.DOCUMENTS.put(slug, bytes);
      const documentId = ((await doc.json()) as { id: number }).id;
      const res = await t.request(path, { method: "POST", token, school, body: { documentId } });
      expect(res.status, await res.clone().text()).toBe(201);
      const message = sent.at(-1);
      const batch = createMessageBatch("school-bulk", [
        { id: `anchors-${next}`, body: message, timestamp: new Date(), attempts: 1 },
      ]);
      const ctx = createExecutionContext();
      await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
      expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
      const id = ((await res.json()) as { id: number }).id;
      const process = await t.request(`/api/v1/bulk-process/${id}`, { token, school });
      return (await process.json()) as { status: string; errors: unknown[] };
    };

    // A family: a new parent, and a parent DB knows (a demo school's) whom this shard has no anchor of yet.
    const dad = newPhone();
    expect(await userByPhone(env.DB_SHARD_1, DEMO.northTeacher.phone)).toBeNull();
    const family = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        [
          "SF-1",
          "Shard Family",
          "SS-1",
          "Sol",
          "Fragmento",
          "elementary",
          null,
          dad,
          "Pablo",
          "Fragmento",
          "father",
          DEMO.northTeacher.phone,
          "Nora",
          "Fragmento",
          "mother",
        ],
      ]),
    );
    expect(family).toMatchObject({ status: "completed", errors: [] });
    const made = await userByPhone(env.DB, dad);
    expect(made).toMatchObject({ first_name: "Pablo", last_name: "Fragmento", status: "invited" });
    expect(await userByPhone(env.DB_SHARD_1, dad)).toEqual(made);
    const known = await userByPhone(env.DB, DEMO.northTeacher.phone);
    expect(await userByPhone(env.DB_SHARD_1, DEMO.northTeacher.phone)).toEqual(known);
    // The school's lists: its parents (its own copy of the known parent's name), the family, the student's guardians.
    expect((await parentNames(t, school)).sort()).toEqual(["Nora Fragmento", "Pablo Fragmento"]);
    const families = await t.request("/api/v1/family", { token, school });
    const [listed] = ((await families.json()) as { data: { id: number }[] }).data;
    const one = await t.request(`/api/v1/family/${listed?.id}`, { token, school });
    expect(one.status).toBe(200);
    const familyText = await one.text();
    expect(familyText).toContain("Pablo");
    expect(familyText).toContain("Nora");
    const studentsRes = await t.request("/api/v1/student", { token, school });
    const [student] = ((await studentsRes.json()) as { data: { id: number }[] }).data;
    const guardians = await t.request(`/api/v1/student/${student?.id}/detail`, { token, school });
    expect(guardians.status).toBe(200);
    expect(await guardians.text()).toContain("Pablo");

    // A people import: a new teacher.
    const teacher = newPhone();
    const people = await runImport(
      "/api/v1/teacher/upload-file",
      await xlsx(
        ["Phone", "First name", "Last name", "Email", "Language", "Subjects", "Employee number"],
        [[teacher, "Tere", "Fragmento", null, "es", null, null]],
      ),
    );
    expect(people).toMatchObject({ status: "completed", errors: [] });
    const tere = await userByPhone(env.DB, teacher);
    expect(tere).toMatchObject({ first_name: "Tere", last_name: "Fragmento" });
    expect(await userByPhone(env.DB_SHARD_1, teacher)).toEqual(tere);
    const staff = await t.request("/api/v1/teacher", { token, school });
    expect(staff.status).toBe(200);
    expect(await staff.text()).toContain("Tere");

    expect(await rowsOf(env.DB, school)).toEqual({});
    // The demo school's own parent is unchanged there.
    expect(await parentNames(t, NORTH, "Fragmento")).toEqual([]);
  });
});
