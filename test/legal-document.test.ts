/**
 * Legal documents: versions per kind, drafts edited and deleted, published versions immutable,
 * the latest published version per kind, acceptance (idempotent, also under concurrency), and
 * `GET /api/v1/user/me` `legal.mustAccept` (read in the same single D1 round trip as the rest).
 * The demo data holds terms v1 and privacy v1, both published; the demo parent accepted the terms.
 */

import { env } from "cloudflare:test";
import { and, desc, eq, gt, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { users } from "../src/db/schema/core";
import { legalDocumentAcceptances, legalDocuments } from "../src/db/schema/legal-document";
import { withSearch } from "../src/db/search";
import { scriptStatements } from "../src/db/sql-script";
import { countingTestApp, DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
const path = "/api/v1/legal-document";

type LegalDocument = {
  id: number;
  kind: "terms" | "privacy";
  version: number;
  title: string;
  body: string;
  status: "draft" | "published";
  publishedAt: string | null;
  createdAt: string;
  updatedAt: string;
};
type Acceptance = {
  id: number;
  userId: number;
  legalDocumentId: number;
  kind: string;
  version: number;
  acceptedAt: string;
};
type Due = { kind: string; id: number; version: number; title: string; publishedAt: string };
type Page = { data: LegalDocument[]; total: number };

let superAdmin: string; // the platform super-admin (legal-document.write), no school
let parent: string; // the demo parent, signed in: the parent role's grants from the migrations

beforeAll(async () => {
  superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
  parent = (await t.signIn(DEMO.northParent.phone)).accessToken;
});

async function create(kind: "terms" | "privacy", title = "Terms of service", body = "# Terms\n\nText.") {
  const res = await t.request(path, { method: "POST", token: superAdmin, body: { kind, title, body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as LegalDocument;
}

const publish = (id: number, token = superAdmin) => t.request(`${path}/${id}/publish`, { method: "PATCH", token });

async function published(kind: "terms" | "privacy", title?: string) {
  const doc = await create(kind, title);
  const res = await publish(doc.id);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LegalDocument;
}

const accept = (id: number, token: string) => t.request(`${path}/${id}/accept`, { method: "POST", token });

async function last(kind: string, token = parent) {
  return t.request(`${path}/last?kind=${kind}`, { token });
}

async function me(token: string) {
  const res = await t.request("/api/v1/user/me", { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { legal: { mustAccept: Due[] } }).legal.mustAccept;
}

const auditOf = (entity: string, recordId: number) =>
  t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.entity, entity), eq(auditLog.recordId, recordId)));

/** A user with no role in any school: may still read the latest terms and accept them. */
let outsiderId = 0;
async function outsider() {
  const phone = `+1555030${String(++outsiderId).padStart(4, "0")}`;
  const [row] = await t.db
    .insert(users)
    .values(
      withSearch(users, {
        phone,
        status: "active",
        createdAt: "2026-08-01T12:00:00.000Z",
        updatedAt: "2026-08-01T12:00:00.000Z",
      }),
    )
    .returning({ id: users.id });
  const id = row?.id ?? 0;
  return { id, token: await t.token(id, {}) };
}

describe("the demo data", () => {
  it("has published terms and privacy v1, and the parent must accept the privacy policy only", async () => {
    const terms = (await (await last("terms")).json()) as LegalDocument;
    const privacy = (await (await last("privacy")).json()) as LegalDocument;
    expect(terms).toMatchObject({ id: 1, kind: "terms", version: 1, status: "published" });
    expect(privacy).toMatchObject({ id: 2, kind: "privacy", version: 1, status: "published" });
    expect(await me(parent)).toEqual([
      { kind: "privacy", id: 2, version: 1, title: "Privacy policy", publishedAt: "2026-08-01T12:00:00.000Z" },
    ]);
  });
});

describe("drafts: create, read, update, delete", () => {
  it("creates a draft with the kind's next version, audited; versions count per kind", async () => {
    const a = await create("terms", "Terms, second edition", "# Terms\n\n\tIndented, with\r\nline breaks.");
    const b = await create("terms");
    const c = await create("privacy");
    expect(a).toMatchObject({ kind: "terms", status: "draft", publishedAt: null, title: "Terms, second edition" });
    expect(a.body).toBe("# Terms\n\n\tIndented, with\r\nline breaks.");
    expect(b.version).toBe(a.version + 1);
    expect(a.version).toBeGreaterThan(1); // demo terms v1 exist
    expect(c.kind).toBe("privacy");
    expect(a.createdAt).toBe(t.clock.now().toISOString());
    const [audit] = await auditOf("legal-document", a.id);
    expect(audit).toMatchObject({ action: "create", actorType: "user", actorId: DEMO.superAdmin.id, schoolId: null });
    expect(JSON.parse(audit?.changes ?? "{}")).toMatchObject({
      kind: { old: null, new: "terms" },
      version: { old: null, new: a.version },
      status: { old: null, new: "draft" },
    });
  });

  it("refuses what a client may not set or send (400)", async () => {
    const bodies = [
      { kind: "terms", title: "T", body: "x", version: 9 },
      { kind: "terms", title: "T", body: "x", status: "published" },
      { kind: "terms", title: "T", body: "x", publishedAt: "2026-01-01T00:00:00.000Z" },
      { kind: "cookies", title: "T", body: "x" },
      { kind: "terms", title: "T", body: "   \n " },
      { kind: "terms", title: "T", body: "a\u0000b" },
      { kind: "terms", title: "T", body: "evil\u202Etxt.exe" },
      { kind: "terms", title: "x".repeat(201), body: "x" },
      { kind: "terms", title: "T", body: "x".repeat(100_001) },
      { kind: "terms", title: "Line\nbreak", body: "x" },
    ];
    for (const body of bodies) {
      const res = await t.request(path, { method: "POST", token: superAdmin, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      await problem(res);
    }
  });

  it("accepts a body of the maximum length", async () => {
    const doc = await create("privacy", "Long", "x".repeat(100_000));
    expect(doc.body).toHaveLength(100_000);
  });

  it("updates a draft (204) with its audit row, and deletes it (204, then 404)", async () => {
    const doc = await create("terms");
    t.clock.advance(60);
    const res = await t.request(`${path}/${doc.id}`, {
      method: "PUT",
      token: superAdmin,
      body: { title: "Renamed", body: "# New\n\nText." },
    });
    expect(res.status).toBe(204);
    const got = (await (await t.request(`${path}/${doc.id}`, { token: superAdmin })).json()) as LegalDocument;
    expect(got).toMatchObject({ title: "Renamed", body: "# New\n\nText.", version: doc.version, status: "draft" });
    expect(got.updatedAt).toBe(t.clock.now().toISOString());
    const kindChange = await t.request(`${path}/${doc.id}`, {
      method: "PUT",
      token: superAdmin,
      body: { kind: "privacy" },
    });
    expect(kindChange.status).toBe(400);

    const del = await t.request(`${path}/${doc.id}`, { method: "DELETE", token: superAdmin });
    expect(del.status).toBe(204);
    expect((await t.request(`${path}/${doc.id}`, { token: superAdmin })).status).toBe(404);
    expect((await auditOf("legal-document", doc.id)).map((r) => r.action)).toEqual(["create", "update", "delete"]);
  });

  it("gives concurrent creates of one kind distinct versions (a loser answers 409, nothing half-written)", async () => {
    const before = await t.db.select({ id: legalDocuments.id }).from(legalDocuments);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.request(path, { method: "POST", token: superAdmin, body: { kind: "privacy", title: `P${i}`, body: "x" } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = (await Promise.all(
      results.filter((r) => r.status === 201).map((r) => r.json()),
    )) as LegalDocument[];
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((d) => d.version)).size).toBe(created.length);
    const after = await t.db.select({ id: legalDocuments.id }).from(legalDocuments);
    expect(after.length - before.length).toBe(created.length);
  });

  it("lists newest first, filtered by kind and status", async () => {
    const draft = await create("terms", "Listed draft");
    const page = (await (await t.request(`${path}?pageSize=100`, { token: superAdmin })).json()) as Page;
    expect(page.data[0]?.id).toBe(draft.id);
    const terms = (await (await t.request(`${path}?kind=terms&pageSize=100`, { token: superAdmin })).json()) as Page;
    expect(terms.data.every((d) => d.kind === "terms")).toBe(true);
    expect(terms.data.map((d) => d.id)).toContain(draft.id);
    const drafts = (await (await t.request(`${path}?status=draft&pageSize=100`, { token: superAdmin })).json()) as Page;
    expect(drafts.data.every((d) => d.status === "draft")).toBe(true);
    expect(drafts.data.map((d) => d.id)).toContain(draft.id);
    expect((await t.request(`${path}?sort=version`, { token: superAdmin })).status).toBe(400);
  });
});

describe("who may do what", () => {
  it("shows other readers published versions only: a draft is a 404 and missing from lists", async () => {
    const draft = await create("terms", "Secret draft");
    const page = (await (await t.request(`${path}?pageSize=100`, { token: parent })).json()) as Page;
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((d) => d.status === "published")).toBe(true);
    expect(page.data.map((d) => d.id)).not.toContain(draft.id);
    expect((await t.request(`${path}/${draft.id}`, { token: parent })).status).toBe(404);
    expect((await t.request(`${path}/1`, { token: parent })).status).toBe(200);
    const drafts = (await (await t.request(`${path}?status=draft`, { token: parent })).json()) as Page;
    expect(drafts.total).toBe(0);
  });

  it("lets only the platform write: a school admin with every role grant is refused (403)", async () => {
    const { accessToken: admin } = await t.signIn(DEMO.northAdmin.phone);
    const draft = await create("terms");
    const attempts = [
      t.request(path, { method: "POST", token: admin, body: { kind: "terms", title: "T", body: "x" } }),
      t.request(`${path}/${draft.id}`, { method: "PUT", token: admin, body: { title: "T" } }),
      t.request(`${path}/${draft.id}`, { method: "DELETE", token: admin }),
      publish(draft.id, admin),
      t.request(`${path}/${draft.id}/publish`, { method: "PATCH", token: parent }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      await problem(res);
    }
  });
});

describe("publishing", () => {
  it("publishes a draft once (200 with publishedAt from the clock), then 409", async () => {
    const doc = await create("terms");
    t.clock.advance(30); // tokens last 10 minutes: the whole file stays within them
    const res = await publish(doc.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: doc.id,
      status: "published",
      publishedAt: t.clock.now().toISOString(),
    });
    for (let i = 0; i < 2; i++) {
      const again = await publish(doc.id);
      expect(again.status).toBe(409);
      expect((await problem(again)).detail).toContain("published");
    }
    expect((await auditOf("legal-document", doc.id)).map((r) => r.action)).toEqual(["create", "publish"]);
  });

  it("lets exactly one of 20 concurrent publishes win, with one audit row", async () => {
    const doc = await create("privacy");
    const results = await Promise.all(Array.from({ length: 20 }, () => publish(doc.id)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect((await auditOf("legal-document", doc.id)).filter((r) => r.action === "publish")).toHaveLength(1);
  });

  it("refuses to publish a draft older than the kind's latest published version (422)", async () => {
    const older = await create("terms", "Older");
    await published("terms", "Newer");
    const res = await publish(older.id);
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toContain("newer version");
    const [row] = await t.db.select().from(legalDocuments).where(eq(legalDocuments.id, older.id));
    expect(row).toMatchObject({ status: "draft", publishedAt: null });
  });

  it("never changes or deletes a published version (409), also not through its audit", async () => {
    const doc = await published("privacy", "Final");
    const put = await t.request(`${path}/${doc.id}`, { method: "PUT", token: superAdmin, body: { title: "Changed" } });
    expect(put.status).toBe(409);
    expect((await problem(put)).detail).toBe(
      `Legal document ${doc.id} is published: a published version cannot be updated; create a new version instead`,
    );
    const del = await t.request(`${path}/${doc.id}`, { method: "DELETE", token: superAdmin });
    expect(del.status).toBe(409);
    await problem(del);
    const [row] = await t.db.select().from(legalDocuments).where(eq(legalDocuments.id, doc.id));
    expect(row).toMatchObject({ title: "Final", status: "published", updatedAt: doc.updatedAt });
    expect((await auditOf("legal-document", doc.id)).map((r) => r.action)).toEqual(["create", "publish"]);
  });

  it("answers 404 for an unknown id", async () => {
    for (const res of [
      await publish(987654),
      await t.request(`${path}/987654`, { method: "PUT", token: superAdmin, body: { title: "x" } }),
      await t.request(`${path}/987654`, { method: "DELETE", token: superAdmin }),
      await accept(987654, parent),
    ]) {
      expect(res.status).toBe(404);
      await problem(res);
    }
  });
});

describe("GET /api/v1/legal-document/last", () => {
  it("answers the latest published version of the kind; a newer draft is ignored", async () => {
    const newest = await published("terms", "Latest terms");
    const draft = await create("terms", "Draft after it");
    expect(draft.version).toBeGreaterThan(newest.version);
    const res = await last("terms");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: newest.id, version: newest.version, title: "Latest terms" });
    const privacy = (await (await last("privacy")).json()) as LegalDocument;
    expect(privacy.kind).toBe("privacy");
  });

  it("is open to any signed-in user, even one without a school, and to no one else", async () => {
    const { token } = await outsider();
    expect((await last("terms", token)).status).toBe(200);
    expect((await t.request(`${path}/last?kind=terms`)).status).toBe(401);
    // Reading versions by id or as a list needs legal-document.read in a school.
    expect((await t.request(`${path}/1`, { token })).status).toBe(403);
  });

  it("is not taken for an id, and checks its query (400)", async () => {
    for (const query of ["", "?kind=cookies", "?kind=terms&extra=1"]) {
      const res = await t.request(`${path}/last${query}`, { token: parent });
      expect(res.status, query).toBe(400);
      await problem(res);
    }
    // Other methods reach `/{id}`, whose id is digits only.
    const put = await t.request(`${path}/last`, { method: "PUT", token: superAdmin, body: { title: "x" } });
    expect(put.status).toBe(400);
    expect((await problem(put)).errors?.map((e) => e.path)).toEqual(["id"]);
  });
});

describe("accepting", () => {
  it("records the caller's acceptance once: again is 200 with the same acceptance, no second row or audit", async () => {
    const { id: userId, token } = await outsider();
    const doc = await published("privacy", "To accept");
    t.clock.advance(5);
    const first = await accept(doc.id, token);
    expect(first.status).toBe(200);
    const acceptance = (await first.json()) as Acceptance;
    expect(acceptance).toMatchObject({
      userId,
      legalDocumentId: doc.id,
      kind: "privacy",
      version: doc.version,
      acceptedAt: t.clock.now().toISOString(),
    });
    t.clock.advance(60);
    const again = await accept(doc.id, token);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(acceptance);
    const rows = await t.db
      .select()
      .from(legalDocumentAcceptances)
      .where(eq(legalDocumentAcceptances.legalDocumentId, doc.id));
    expect(rows).toHaveLength(1);
    const audit = await auditOf("legal-document-acceptance", acceptance.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "create", actorType: "user", actorId: userId, schoolId: null });
    expect(JSON.parse(audit[0]?.changes ?? "{}")).toMatchObject({
      userId: { old: null, new: userId },
      legalDocumentId: { old: null, new: doc.id },
    });
  });

  it("keeps one row and one audit row when 20 accepts arrive at once; all answer the same acceptance", async () => {
    const { id: userId, token } = await outsider();
    const doc = await published("terms", "Concurrent");
    const [mark] = await t.db.select({ id: auditLog.id }).from(auditLog).orderBy(desc(auditLog.id)).limit(1);
    const results = await Promise.all(Array.from({ length: 20 }, () => accept(doc.id, token)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const bodies = (await Promise.all(results.map((r) => r.json()))) as Acceptance[];
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    const rows = await t.db
      .select()
      .from(legalDocumentAcceptances)
      .where(and(eq(legalDocumentAcceptances.userId, userId), eq(legalDocumentAcceptances.legalDocumentId, doc.id)));
    expect(rows).toHaveLength(1);
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(
        and(
          gt(auditLog.id, mark?.id ?? 0),
          eq(auditLog.entity, "legal-document-acceptance"),
          eq(auditLog.actorId, userId),
        ),
      );
    expect(audits).toHaveLength(1);
    expect(audits[0]?.recordId).toBe(rows[0]?.id);
  });

  it("refuses a draft (409) and records nothing", async () => {
    const { id: userId, token } = await outsider();
    const draft = await create("terms");
    const res = await accept(draft.id, token);
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toBe(
      `Legal document ${draft.id} is a draft; only a published version can be accepted`,
    );
    const rows = await t.db.select().from(legalDocumentAcceptances).where(eq(legalDocumentAcceptances.userId, userId));
    expect(rows).toHaveLength(0);
  });
});

describe("GET /api/v1/user/me: legal.mustAccept", () => {
  it("lists the latest published version of each kind the user has not accepted, until accepted", async () => {
    const { token } = await outsider();
    const terms = (await (await last("terms")).json()) as LegalDocument;
    const privacy = (await (await last("privacy")).json()) as LegalDocument;
    expect(await me(token)).toEqual([
      { kind: "terms", id: terms.id, version: terms.version, title: terms.title, publishedAt: terms.publishedAt },
      {
        kind: "privacy",
        id: privacy.id,
        version: privacy.version,
        title: privacy.title,
        publishedAt: privacy.publishedAt,
      },
    ]);
    expect((await accept(terms.id, token)).status).toBe(200);
    expect((await me(token)).map((d) => d.kind)).toEqual(["privacy"]);
    expect((await accept(privacy.id, token)).status).toBe(200);
    expect(await me(token)).toEqual([]);

    // A newer draft asks nothing; publishing it does. Accepting an older version does not satisfy it.
    const next = await create("privacy", "Privacy policy, revised");
    expect(await me(token)).toEqual([]);
    expect((await publish(next.id)).status).toBe(200);
    expect(await me(token)).toEqual([
      expect.objectContaining({
        kind: "privacy",
        id: next.id,
        version: next.version,
        title: "Privacy policy, revised",
      }),
    ]);
    expect((await accept(privacy.id, token)).status).toBe(200);
    expect((await me(token)).map((d) => d.id)).toEqual([next.id]);
    expect((await accept(next.id, token)).status).toBe(200);
    expect(await me(token)).toEqual([]);
  });

  it("lets the demo parent clear the privacy policy they had not accepted", async () => {
    const due = await me(parent);
    const privacy = due.find((d) => d.kind === "privacy");
    expect(privacy).toBeDefined();
    expect((await accept(privacy?.id ?? 0, parent)).status).toBe(200);
    expect((await me(parent)).map((d) => d.kind)).not.toContain("privacy");
  });

  it("is read in one D1 round trip per database with the user and their schools", async () => {
    const { t: app, measure } = countingTestApp();
    const token = await app.token(DEMO.northTeacher.id, { 1: ["school.read"] });
    const { res, calls } = await measure(() => app.request("/api/v1/user/me", { token }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { schools: unknown[]; legal: { mustAccept: Due[] } };
    expect(body.schools).toHaveLength(1);
    expect(body.legal.mustAccept.length).toBeGreaterThan(0);
    // Each database holds some of a person's schools: one read on each, in parallel.
    expect(calls).toBe(Object.keys(app.deps.shards ?? { DB: app.db }).length);
  });
});

// Last in the file: it removes every privacy version, then the seed puts the demo ones back.
describe("a kind with no published version", () => {
  it("answers 404 at /last and asks nothing in mustAccept", async () => {
    const privacyIds = t.db
      .select({ id: legalDocuments.id })
      .from(legalDocuments)
      .where(eq(legalDocuments.kind, "privacy"));
    await t.db.batch([
      t.db.delete(legalDocumentAcceptances).where(inArray(legalDocumentAcceptances.legalDocumentId, privacyIds)),
      t.db.delete(legalDocuments).where(eq(legalDocuments.kind, "privacy")),
    ]);
    const res = await last("privacy");
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toBe("No published privacy policy yet");
    const { token } = await outsider();
    expect((await me(token)).map((d) => d.kind)).toEqual(["terms"]);
    await env.DB.batch(scriptStatements(env.TEST_SEED).map((s) => env.DB.prepare(s)));
    expect((await last("privacy")).status).toBe(200);
  });
});
