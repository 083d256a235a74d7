/**
 * Exports through the bulk queue: a school's every record (POST /api/v1/school/{id}/export) and a
 * person's own data (POST /api/v1/user/me/export), written as gzipped JSON lines to R2 by the bulk
 * consumer, downloaded through a presigned URL. The seed has schools 1 and 2, and in school 1 the
 * parent (user 4: students 1 and 2001) and other families.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { dumpTables, schoolTables } from "../src/db/dump";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { documents } from "../src/db/schema/document";
import worker from "../src/index";
import { DEMO, makeTestApp, problem, recordingBulkQueue } from "./helpers";

const { sent, queue: recordingQueue } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk: recordingQueue } });

type Export = {
  id: number;
  entity: string;
  status: string;
  documentId: number;
  totalRows: number;
  processedRows: number;
  createdBy: number | null;
  download: { url: string; method: string; expiresAt: string } | null;
};
type Line = {
  table?: string;
  row?: Record<string, unknown>;
  object?: string;
  export?: string;
  school?: number;
  user?: number;
};

let north: string; // the north admin (school.export in school 1)
let south: string; // the south admin (school 2)
let teacher: string; // a teacher of school 1: no school.export
let parent: string; // the north parent, user 4
let otherParent: string; // user 1016, a parent of another family in school 1
let superAdmin: string;

beforeAll(async () => {
  north = await t.token(DEMO.northAdmin.id, { 1: ["school.export", "bulk-process.read", "document.read"] });
  south = await t.token(DEMO.southAdmin.id, { 2: ["school.export"] });
  teacher = await t.token(DEMO.northTeacher.id, { 1: ["bulk-process.read", "bulk-process.write", "document.read"] });
  parent = await t.token(DEMO.northParent.id, { 1: [] });
  otherParent = await t.token(1016, { 1: [] });
  superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
});

/** Delivers messages to the Worker's real queue handler, as the Queues runtime would. */
async function deliver(messages: { id: string; body: unknown }[]) {
  const batch = createMessageBatch(
    "school-bulk",
    messages.map((m) => ({ ...m, timestamp: new Date(), attempts: 1 })),
  );
  const ctx = createExecutionContext();
  await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

/** The lines of an export's file, read from R2 at its document's key. */
async function linesOf(process: Export, school = 1): Promise<Line[]> {
  // The document row is the school's: in its database (docs/scaling.md "Shards").
  const [doc] = await (await t.schoolDb(school)).select().from(documents).where(eq(documents.id, process.documentId));
  if (!doc) throw new Error("no document");
  const object = await env.DOCUMENTS.get(doc.slug);
  if (!object) throw new Error(`no object at ${doc.slug}`);
  const text = await new Response(object.body.pipeThrough(new DecompressionStream("gzip"))).text();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line);
}

async function startSchool(school: number, token: string, header?: number) {
  const res = await t.request(`/api/v1/school/${school}/export`, { method: "POST", token, school: header });
  expect(res.status, await res.clone().text()).toBe(202);
  return (await res.json()) as Export;
}

const rowsOf = (lines: Line[], table: string) => lines.filter((l) => l.table === table).map((l) => l.row ?? {});

