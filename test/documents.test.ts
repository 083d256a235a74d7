/**
 * Documents: CRUD scoped to the current school, slugs under the school's own
 * prefix, and presigned URLs that really upload to and download from an S3 server (s3rver, started
 * by test/node/global-setup.ts).
 */

import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import type { Page } from "../src/lib/pagination";
import { s3Signer } from "../src/lib/s3";
import { SIGNED_URL_SECONDS } from "../src/modules/document/signed-url";
import { uniq } from "./fixtures";
import { makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/documents";

type Doc = {
  id: number;
  createdAt: string;
  updatedAt: string;
  name: string;
  slug: string;
  contentType: string | null;
  entity: string;
};
type Signed = Doc & { url: string; method: "GET" | "PUT"; expiresAt: string; headers: Record<string, string> };
type DocPage = Page<Doc>;

const northAdmin = (t: TestApp) => t.token(2, { [NORTH]: "all" });
const southAdmin = (t: TestApp) => t.token(5, { [SOUTH]: "all" });
const reader = (t: TestApp) => t.token(3, { [NORTH]: ["document.read"] });

const slugOf = (school: number, file = `${uniq("file")}.pdf`) => `${school}/documents/${file}`;

async function create(t: TestApp, body: { name: string; slug: string }, school = NORTH) {
  const token = school === NORTH ? await northAdmin(t) : await southAdmin(t);
  const res = await t.request(PATH, { method: "POST", token, school, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Doc;
}

/** Sends `body` as the caller and expects a 400 naming `field`. */
async function expect400(res: Response, field: string) {
  expect(res.status).toBe(400);
  const body = await problem(res);
  expect(body.errors?.map((e) => e.path)).toContain(field);
  return body;
}

describe("documents CRUD", () => {
  it("creates, reads, updates and deletes a document of the current school", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const slug = slugOf(NORTH, "report-card.pdf");
    const created = await create(t, { name: "Report card", slug });
    expect(created).toMatchObject({ name: "Report card", slug, contentType: null, entity: "documents" });
    expect(created.id).toBeGreaterThan(0);
    expect(created.createdAt).toBe(t.clock.now().toISOString());

    const got = await t.request(`${PATH}/${created.id}`, { token, school: NORTH });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(created);

    t.clock.advance(60);
    const renamed = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: "Report card (final)" },
    });
    expect(renamed.status).toBe(204);
    expect(await renamed.text()).toBe("");
    const newSlug = slugOf(NORTH, "report-card-final.pdf");
    const moved = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { slug: newSlug },
    });
    expect(moved.status).toBe(204);
    const after = (await (await t.request(`${PATH}/${created.id}`, { token, school: NORTH })).json()) as Doc;
    expect(after).toMatchObject({ name: "Report card (final)", slug: newSlug, createdAt: created.createdAt });
    expect(after.updatedAt).toBe(t.clock.now().toISOString());

    const deleted = await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH });
    expect(deleted.status).toBe(204);
    expect((await t.request(`${PATH}/${created.id}`, { token, school: NORTH })).status).toBe(404);
    const again = await t.request(`${PATH}/${created.id}`, { method: "DELETE", token, school: NORTH });
    expect(again.status).toBe(404);
    await problem(again);
  });

  it("lets a reader read but not write", async () => {
    const t = makeTestApp();
    const doc = await create(t, { name: "Menu", slug: slugOf(NORTH) });
    const token = await reader(t);
    expect((await t.request(PATH, { token, school: NORTH })).status).toBe(200);
    expect((await t.request(`${PATH}/${doc.id}`, { token, school: NORTH })).status).toBe(200);
    const writes = [
      t.request(PATH, { method: "POST", token, school: NORTH, body: { name: "x", slug: slugOf(NORTH) } }),
      t.request(`${PATH}/${doc.id}`, { method: "PUT", token, school: NORTH, body: { name: "x" } }),
      t.request(`${PATH}/${doc.id}`, { method: "DELETE", token, school: NORTH }),
    ];
    for (const res of await Promise.all(writes)) {
      expect(res.status).toBe(403);
      expect((await problem(res)).detail).toContain("document.write");
    }
  });

  it("refuses a duplicate slug with 409, on create and on update", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const slug = slugOf(NORTH);
    await create(t, { name: "First", slug });
    const dup = await t.request(PATH, { method: "POST", token, school: NORTH, body: { name: "Second", slug } });
    expect(dup.status).toBe(409);
    expect((await problem(dup)).detail).toMatch(/slug already exists/);

    const other = await create(t, { name: "Other", slug: slugOf(NORTH) });
    const clash = await t.request(`${PATH}/${other.id}`, { method: "PUT", token, school: NORTH, body: { slug } });
    expect(clash.status).toBe(409);
    await problem(clash);
  });

  it("validates the create body", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const post = (body: unknown, headers?: Record<string, string>) =>
      t.request(PATH, { method: "POST", token, school: NORTH, body, headers });
    const slug = slugOf(NORTH);

    await expect400(await post({ slug }), "name");
    await expect400(await post({ name: "x" }), "slug");
    await expect400(await post({ name: "   ", slug }), "name");
    await expect400(await post({ name: "x".repeat(201), slug }), "name");
    await expect400(await post({ name: 42, slug }), "name");
    await expect400(await post({ name: "x", slug: 42 }), "slug");
    await expect400(await post({ name: "x", slug, schoolId: SOUTH }), "schoolId");
    await expect400(await post({ name: "x", slug, contentType: "application/pdf" }), "contentType");
    await expect400(await post([]), "");
    const badJson = await post("{ not json", { "content-type": "application/json" });
    expect(badJson.status).toBe(400);
    await problem(badJson);
    const empty = await t.request(PATH, { method: "POST", token, school: NORTH });
    expect(empty.status).toBe(400);
    await problem(empty);
    const text = await post("name=x", { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    await problem(text);
  });

  it("accepts only slugs of the form {schoolId}/documents/{file name}", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const post = (slug: string) => t.request(PATH, { method: "POST", token, school: NORTH, body: { name: "x", slug } });
    const malformed = [
      "",
      "report.pdf",
      "documents/report.pdf",
      "/1/documents/report.pdf",
      "1/documents/",
      "1/files/report.pdf",
      "1/Documents/report.pdf",
      "01/documents/report.pdf",
      "1/documents/a/b.pdf",
      "1/documents/..",
      "1/documents/../2/documents/x.pdf",
      "1/documents/a..pdf",
      "1/documents/a\\b.pdf",
      "1/documents/a\u0000b.pdf",
      "1/documents/line\nbreak.pdf",
      "1/documents/del\u007f.pdf",
      `1/documents/${"x".repeat(201)}`,
      " 1/documents/x.pdf",
    ];
    for (const slug of malformed) {
      const res = await post(slug);
      expect(res.status, JSON.stringify(slug)).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toContain("slug");
    }
    // Any file name that is not a path: spaces, accents, 200 characters.
    for (const file of ["Boletín de notas 2026.pdf", "x".repeat(200), "a.b-c_d (1).PDF", "100%?#&.txt"]) {
      expect((await post(slugOf(NORTH, file))).status, file).toBe(201);
    }
  });

  it("refuses a slug under another school's prefix with 400, naming the allowed prefix", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const res = await t.request(PATH, {
      method: "POST",
      token,
      school: NORTH,
      body: { name: "x", slug: slugOf(SOUTH) },
    });
    const body = await expect400(res, "slug");
    expect(body.errors?.[0]?.message).toContain("1/documents/");

    const doc = await create(t, { name: "Mine", slug: slugOf(NORTH) });
    const move = await t.request(`${PATH}/${doc.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { slug: slugOf(SOUTH) },
    });
    await expect400(move, "slug");
    // A super-admin acting in school 1 is held to school 1's prefix too.
    const sa = await t.token(1, {}, true);
    const bySa = await t.request(PATH, {
      method: "POST",
      token: sa,
      school: NORTH,
      body: { name: "x", slug: slugOf(SOUTH) },
    });
    await expect400(bySa, "slug");
  });

  it("validates the update body", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const doc = await create(t, { name: "Doc", slug: slugOf(NORTH) });
    const put = (body: unknown) => t.request(`${PATH}/${doc.id}`, { method: "PUT", token, school: NORTH, body });

    const empty = await put({});
    expect(empty.status).toBe(400);
    expect((await problem(empty)).detail).toContain("at least one field");
    const none = await t.request(`${PATH}/${doc.id}`, { method: "PUT", token, school: NORTH });
    expect(none.status).toBe(400);
    await problem(none);
    await expect400(await put({ name: "x", entity: "students" }), "entity");
    await expect400(await put({ name: "" }), "name");
    await expect400(await put({ name: null }), "name");
    await expect400(await put({ slug: "1/documents/../x" }), "slug");
    const unchanged = (await (await t.request(`${PATH}/${doc.id}`, { token, school: NORTH })).json()) as Doc;
    expect(unchanged).toEqual(doc);
  });

  it("treats another school's document as not found (get, update, delete) and leaves it alone", async () => {
    const t = makeTestApp();
    const theirs = await create(t, { name: "South only", slug: slugOf(SOUTH) }, SOUTH);
    const token = await northAdmin(t);
    const tries = [
      t.request(`${PATH}/${theirs.id}`, { token, school: NORTH }),
      t.request(`${PATH}/${theirs.id}`, { method: "PUT", token, school: NORTH, body: { name: "Hijacked" } }),
      t.request(`${PATH}/${theirs.id}`, { method: "DELETE", token, school: NORTH }),
    ];
    for (const res of await Promise.all(tries)) {
      expect(res.status).toBe(404);
      await problem(res);
    }
    const still = await t.request(`${PATH}/${theirs.id}`, { token: await southAdmin(t), school: SOUTH });
    expect(await still.json()).toEqual(theirs);
  });

  it("refuses to delete a document a bulk process was made from (409), and keeps it", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const doc = await create(t, { name: "students.xlsx", slug: slugOf(NORTH, `${uniq("students")}.xlsx`) });
    const [bulk] = await t.db
      .insert(bulkProcesses)
      .values({ schoolId: NORTH, entity: "students", documentId: doc.id })
      .returning({ id: bulkProcesses.id });
    const res = await t.request(`${PATH}/${doc.id}`, { method: "DELETE", token, school: NORTH });
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toContain(`bulk process ${bulk?.id}`);
    expect((await t.request(`${PATH}/${doc.id}`, { token, school: NORTH })).status).toBe(200);
  });
});

describe("documents list", () => {
  it("pages, filters by name and sorts, within the current school only", async () => {
    const t = makeTestApp();
    const tag = uniq("lst").replaceAll("-", "");
    const names = [`${tag} Bravo`, `${tag} alpha`, `${tag} Charlie 100%`];
    const mine: Doc[] = [];
    for (const name of names) {
      mine.push(await create(t, { name, slug: slugOf(NORTH) }));
      t.clock.advance(1);
    }
    const theirs = await create(t, { name: `${tag} south`, slug: slugOf(SOUTH) }, SOUTH);
    const token = await reader(t);
    const list = async (query: string) => {
      const res = await t.request(`${PATH}?${query}`, { token, school: NORTH });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as DocPage;
    };

    const all = await list("pageSize=100");
    expect(all.data.map((d) => d.id)).toEqual(expect.arrayContaining(mine.map((d) => d.id)));
    expect(all.data.map((d) => d.id)).not.toContain(theirs.id);

    const found = await list(`name=${encodeURIComponent(tag)}&sort=name`);
    expect(found.total).toBe(3);
    // SQLite orders text by bytes: upper case first.
    expect(found.data.map((d) => d.name)).toEqual([names[0], names[2], names[1]]);
    const newest = await list(`name=${encodeURIComponent(tag)}&sort=-createdAt`);
    expect(newest.data.map((d) => d.id)).toEqual([...mine].reverse().map((d) => d.id));
    expect((await list(`name=${encodeURIComponent(`${tag} ALPHA`)}`)).data.map((d) => d.id)).toEqual([mine[1]?.id]);
    // LIKE wildcards are matched literally.
    expect((await list(`name=${encodeURIComponent("100%")}`)).data.map((d) => d.id)).toEqual([mine[2]?.id]);
    expect((await list(`name=${encodeURIComponent(`${tag}_`)}`)).total).toBe(0);
    expect((await list(`name=${encodeURIComponent(`${tag} south`)}`)).total).toBe(0);

    const first = await list(`name=${encodeURIComponent(tag)}&pageSize=2`);
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 3, lastPage: 2 });
    expect(first.next).toContain("page=2");
    expect((await list(`name=${encodeURIComponent(tag)}&pageSize=2&page=2`)).data).toHaveLength(1);
  });

  it("refuses bad list queries with 400", async () => {
    const t = makeTestApp();
    const token = await reader(t);
    const cases: [string, string][] = [
      [`name=${"x".repeat(49)}`, "name"],
      ["name=", "name"],
      ["sort=slug", "sort"],
      ["sort=-size", "sort"],
      ["sort=name,updatedAt", "sort"],
      ["pageSize=101", "pageSize"],
      ["pageSize=0", "pageSize"],
      ["page=0", "page"],
      ["page=x", "page"],
      ["schoolId=2", "schoolId"],
    ];
    for (const [query, field] of cases) {
      const res = await t.request(`${PATH}?${query}`, { token, school: NORTH });
      expect(res.status, query).toBe(400);
      expect(
        (await problem(res)).errors?.map((e) => e.path),
        query,
      ).toContain(field);
    }
    const ok = await t.request(`${PATH}?name=${"x".repeat(48)}`, { token, school: NORTH });
    expect(ok.status).toBe(200);
  });
});

describe("signed URLs", () => {
  /** An app whose signer points at the local S3 server, with the clock at real time (s3rver's). */
  function s3App() {
    const t = makeTestApp({ signer: s3Signer({ ...loadConfig(env).s3, endpoint: inject("s3Endpoint") }) });
    t.clock.current = new Date();
    return t;
  }
  const sign = async (t: TestApp, body: unknown, opts: { token?: string; entity?: string } = {}) =>
    t.request(`${PATH}/${opts.entity ?? "documents"}/signed-url`, {
      method: "POST",
      token: opts.token ?? (await northAdmin(t)),
      school: NORTH,
      body,
    });

  it("uploads with a PUT URL and downloads the same bytes with a GET URL", async () => {
    const t = s3App();
    const slug = slugOf(NORTH, `Boletín ${uniq("notas")}.pdf`);
    const bytes = crypto.getRandomValues(new Uint8Array(4096));

    const res = await sign(t, { contentType: "application/pdf", slug, name: "Boletín" }, { entity: "students" });
    expect(res.status, await res.clone().text()).toBe(200);
    const put = (await res.json()) as Signed;
    expect(put).toMatchObject({
      name: "Boletín",
      slug,
      contentType: "application/pdf",
      entity: "students",
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      expiresAt: new Date(t.clock.now().getTime() + SIGNED_URL_SECONDS * 1000).toISOString(),
    });
    expect(SIGNED_URL_SECONDS).toBe(300);
    const url = new URL(put.url);
    expect(`${url.origin}/`).toBe(`${inject("s3Endpoint")}/`);
    expect(url.pathname).toBe(`/school-documents/${slug.split("/").map(encodeURIComponent).join("/")}`);
    expect(url.searchParams.get("X-Amz-Expires")).toBe("300");
    expect(url.searchParams.get("X-Amz-SignedHeaders")?.split(";")).toContain("content-type");

    const uploaded = await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes });
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);

    // The upload URL recorded the document: it is in the school's list.
    const token = await northAdmin(t);
    const got = (await (await t.request(`${PATH}/${put.id}`, { token, school: NORTH })).json()) as Doc;
    expect(got).toMatchObject({ slug, name: "Boletín", contentType: "application/pdf", entity: "students" });

    const getRes = await sign(t, { contentType: "application/pdf", slug, name: "Boletín", method: "GET" });
    expect(getRes.status).toBe(200);
    const get = (await getRes.json()) as Signed;
    expect(get).toMatchObject({ id: put.id, method: "GET", headers: {} });
    const downloaded = await fetch(get.url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get("content-type")).toBe("application/pdf");
    expect(new Uint8Array(await downloaded.arrayBuffer())).toEqual(bytes);
  });

  it("updates the same document when an upload URL is asked again for its slug", async () => {
    const t = s3App();
    const slug = slugOf(NORTH);
    const first = (await (await sign(t, { contentType: "application/pdf", slug, name: "v1" })).json()) as Signed;
    t.clock.advance(30);
    const res = await sign(t, { contentType: "image/png", slug, name: "v2", method: "PUT" }, { entity: "tasks" });
    expect(res.status).toBe(200);
    const second = (await res.json()) as Signed;
    expect(second).toMatchObject({ id: first.id, name: "v2", contentType: "image/png", entity: "tasks" });
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.updatedAt).toBe(t.clock.now().toISOString());
    expect(second.headers).toEqual({ "content-type": "image/png" });
    // A document created by POST gets its content type from its first upload URL.
    const posted = await create(t, { name: "Posted", slug: slugOf(NORTH) });
    const signed = (await (
      await sign(t, { contentType: "text/csv", slug: posted.slug, name: "Posted" })
    ).json()) as Signed;
    expect(signed).toMatchObject({ id: posted.id, contentType: "text/csv" });
  });

  it("signs the content type, so an upload must send exactly the declared one", async () => {
    const t = s3App();
    const slug = slugOf(NORTH);
    const pdf = (await (await sign(t, { contentType: "application/pdf", slug, name: "x" })).json()) as Signed;
    const png = (await (await sign(t, { contentType: "image/png", slug, name: "x" })).json()) as Signed;
    // Same key, same instant: only the signed content type differs, and so does the signature.
    expect(new URL(pdf.url).searchParams.get("X-Amz-SignedHeaders")).toBe("content-type;host");
    expect(new URL(pdf.url).searchParams.get("X-Amz-Signature")).not.toBe(
      new URL(png.url).searchParams.get("X-Amz-Signature"),
    );
    // s3rver 3.7 does not verify V4 signatures, so it cannot show the refusal of a mismatched
    // content type (R2 and S3 answer 403 SignatureDoesNotMatch); it does enforce expiry (below).
    // The dev S3 endpoint verifies them: test/dev-s3.test.ts shows that refusal.
  });

  it("is refused by the S3 server once expired", async () => {
    const t = s3App();
    t.clock.current = new Date(Date.now() - (SIGNED_URL_SECONDS + 60) * 1000);
    const slug = slugOf(NORTH);
    const put = (await (await sign(t, { contentType: "text/plain", slug, name: "late" })).json()) as Signed;
    const late = await fetch(put.url, { method: "PUT", headers: put.headers, body: "too late" });
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("Request has expired");

    const get = (await (
      await sign(t, { contentType: "text/plain", slug, name: "late", method: "GET" })
    ).json()) as Signed;
    const lateGet = await fetch(get.url);
    expect(lateGet.status).toBe(403);
    expect(await lateGet.text()).toContain("Request has expired");
  });

  it("needs document.write to upload, document.read to download", async () => {
    const t = s3App();
    const slug = slugOf(NORTH);
    const token = await reader(t);
    const upload = await sign(t, { contentType: "application/pdf", slug, name: "x" }, { token });
    expect(upload.status).toBe(403);
    expect((await problem(upload)).detail).toContain("Missing permission document.write");
    const explicit = await sign(t, { contentType: "application/pdf", slug, name: "x", method: "PUT" }, { token });
    expect(explicit.status).toBe(403);
    await problem(explicit);
    // Nothing was recorded by the refused upload.
    const list = (await (await t.request(PATH, { token, school: NORTH })).json()) as DocPage;
    expect(list.data.map((d) => d.slug)).not.toContain(slug);

    await sign(t, { contentType: "application/pdf", slug, name: "x" });
    const download = await sign(t, { contentType: "application/pdf", slug, name: "x", method: "GET" }, { token });
    expect(download.status).toBe(200);
    const none = await sign(
      t,
      { contentType: "application/pdf", slug, name: "x", method: "GET" },
      {
        token: await t.token(4, { [NORTH]: ["school.read"] }),
      },
    );
    expect(none.status).toBe(403);
    await problem(none);
  });

  it("refuses a slug under another school's prefix, and records nothing there", async () => {
    const t = s3App();
    const slug = slugOf(SOUTH);
    for (const method of ["PUT", "GET"]) {
      const res = await sign(t, { contentType: "application/pdf", slug, name: "x", method });
      const body = await expect400(res, "slug");
      expect(body.errors?.[0]?.message).toContain("1/documents/");
    }
    const south = (await (await t.request(PATH, { token: await southAdmin(t), school: SOUTH })).json()) as DocPage;
    expect(south.data.map((d) => d.slug)).not.toContain(slug);
  });

  it("answers 404 to a download URL for a slug without a document", async () => {
    const t = s3App();
    const res = await sign(t, { contentType: "application/pdf", slug: slugOf(NORTH), name: "x", method: "GET" });
    expect(res.status).toBe(404);
    await problem(res);
  });

  it("validates the body and the entity", async () => {
    const t = s3App();
    const ok = { contentType: "application/pdf", slug: slugOf(NORTH), name: "x" };
    const cases: [unknown, string][] = [
      [{ ...ok, method: "POST" }, "method"],
      [{ ...ok, method: "DELETE" }, "method"],
      [{ ...ok, method: "get" }, "method"],
      [{ ...ok, method: null }, "method"],
      [{ ...ok, contentType: "notamediatype" }, "contentType"],
      [{ ...ok, contentType: "application/" }, "contentType"],
      [{ ...ok, contentType: "/pdf" }, "contentType"],
      [{ ...ok, contentType: "application/pdf; charset=binary" }, "contentType"],
      [{ ...ok, contentType: "text/plain\r\nx-evil: 1" }, "contentType"],
      [{ ...ok, contentType: `application/${"x".repeat(300)}` }, "contentType"],
      [{ ...ok, contentType: undefined }, "contentType"],
      [{ ...ok, slug: undefined }, "slug"],
      [{ ...ok, slug: "1/documents/../../etc/passwd" }, "slug"],
      [{ ...ok, name: undefined }, "name"],
      [{ ...ok, name: "" }, "name"],
      [{ ...ok, expiresIn: 86400 }, "expiresIn"],
      [{ ...ok, url: "https://evil.example/" }, "url"],
    ];
    for (const [body, field] of cases) {
      const res = await sign(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        (await problem(res)).errors?.map((e) => e.path),
        JSON.stringify(body),
      ).toContain(field);
    }
    for (const entity of ["Documents", "1docs", "docs_x", "x".repeat(41), "-docs"]) {
      const res = await sign(t, ok, { entity });
      expect(res.status, entity).toBe(400);
      expect(
        (await problem(res)).errors?.map((e) => e.path),
        entity,
      ).toContain("entity");
    }
    const empty = await t.request(`${PATH}/documents/signed-url`, {
      method: "POST",
      token: await northAdmin(t),
      school: NORTH,
    });
    expect(empty.status).toBe(400);
    await problem(empty);
  });
});
