/**
 * The pickup pass: the public link of a confirmed auto pickup answers a minimal view and a token
 * signed with the school's Ed25519 key, which verifies with the public key alone and fails when
 * tampered with; everything else is the same 404. The pass key is the school's, per school.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exitPermissions } from "../src/db/schema/exit-permission";
import { parents } from "../src/db/schema/parent";
import { guardians, students } from "../src/db/schema/student";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { grantsOf } from "../src/modules";
import { fromBase64url, verifyPass } from "../src/modules/exit-permission/pass-key";
import { readJson } from "./fixture-kit";
import { makePermission } from "./fixtures/afternoon";
import { makeStudents } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp, problem, setModule } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const E = "/api/v1/exit-permission";
const t = makeTestApp();
// Monday 23 November 2026, 09:00 in Mexico City.
const TODAY = "2026-11-23";
t.clock.current = new Date("2026-11-23T15:00:00.000Z");

type Jwk = { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; alg: "EdDSA"; use: "sig" };
type Pass = {
  firstName: string;
  photoUrl: string | null;
  date: string;
  collector: { name: string; kind: string; relationship: string | null };
  validFrom: string;
  expiresAt: string;
  kid: string;
  token: string;
};

async function key(school = NORTH) {
  const token = await t.token(DEMO.northParent.id, { [school]: grantsOf("parent").map((p) => p.name) });
  const res = await t.request(`${E}/pass-key`, { token, school });
  expect(res.status).toBe(200);
  return readJson<{ schoolId: number; kid: string; alg: string; jwk: Jwk }>(res);
}

const pass = (slug: string) => t.request(`${E}/public?slug=${slug}`);

/** A child of North with an approved trusted person, and a confirmed pickup by them today. */
async function pickup(options: { status?: "confirmed" | "pending" | "rejected"; date?: string } = {}) {
  const [kid] = await makeStudents(t, NORTH, [["Valentina", "Secreto"]]);
  if (kid === undefined) throw new Error("no student");
  // An elementary child: Monday's dismissal at 14:30, after-school until 17:00 (the demo's schedule).
  await t.db
    .update(students)
    .set({ photo: `${NORTH}/students/${kid}/photo`, level: "elementary" })
    .where(eq(students.id, kid));
  const [person] = await t.db
    .insert(trustedPeople)
    .values({
      schoolId: NORTH,
      studentId: kid,
      name: "Tía Carmen",
      relationship: "aunt",
      phone: "+525512345678",
      status: "approved",
      decidedAt: "2026-11-01T00:00:00.000Z",
    })
    .returning({ id: trustedPeople.id });
  const made = await makePermission(t, {
    schoolId: NORTH,
    studentId: kid,
    date: options.date ?? TODAY,
    kind: "auto_pickup",
    status: options.status ?? "confirmed",
    trustedPersonId: person?.id ?? null,
    reason: "Family dinner at the ranch",
  });
  return { ...made, kid, personId: person?.id ?? 0 };
}