describe("school export", () => {
  let exported: Export;
  let lines: Line[];

  it("answers 202 with the queued process, sends it to the bulk queue, and its GET answers a download once written", async () => {
    exported = await startSchool(1, north);
    expect(exported).toMatchObject({ entity: "school-export", status: "queued", createdBy: 2, download: null });
    expect(sent.at(-1)).toEqual({ bulkProcessId: exported.id, schoolId: 1 });

    const result = await deliver([{ id: `school-${exported.id}`, body: sent.at(-1) }]);
    expect(result.retryMessages).toEqual([]);
    const res = await t.request(`/api/v1/school/1/export/${exported.id}`, { token: north });
    expect(res.status).toBe(200);
    const done = (await res.json()) as Export;
    expect(done.status).toBe("completed");
    expect(done.download?.method).toBe("GET");
    expect(done.download?.url).toContain(`/1/documents/export-school-`);
    lines = await linesOf(done);
    expect(done.totalRows).toBe(lines.length);
  });

  it("holds the school's own row and its rows of every table, and nothing of another school", () => {
    expect(lines[0]).toMatchObject({ export: "school", school: 1, format: 1 });
    expect(rowsOf(lines, "school").map((r) => r.id)).toEqual([1]);
    const students = rowsOf(lines, "student");
    expect(students.map((r) => r.id)).toEqual(expect.arrayContaining([1, 2001, 2002]));
    expect(rowsOf(lines, "family").length).toBeGreaterThan(1);
    const withSchool = lines.filter((l) => l.row && "school_id" in l.row);
    expect(withSchool.length).toBeGreaterThan(100);
    expect(withSchool.filter((l) => l.row?.school_id !== 1)).toEqual([]);
    // No user rows: users are the platform's (their school copy is school_person).
    expect(rowsOf(lines, "user")).toEqual([]);
    // Objects are of the school's prefix only.
    for (const l of lines.filter((l) => l.object !== undefined)) expect(l.object?.startsWith("1/")).toBe(true);
  });

  it("its file is listed by key in its own lines, with the documents' keys", async () => {
    const keys = lines.filter((l) => l.object !== undefined).map((l) => l.object);
    const slugs = rowsOf(lines, "document").map((r) => r.slug);
    expect(slugs.length).toBeGreaterThan(0);
    expect(keys).toEqual(expect.arrayContaining(slugs));
  });

  it("the other school's export holds its rows and none of the first school's", async () => {
    const other = await startSchool(2, south);
    await deliver([{ id: `school-${other.id}`, body: sent.at(-1) }]);
    const res = await t.request(`/api/v1/school/2/export/${other.id}`, { token: south });
    const done = (await res.json()) as Export;
    expect(done.status).toBe("completed");
    const its = await linesOf(done, 2);
    expect(rowsOf(its, "school").map((r) => r.id)).toEqual([2]);
    const withSchool = its.filter((l) => l.row && "school_id" in l.row);
    expect(withSchool.length).toBeGreaterThan(0);
    expect(withSchool.filter((l) => l.row?.school_id !== 2)).toEqual([]);
    expect(rowsOf(its, "student").some((r) => r.id === 1)).toBe(false);
  });

  it("every table with a school_id column in the database is exported", async () => {
    const tables = await t.db.all<{ name: string }>(
      sql`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%${sql.raw("`school_id`")}%'`,
    );
    const exported = new Set(schoolTables().map((x) => x.name));
    const left = tables.map((x) => x.name).filter((name) => !exported.has(name));
    // Sign-in, jobs and development tables are never exported (src/db/dump.ts).
    expect(left).toEqual([]);
    expect(dumpTables().some((x) => x.name === "refresh_token")).toBe(false);
  });

  it("a redelivered message, or another message for the same process, writes nothing again", async () => {
    const again = await startSchool(1, north);
    const body = sent.at(-1);
    const put = vi.spyOn(env.DOCUMENTS, "put");
    try {
      await deliver([{ id: `redo-${again.id}`, body }]);
      expect(put).toHaveBeenCalledTimes(1);
      const first = (await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, again.id)))[0];
      await deliver([{ id: `redo-${again.id}`, body }]);
      await deliver([{ id: `redo-other-${again.id}`, body }]);
      expect(put).toHaveBeenCalledTimes(1);
      const after = (await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, again.id)))[0];
      expect(after).toEqual(first);
    } finally {
      put.mockRestore();
    }
  });

  it("the file is not a document the document routes serve (list, read, sign)", async () => {
    const [doc] = await t.db.select().from(documents).where(eq(documents.id, exported.documentId));
    const read = await t.request(`/api/v1/documents/${exported.documentId}`, { token: north });
    expect(read.status).toBe(404);
    const signed = await t.request("/api/v1/documents/documents/signed-url", {
      method: "POST",
      token: north,
      body: { method: "GET", slug: doc?.slug, name: "x", contentType: "application/gzip" },
    });
    expect(signed.status).toBe(404);
    const list = await t.request("/api/v1/documents?pageSize=100", { token: north });
    const page = (await list.json()) as { data: { id: number }[] };
    expect(page.data.some((d) => d.id === exported.documentId)).toBe(false);
  });

  it("access: a school admin's own school only (another is a 404), a teacher 403, the super-admin any school", async () => {
    const other = await t.request("/api/v1/school/2/export", { method: "POST", token: north });
    expect(other.status).toBe(404);
    expect((await problem(other)).detail).toBe("School 2 not found");
    const otherRead = await t.request(`/api/v1/school/2/export/${exported.id}`, { token: north });
    expect(otherRead.status).toBe(404);
    // The south admin cannot read school 1's export through school 2 either.
    const southRead = await t.request(`/api/v1/school/2/export/${exported.id}`, { token: south });
    expect(southRead.status).toBe(404);
    const byTeacher = await t.request("/api/v1/school/1/export", { method: "POST", token: teacher });
    expect(byTeacher.status).toBe(403);
    const byParent = await t.request(`/api/v1/school/1/export/${exported.id}`, { token: parent });
    expect(byParent.status).toBe(403);
    const bySuper = await startSchool(2, superAdmin);
    expect(sent.at(-1)).toEqual({ bulkProcessId: bySuper.id, schoolId: 2 });
    const missing = await t.request("/api/v1/school/999/export", { method: "POST", token: superAdmin });
    expect(missing.status).toBe(404);
  });

  it("an export cannot be started as an import (POST /api/v1/bulk-process refuses its entity)", async () => {
    const res = await t.request("/api/v1/bulk-process", {
      method: "POST",
      token: teacher,
      body: { entity: "school-export", documentId: exported.documentId },
    });
    expect(res.status).toBe(400);
  });
});

