/**
 * The recipe of a resource (docs/architecture.md "A resource") holds: its files (test/recipe/: the
 * table and its accessor, the module folder, its migration with the permission rows db:builtins
 * derives) mounted on a test app as one registry line mounts them, then create, read, list, update
 * and delete through the API; another school's note is a 404; a role without the permission a 403.
 * test/node/recipe.test.ts keeps the doc's code the same as these files and the rows derived.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { idRangeStatements } from "../src/db/shards";
import { migrationStatements } from "../src/db/sql-script";
import { type Doc, derivedFixture } from "./fixtures";
import { DEMO, makeTestApp } from "./helpers";
import note from "./recipe/note";

const migration = Object.values(
  import.meta.glob<string>("./recipe/migration.sql", { query: "?raw", import: "default", eager: true }),
)[0];

const t = makeTestApp({}, [note]);
let admin: string;
let southAdmin: string;
let teacher: string;
let parent: string;

beforeAll(async () => {
  if (!migration) throw new Error("test/recipe/migration.sql not found");
  // The recipe's migration, as `npm run db:migrate` applies one: to every database (the platform's
  // and each shard, docs/scaling.md "Shards"), the table, then its permission rows; on a shard its
  // new table's ids start in the shard's range (src/db/shards.ts `idRangeStatements`).
  const every: [string, D1Database][] = [
    ["DB", env.DB],
    ["DB_SHARD_1", env.DB_SHARD_1],
  ];
  await Promise.all(
    every.map(([binding, db]) =>
      db.batch([...migrationStatements(migration), ...idRangeStatements(binding)].map((s) => db.prepare(s))),
    ),
  );
  // Signed in through the real flow: the tokens carry what the derived rows grant each role.
  admin = (await t.signIn(DEMO.northAdmin.phone)).accessToken;
  southAdmin = (await t.signIn(DEMO.southAdmin.phone)).accessToken;
  teacher = (await t.signIn(DEMO.northTeacher.phone)).accessToken;
  parent = (await t.signIn(DEMO.northParent.phone)).accessToken;
});

type Note = { id: number; title: string; body: string | null; createdAt: string; updatedAt: string };

describe("a resource made from the recipe", () => {
  it("is created, read, listed, updated and deleted, each write with its audit row", async () => {
    const created = await t.request("/api/v1/note", {
      method: "POST",
      token: admin,
      school: 1,
      body: { title: "Bus 3 is late on Fridays" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const made = (await created.json()) as Note;
    expect(made).toMatchObject({ title: "Bus 3 is late on Fridays", body: null });

    const read = await t.request(`/api/v1/note/${made.id}`, { token: admin, school: 1 });
    expect(read.status).toBe(200);
    expect(((await read.json()) as Note).title).toBe("Bus 3 is late on Fridays");

    const list = await t.request("/api/v1/note?sort=title", { token: teacher, school: 1 });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: Note[] }).data.map((n) => n.id)).toEqual([made.id]);

    const updated = await t.request(`/api/v1/note/${made.id}`, {
      method: "PUT",
      token: admin,
      school: 1,
      body: { body: "Call the driver before 3 pm" },
    });
    expect(updated.status, await updated.clone().text()).toBe(204);
    const reread = await t.request(`/api/v1/note/${made.id}`, { token: admin, school: 1 });
    expect(((await reread.json()) as Note).body).toBe("Call the driver before 3 pm");

    const removed = await t.request(`/api/v1/note/${made.id}`, { method: "DELETE", token: admin, school: 1 });
    expect(removed.status).toBe(204);
    expect((await t.request(`/api/v1/note/${made.id}`, { token: admin, school: 1 })).status).toBe(404);

    const trail = await env.DB.prepare(
      "SELECT action, changes FROM audit_log WHERE entity = 'note' AND record_id = ? AND school_id = 1 ORDER BY id",
    )
      .bind(made.id)
      .all<{ action: string; changes: string }>();
    expect(trail.results.map((r) => [r.action, JSON.parse(r.changes)])).toEqual([
      ["create", { title: { old: null, new: "Bus 3 is late on Fridays" } }],
      ["update", { body: { old: null, new: "Call the driver before 3 pm" } }],
      [
        "delete",
        {
          title: { old: "Bus 3 is late on Fridays", new: null },
          body: { old: "Call the driver before 3 pm", new: null },
        },
      ],
    ]);
  });

  it("keeps each school's notes: another school's is a 404, and not in the list", async () => {
    const theirs = await t.request("/api/v1/note", {
      method: "POST",
      token: southAdmin,
      school: 2,
      body: { title: "South only" },
    });
    expect(theirs.status).toBe(201);
    const { id } = (await theirs.json()) as Note;
    expect((await t.request(`/api/v1/note/${id}`, { token: admin, school: 1 })).status).toBe(404);
    const put = await t.request(`/api/v1/note/${id}`, {
      method: "PUT",
      token: admin,
      school: 1,
      body: { title: "Mine" },
    });
    expect(put.status).toBe(404);
    expect((await t.request(`/api/v1/note/${id}`, { method: "DELETE", token: admin, school: 1 })).status).toBe(404);
    const list = await t.request("/api/v1/note", { token: admin, school: 1 });
    expect(((await list.json()) as { data: Note[] }).data.map((n) => n.id)).not.toContain(id);
  });

  it("refuses a role without the permission: a teacher may read but not write, a parent not even read", async () => {
    const write = await t.request("/api/v1/note", { method: "POST", token: teacher, school: 1, body: { title: "No" } });
    expect(write.status).toBe(403);
    expect((await t.request("/api/v1/note", { token: parent, school: 1 })).status).toBe(403);
  });

  it("gets its fixture for the generated suites derived from the create body's examples", async () => {
    const doc = (await (await t.request("/api/openapi.json")).json()) as Doc;
    const fixture = derivedFixture(doc, "/api/v1/note/{id}");
    if (!fixture) throw new Error("no fixture derived for /api/v1/note/{id}");
    const id = await fixture.create(t, 1);
    const made = (await (await t.request(`/api/v1/note/${id}`, { token: admin, school: 1 })).json()) as Note;
    expect(made).toMatchObject({ title: "Bus 3 is late on Fridays", body: "Call the driver before 3 pm" });
    expect(fixture.bodies).toEqual({
      updateNote: { title: "Bus 3 is late on Fridays", body: "Call the driver before 3 pm" },
    });
    const put = await t.request(`/api/v1/note/${id}`, {
      method: "PUT",
      token: admin,
      school: 1,
      body: fixture.bodies?.updateNote,
    });
    expect(put.status).toBe(204);
  });
});