describe("the pickup pass", () => {
  it("answers a minimal view and a token the public key alone verifies", async () => {
    const { slug } = await pickup();
    const res = await pass(slug);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await readJson<Pass>(res);
    expect(body).toMatchObject({
      firstName: "Valentina",
      date: TODAY,
      collector: { name: "Tía Carmen", kind: "trusted", relationship: "aunt" },
      // The dismissal window of 23 November in Mexico City (UTC-6): 13:30 (an hour before the
      // 14:30 dismissal) to 18:00 (an hour after the after-school program ends at 17:00).
      validFrom: "2026-11-23T19:30:00.000Z",
      expiresAt: "2026-11-24T00:00:00.000Z",
    });
    expect(body.photoUrl).toContain(`${NORTH}/students/`);
    // Nothing of the family: no last name, no reason, no phone, no ids.
    const text = JSON.stringify(body);
    for (const secret of ["Secreto", "ranch", "+5255", "studentId", "parentId"]) expect(text).not.toContain(secret);

    const { jwk, kid } = await key();
    expect(body.kid).toBe(kid);
    expect(jwk).not.toHaveProperty("d");
    const atGate = new Date("2026-11-23T20:40:00.000Z");
    const claims = await verifyPass(jwk, body.token, atGate);
    expect(claims).toMatchObject({
      typ: "pickup-pass",
      school: NORTH,
      date: TODAY,
      child: "Valentina",
      collector: "Tía Carmen",
      jti: slug,
    });
    // The header names the algorithm and the key.
    const [header] = body.token.split(".");
    expect(JSON.parse(new TextDecoder().decode(fromBase64url(header ?? "")))).toMatchObject({ alg: "EdDSA", kid });

    // Independently of our helper: Web Crypto with the JWK.
    const [h, p, s] = body.token.split(".");
    const publicKey = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["verify"]);
    const ok = await crypto.subtle.verify(
      "Ed25519",
      publicKey,
      fromBase64url(s ?? ""),
      new TextEncoder().encode(`${h}.${p}`),
    );
    expect(ok).toBe(true);
  });

  it("fails a tampered token, another school's key, and an expired day", async () => {
    const { slug } = await pickup();
    const { token } = await readJson<Pass>(await pass(slug));
    const { jwk } = await key();
    const [h, p, s] = token.split(".");
    const claims = JSON.parse(new TextDecoder().decode(fromBase64url(p ?? "")));
    const forged = btoa(JSON.stringify({ ...claims, collector: "Un Extraño" }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const atGate = new Date("2026-11-23T20:40:00.000Z");
    expect(await verifyPass(jwk, token, atGate)).not.toBeNull();
    expect(await verifyPass(jwk, `${h}.${forged}.${s}`, atGate)).toBeNull();
    // Another character in the middle of the signature (never the same one).
    const sig = s ?? "";
    const mid = Math.floor(sig.length / 2);
    const flipped = `${sig.slice(0, mid)}${sig[mid] === "A" ? "B" : "A"}${sig.slice(mid + 1)}`;
    expect(await verifyPass(jwk, `${h}.${p}.${flipped}`, atGate)).toBeNull();
    // Another school's key does not verify North's pass.
    const southToken = await t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });
    const south = await readJson<{ jwk: Jwk }>(await t.request(`${E}/pass-key`, { token: southToken, school: SOUTH }));
    expect(south.jwk.x).not.toBe(jwk.x);
    expect(await verifyPass(south.jwk, token, atGate)).toBeNull();
    // Only within the day's dismissal window (13:30 to 18:00 in Mexico City): not in the morning,
    // not in the evening.
    expect(await verifyPass(jwk, token, new Date("2026-11-23T15:00:00.000Z"))).toBeNull();
    expect(await verifyPass(jwk, token, new Date("2026-11-23T19:30:00.000Z"))).not.toBeNull();
    expect(await verifyPass(jwk, token, new Date("2026-11-23T23:59:00.000Z"))).not.toBeNull();
    expect(await verifyPass(jwk, token, new Date("2026-11-24T00:00:00.000Z"))).toBeNull();
  });

  it("is the same 404 for an unknown slug, a pending, rejected or past pickup, another kind", async () => {
    const pending = await pickup({ status: "pending" });
    const rejected = await pickup({ status: "rejected" });
    const past = await pickup({ date: "2026-11-20" });
    const [kid] = await makeStudents(t, NORTH, [["Otro", "Niño"]]);
    const absence = await makePermission(t, {
      schoolId: NORTH,
      studentId: kid ?? 0,
      date: TODAY,
      kind: "absence",
      status: "confirmed",
    });
    const bodies: string[] = [];
    for (const slug of [pending.slug, rejected.slug, past.slug, absence.slug, "0123456789abcdef0123456789abcdef"]) {
      const res = await pass(slug);
      expect(res.status, slug).toBe(404);
      const p = await problem(res);
      bodies.push(`${p.title}|${p.detail}`);
    }
    expect(new Set(bodies).size).toBe(1);
    expect((await pass("bad slug!")).status).toBe(400);
  });

  it("stops once the collector may no longer take the child, or the student is deleted", async () => {
    const withdrawn = await pickup();
    expect((await pass(withdrawn.slug)).status).toBe(200);
    await t.db.update(trustedPeople).set({ status: "rejected" }).where(eq(trustedPeople.id, withdrawn.personId));
    expect((await pass(withdrawn.slug)).status).toBe(404);

    const gone = await pickup();
    await t.db.update(students).set({ deletedAt: "2026-11-22T00:00:00.000Z" }).where(eq(students.id, gone.kid));
    expect((await pass(gone.slug)).status).toBe(404);

    // A guardian's pickup: valid while they may pick up, gone once restricted that day.
    const [kid] = await makeStudents(t, NORTH, [["Mateo", "Guardado"]]);
    const [parent] = await t.db.select().from(parents).where(eq(parents.userId, DEMO.northParent.id));
    if (!parent || kid === undefined) throw new Error("no demo parent");
    await t.db.update(students).set({ level: "elementary" }).where(eq(students.id, kid));
    await t.db.insert(guardians).values({ schoolId: NORTH, studentId: kid, parentId: parent.id });
    const byParent = await makePermission(t, {
      schoolId: NORTH,
      studentId: kid,
      date: TODAY,
      kind: "auto_pickup",
      status: "confirmed",
      pickupParentId: parent.id,
    });
    const ok = await pass(byParent.slug);
    expect(ok.status).toBe(200);
    expect((await readJson<Pass>(ok)).collector.kind).toBe("guardian");
    await t.db
      .update(guardians)
      .set({ restricted: true, restrictionFrom: TODAY, restrictionUntil: TODAY })
      .where(and(eq(guardians.studentId, kid), eq(guardians.parentId, parent.id)));
    expect((await pass(byParent.slug)).status).toBe(404);
  });

  it("is no pass for a child without a schedule that day (no dismissal, no window), nor after the window", async () => {
    const p = await pickup();
    await t.db.update(students).set({ level: null }).where(eq(students.id, p.kid));
    expect((await pass(p.slug)).status).toBe(404);
    await t.db.update(students).set({ level: "elementary" }).where(eq(students.id, p.kid));
    expect((await pass(p.slug)).status).toBe(200);
    const evening = makeTestApp();
    evening.clock.current = new Date("2026-11-24T00:00:00.000Z");
    expect((await evening.request(`${E}/public?slug=${p.slug}`)).status).toBe(404);
  });

  it("lists the day's revoked passes, signed with the passes' key, for staff", async () => {
    const kept = await pickup();
    const revoked = await pickup();
    const pending = await pickup({ status: "pending" });
    await t.db.update(exitPermissions).set({ status: "withdrawn" }).where(eq(exitPermissions.id, revoked.id));
    await t.db.update(exitPermissions).set({ status: "cancelled" }).where(eq(exitPermissions.id, pending.id));
    const office = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const res = await t.request(`${E}/pass-revocations?date=${TODAY}`, { token: office, school: NORTH });
    expect(res.status, await res.clone().text()).toBe(200);
    const list = await readJson<{ date: string; revoked: string[]; kid: string; token: string }>(res);
    expect(list.date).toBe(TODAY);
    expect(list.revoked).toContain(revoked.slug);
    // A pass never shown (pending, then cancelled) and one still valid are not named.
    expect(list.revoked).not.toContain(pending.slug);
    expect(list.revoked).not.toContain(kept.slug);
    const { jwk, kid } = await key();
    expect(list.kid).toBe(kid);
    const claims = await verifyPass(jwk, list.token, t.clock.now());
    expect(claims).toMatchObject({ typ: "pass-revocations", school: NORTH, date: TODAY });
    expect(claims?.revoked).toEqual(list.revoked);
    // Without a date: the school's today. A parent may not read it.
    const today = await t.request(`${E}/pass-revocations`, { token: office, school: NORTH });
    expect((await readJson<{ date: string }>(today)).date).toBe(TODAY);
    const parentToken = await t.token(DEMO.northParent.id, { [NORTH]: grantsOf("parent").map((p) => p.name) });
    expect((await t.request(`${E}/pass-revocations`, { token: parentToken, school: NORTH })).status).toBe(403);
  });

  it("is the same 404 while the school has exit permissions switched off, and back once they are on", async () => {
    const p = await pickup();
    expect((await pass(p.slug)).status).toBe(200);
    await setModule(t, NORTH, "exit-permissions", false);
    try {
      const off = await pass(p.slug);
      expect(off.status).toBe(404);
      expect((await problem(off)).detail).toBe("Pickup pass not found");
    } finally {
      await setModule(t, NORTH, "exit-permissions", true);
    }
    expect((await pass(p.slug)).status).toBe(200);
  });

  it("is rate-limited per client address", async () => {
    const limited = makeTestApp();
    limited.clock.current = new Date("2030-01-07T15:00:00.000Z");
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      statuses.push((await limited.request(`${E}/public?slug=ffffffffffffffff${String(i).padStart(4, "0")}`)).status);
    }
    expect(statuses.every((s) => s === 404)).toBe(true);
    const last = await limited.request(`${E}/public?slug=ffffffffffffffff9999`);
    expect(last.status).toBe(429);
    expect(last.headers.get("retry-after")).toBeTruthy();
  });

  it("serves the key to the school's members only, and per school", async () => {
    expect((await t.request(`${E}/pass-key`)).status).toBe(401);
    const none = await t.token(DEMO.northTeacher.id, { [NORTH]: [] });
    expect((await t.request(`${E}/pass-key`, { token: none, school: NORTH })).status).toBe(403);
    const a = await key(NORTH);
    const b = await key(NORTH);
    expect(a).toEqual(b);
    expect(a.jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA" });
  });
});