describe("the README's export walk (Export a school)", () => {
  it("POST, the bulk queue, GET, then the presigned URL downloads the gzipped lines", async () => {
    // The README signs in the school admin of school 1 through `npm run token`: a token of theirs.
    const admin = await t.signIn(DEMO.northAdmin.phone);
    const res = await t.request("/api/v1/school/1/export", { method: "POST", token: admin.accessToken });
    expect(res.status).toBe(202);
    const started = (await res.json()) as Export;
    expect(started.status).toBe("queued");
    await deliver([{ id: `readme-${started.id}`, body: sent.at(-1) }]);
    const polled = await t.request(`/api/v1/school/1/export/${started.id}`, { token: admin.accessToken });
    const url = ((await polled.json()) as Export).download?.url;
    expect(url).toBeDefined();
    // The presigned URL, answered by the app as the dev server answers it (S3_ENDPOINT /dev/s3).
    const file = await t.app.request(url ?? "", {}, env);
    expect(file.status).toBe(200);
    const body = file.body;
    if (!body) throw new Error("no body");
    const text = await new Response(body.pipeThrough(new DecompressionStream("gzip"))).text();
    const [first, second] = text.split("\n").map((l) => (l === "" ? undefined : JSON.parse(l)));
    expect(first).toMatchObject({ export: "school", school: 1, format: 1 });
    expect(second).toMatchObject({ table: "school", row: { id: 1, name: "Northside Demo School" } });
  });
});

describe("a person's own export", () => {
  async function exportOf(token: string) {
    const res = await t.request("/api/v1/user/me/export", { method: "POST", token });
    expect(res.status, await res.clone().text()).toBe(202);
    const started = (await res.json()) as Export;
    await deliver([{ id: `me-${started.id}`, body: sent.at(-1) }]);
    const read = await t.request(`/api/v1/user/me/export/${started.id}`, { token });
    expect(read.status).toBe(200);
    const done = (await read.json()) as Export;
    expect(done.status).toBe("completed");
    expect(done.download).not.toBeNull();
    return { done, lines: await linesOf(done) };
  }

  let mine: { done: Export; lines: Line[] };

  it("holds the person's user row, their parent and guardian rows and their children, and no one else's", async () => {
    // A device of the parent's, whose token value the export leaves out.
    const device = await t.request("/api/v1/device-token", {
      method: "POST",
      token: parent,
      body: { token: "secret-device-token-of-paula", platform: "android" },
    });
    expect(device.status).toBeLessThan(300);
    mine = await exportOf(parent);
    const { lines } = mine;
    expect(lines[0]).toMatchObject({ export: "user", school: 1, user: 4 });
    expect(rowsOf(lines, "user").map((r) => r.id)).toEqual([4]);
    expect(rowsOf(lines, "parent").map((r) => r.user_id)).toEqual([4]);
    const parentId = rowsOf(lines, "parent")[0]?.id;
    expect(rowsOf(lines, "guardian").every((r) => r.parent_id === parentId)).toBe(true);
    expect(
      rowsOf(lines, "student")
        .map((r) => r.id)
        .sort(),
    ).toEqual([1, 2001]);
    const devices = rowsOf(lines, "device_token");
    expect(devices.length).toBeGreaterThan(0);
    expect(devices.every((r) => r.token === null && r.user_id === 4)).toBe(true);
    expect(JSON.stringify(lines)).not.toContain("secret-device-token-of-paula");
  });

  it("no row names another family's student, family or parent, nor another school", async () => {
    const { lines } = mine;
    const students = new Set(rowsOf(lines, "student").map((r) => r.id));
    const families = new Set(rowsOf(lines, "family").map((r) => r.id));
    const parents = new Set(rowsOf(lines, "parent").map((r) => r.id));
    for (const l of lines.filter((x) => x.row)) {
      const row = l.row ?? {};
      if (row.school_id !== undefined) expect(row.school_id, l.table).toBe(1);
      if (row.student_id != null) expect(students.has(row.student_id), `${l.table} ${row.id}`).toBe(true);
      if (row.family_id != null) expect(families.has(row.family_id), `${l.table} ${row.id}`).toBe(true);
      if (row.parent_id != null) expect(parents.has(row.parent_id), `${l.table} ${row.id}`).toBe(true);
    }
    // Another family's student of the same school (2002, user 1016's) is in no line.
    expect(students.has(2002)).toBe(false);
    const other = await exportOf(otherParent);
    expect(rowsOf(other.lines, "user").map((r) => r.id)).toEqual([1016]);
    expect(rowsOf(other.lines, "student").some((r) => r.id === 1 || r.id === 2001)).toBe(false);
    expect(other.lines.some((l) => l.row?.user_id === 4)).toBe(false);
  });

  it("is the person's own: another user's GET of it is a 404", async () => {
    const res = await t.request(`/api/v1/user/me/export/${mine.done.id}`, { token: otherParent });
    expect(res.status).toBe(404);
    const asSchoolExport = await t.request(`/api/v1/school/1/export/${mine.done.id}`, { token: north });
    expect(asSchoolExport.status).toBe(404);
  });
});
