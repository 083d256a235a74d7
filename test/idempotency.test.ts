/**
 * Safe retries: a signed-in POST or PATCH sent with `Idempotency-Key` runs once. A repeat gets the
 * first answer again (marked replayed), another request under the same key a 422, concurrent
 * repeats run once, keys are per user and last 24 hours, failures of the server are not kept.
 */
import { and, eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { documents } from "../src/db/schema/document";
import { idempotencyKeys } from "../src/db/schema/jobs";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { uniq } from "./fixtures";
import { DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const PATH = "/api/v1/documents";
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

const post = async (body: object, key?: string, token?: string) =>
  t.request(PATH, {
    method: "POST",
    token: token ?? (await admin()),
    school: NORTH,
    body,
    headers: key === undefined ? {} : { "idempotency-key": key },
  });

const stored = (prefix: string) =>
  t.db
    .select()
    .from(documents)
    .where(like(documents.slug, `${NORTH}/documents/${prefix}%`));

describe("Idempotency-Key", () => {
  it("a repeat gets the first answer, marked replayed, and creates nothing more", async () => {
    const prefix = uniq("idem");
    const body = { name: "Menu", slug: `${NORTH}/documents/${prefix}.pdf` };
    const key = crypto.randomUUID();
    const first = await post(body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post(body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toContain("application/json");
    expect(await again.json()).toEqual(await first.json());
    expect(await stored(prefix)).toHaveLength(1);

    // Without a key, the same body is a new request: here the unique slug refuses it.
    expect((await post(body)).status).toBe(409);
  });

  it("the same key with another body, path or school is a 422, and runs nothing", async () => {
    const prefix = uniq("idem");
    const key = crypto.randomUUID();
    expect((await post({ name: "A", slug: `${NORTH}/documents/${prefix}-a.pdf` }, key)).status).toBe(201);
    const other = await post({ name: "B", slug: `${NORTH}/documents/${prefix}-b.pdf` }, key);
    expect(other.status).toBe(422);
    expect((await problem(other)).detail).toMatch(/used with another request/);
    expect(await stored(prefix)).toHaveLength(1);
  });

  it("twenty concurrent requests with one key run once; the others replay or are told to retry", async () => {
    const prefix = uniq("idem");
    const body = { name: "Race", slug: `${NORTH}/documents/${prefix}.pdf` };
    const key = crypto.randomUUID();
    const token = await admin();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body, key, token)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const executed = answers.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(executed).toHaveLength(1);
    for (const r of answers.filter((a) => a.status === 409)) expect(r.headers.get("retry-after")).toBe("1");
    expect(await stored(prefix)).toHaveLength(1);
    // Once the first has finished, a retry replays it.
    const later = await post(body, key, token);
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBe("true");
  });

  it("keys are per user: another user's same key is their own request", async () => {
    const key = crypto.randomUUID();
    const prefix = uniq("idem");
    expect((await post({ name: "Mine", slug: `${NORTH}/documents/${prefix}-1.pdf` }, key)).status).toBe(201);
    const staff = await t.token(DEMO.northTeacher.id, { [NORTH]: "all" });
    const theirs = await post({ name: "Theirs", slug: `${NORTH}/documents/${prefix}-2.pdf` }, key, staff);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(await stored(prefix)).toHaveLength(2);
  });

  it("keeps a refusal too (the same request gets the same 4xx), and lets a key run again after 24 hours", async () => {
    const key = crypto.randomUUID();
    const bad = { name: "", slug: "not-a-slug" };
    const first = await post(bad, key);
    expect(first.status).toBe(400);
    const again = await post(bad, key);
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toContain("application/problem+json");

    const prefix = uniq("idem");
    const body = { name: "Later", slug: `${NORTH}/documents/${prefix}.pdf` };
    const reused = crypto.randomUUID();
    expect((await post(body, reused)).status).toBe(201);
    const saved = t.clock.current;
    try {
      t.clock.advance(24 * 3600 + 1);
      // Expired: the key runs the request again (here the slug is taken: a 409, not a replay).
      const after = await post(body, reused);
      expect(after.status).toBe(409);
      expect(after.headers.get("idempotent-replayed")).toBeNull();
    } finally {
      t.clock.current = saved;
    }
  });

  it("PATCH takes it too: a decision repeated is replayed, not refused as already decided", async () => {
    const token = await admin();
    const created = await t.request("/api/v1/trusted-person", {
      method: "POST",
      token,
      school: NORTH,
      body: { studentId: await firstStudent(), name: "Tía Rosa", relationship: "aunt", phone: "+525512345678" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const decide = () =>
      t.request(`/api/v1/trusted-person/${id}/status`, {
        method: "PATCH",
        token,
        school: NORTH,
        body: { status: "approved" },
        headers: { "idempotency-key": `decide-${id}` },
      });
    const first = await decide();
    expect(first.status).toBe(200);
    const again = await decide();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const [row] = await t.db.select().from(trustedPeople).where(eq(trustedPeople.id, id));
    expect(row?.status).toBe("approved");
  });

  it("refuses a malformed key, and is not kept for requests without one", async () => {
    for (const key of ["", "x".repeat(256), "two words"]) {
      const res = await post({ name: "K", slug: `${NORTH}/documents/${uniq("k")}.pdf` }, key);
      expect(res.status, key).toBe(400);
    }
    const user = DEMO.northAdmin.id;
    const before = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.userId, user));
    await post({ name: "No key", slug: `${NORTH}/documents/${uniq("nokey")}.pdf` });
    const after = await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.userId, user));
    expect(after).toHaveLength(before.length);
    expect(
      await t.db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.userId, user), eq(idempotencyKeys.status, "pending"))),
    ).toEqual([]);
  });
});

async function firstStudent() {
  const res = await t.request("/api/v1/student?pageSize=1", { token: await admin(), school: NORTH });
  const page = (await res.json()) as { data: { id: number }[] };
  const id = page.data[0]?.id;
  if (!id) throw new Error("no student in the demo school");
  return id;
}
