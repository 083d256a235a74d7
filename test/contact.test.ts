/**
 * Phones and emails are their own permission, `user.contact`: every route whose answer carries a
 * person's `phone` or `email` (walked from the OpenAPI document, exports included) is called with a
 * custom role holding the route's own permission and not `user.contact`, and must answer them
 * masked (`+15•••••••04`, `p•••@example.test`); with `user.contact` too, as they are. A person always
 * sees their own; a parent sees their own children's trusted people and their own delegates.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { users } from "../src/db/schema/core";
import { withSearch } from "../src/db/search";
import type { BuiltinRole } from "../src/lib/access";
import { readXlsx } from "../src/lib/xlsx";
import { grantsOf } from "../src/modules";
import { fixturePhone } from "./fixture-kit";
import { makeTestApp } from "./helpers";

const t = makeTestApp();
const SCHOOL = 1;
/** The caller: a user of no school, so never one of the people it reads (made in beforeAll). */
let CALLER = 0;
const superAdmin = () => t.token(1, {}, true);
const MASKED = /•/;

type Op = {
  operationId: string;
  "x-access"?: string;
  responses: Record<string, { content?: Record<string, unknown> }>;
};
const doc = (await (await t.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Op>>;
  components: { schemas: Record<string, unknown> };
};

/** Whether a response schema has a `phone` or `email` property anywhere. */
function carriesContact(schema: unknown, seen = new Set<string>()): boolean {
  if (!schema || typeof schema !== "object") return false;
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string") {
    const name = s.$ref.split("/").pop() ?? "";
    if (seen.has(name)) return false;
    return carriesContact(doc.components.schemas[name], new Set([...seen, name]));
  }
  const props = (s.properties ?? {}) as Record<string, unknown>;
  if (Object.keys(props).some((k) => k === "phone" || k === "email")) return true;
  return Object.values(s).some((v) => typeof v === "object" && carriesContact(v, seen));
}

// A school's own contact (`/school`) is the school's, not a person's; sign-in and `/user/me` answer
// the caller about themself.
const NOT_PEOPLE = /^\/api\/v1\/(auth\/|user\/me$|school(\/\{id\})?$)/;
const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, op]) =>
      Object.entries(op.responses).some(
        ([status, r]) =>
          /^2/.test(status) &&
          Object.values(r.content ?? {}).some((c) => carriesContact((c as { schema?: unknown }).schema)),
      ),
    )
    .filter(() => !NOT_PEOPLE.test(path))
    .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
);
// Every export of a list that carries contacts.
const exports = Object.entries(doc.paths)
  .filter(
    ([path]) => path.endsWith("/export") && routes.some((r) => r.method === "GET" && r.path === path.slice(0, -7)),
  )
  .map(([path, item]) => ({ method: "GET", path, op: item.get as Op }));

/** Every `phone` and `email` value in an answer (JSON, or an export's Phone and Email columns). */
async function contacts(res: Response): Promise<(string | null)[]> {
  if ((res.headers.get("content-type") ?? "").includes("spreadsheet")) {
    const [header = [], ...rows] = readXlsx(new Uint8Array(await res.arrayBuffer()));
    const at = header.flatMap((h, i) => (h === "Phone" || h === "Email" ? [i] : []));
    return rows.flatMap((r) => at.map((i) => (r[i] === undefined || r[i] === null ? null : String(r[i]))));
  }
  const found: (string | null)[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if ((k === "phone" || k === "email") && (typeof x === "string" || x === null)) found.push(x);
        else walk(x);
      }
    }
  };
  walk(await res.json());
  return found;
}

/** Ids the routes need, made once. */
const ids: Record<string, number> = {};
let inactive = 0;

beforeAll(async () => {
  const [caller] = await t.db
    .insert(users)
    .values(withSearch(users, { phone: fixturePhone(), firstName: "Custom", lastName: "Role" }))
    .returning({ id: users.id });
  CALLER = caller?.id ?? 0;
  const token = await superAdmin();
  const firstId = async (path: string) => {
    const res = await t.request(`${path}?pageSize=1`, { token, school: SCHOOL });
    return ((await res.json()) as { data: { id: number }[] }).data[0]?.id ?? 0;
  };
  for (const path of ["/api/v1/user", "/api/v1/teacher", "/api/v1/administrative-user", "/api/v1/parent"]) {
    ids[path] = await firstId(path);
  }
  ids["/api/v1/school-administrator"] = await firstId("/api/v1/school-administrator");
  ids["/api/v1/delegate"] = await firstId("/api/v1/delegate");
  ids["/api/v1/trusted-person"] = await firstId("/api/v1/trusted-person");
  const [student] = await t.db.all<{ id: number }>(
    sql`SELECT student_id AS id FROM trusted_person WHERE school_id = ${SCHOOL} AND status = 'approved' LIMIT 1`,
  );
  ids.student = student?.id ?? 0;
  // A pending request, for the decision.
  const pending = await t.request("/api/v1/trusted-person", {
    method: "POST",
    token,
    school: SCHOOL,
    body: { studentId: 1, name: "Pendiente", relationship: "aunt", phone: fixturePhone() },
  });
  ids.pending = ((await pending.json()) as { id: number }).id;
  // A member who may not sign in: inviting them answers their phone among the skipped.
  const made = await t.request("/api/v1/user", {
    method: "POST",
    token,
    school: SCHOOL,
    body: { phone: fixturePhone(), firstName: "Ina", lastName: "Activa", email: "ina@example.test" },
  });
  inactive = ((await made.json()) as { id: number }).id;
  const off = await t.request(`/api/v1/user/${inactive}`, {
    method: "PUT",
    token,
    school: SCHOOL,
    body: { status: "inactive" },
  });
  expect(off.status).toBe(204);
});

/** The request each route makes (a path with its ids, a body for a write). */
function request(method: string, path: string, operationId: string): { url: string; body?: unknown } {
  const phone = fixturePhone();
  const person = { phone, firstName: "Nueva", lastName: "Persona", email: "nueva@example.test" };
  const bodies: Record<string, unknown> = {
    createUser: person,
    createTeacher: person,
    createAdministrativeUser: person,
    createParent: { ...person, relationship: "mother" },
    createSchoolAdministrator: person,
    createDelegate: { parentId: 1, phone, firstName: "Nuevo", validFrom: "2026-11-01", validUntil: "2026-12-31" },
    createTrustedPerson: { studentId: 1, name: "Laura Gomez", relationship: "aunt", phone },
    decideTrustedPerson: { status: "approved", reason: "ID checked" },
    inviteToSchool: { phones: [phone] },
    inviteInactiveUsers: { role: "parent" },
    inviteUsers: { userIds: [inactive] },
  };
  const collection = path.replace(/\/\{id\}.*$/, "");
  const url = path
    .replace("/trusted-person/{id}/status", `/trusted-person/${ids.pending}/status`)
    .replace("/student/{id}", `/student/${ids.student}`)
    .replace("{id}", String(ids[collection] ?? 0))
    // The people holding a role are looked up by the role (a required query parameter).
    .replace(/\/user\/by-role$/, "/user/by-role?role=teacher");
  if (method === "GET") return { url };
  if (!(operationId in bodies)) throw new Error(`add a request for ${operationId} to test/contact.test.ts`);
  return { url, body: bodies[operationId] };
}

/**
 * What lets the caller see the records at all besides the route's own permission (routes open to
 * any member show the caller's own records only; trusted people of every student need
 * trusted.manage): the school-wide reads staff hold. None of them is user.contact.
 */
const SEES_ALL: Record<string, string[]> = {
  "/api/v1/parent": ["parent.read"],
  "/api/v1/student": ["student.read"],
  "/api/v1/trusted-person": ["trusted.manage"],
  "/api/v1/delegate": ["parent.read", "parent.write"],
};
const PERMISSION = /^[a-z-]+\.[a-z-]+$/;

/**
 * The built-in role a create gives: giving it needs every permission it grants (docs/domain.md
 * "Access control"), which the caller then holds too, but for user.contact.
 */
const GIVES: Record<string, BuiltinRole> = {
  createTeacher: "teacher",
  createAdministrativeUser: "staff",
  createParent: "parent",
  createSchoolAdministrator: "school-admin",
  createDelegate: "parent",
};

/** Whether the role a create gives grants user.contact: then nobody without it may give it. */
const givesContact = (operationId: string) => {
  const role = GIVES[operationId];
  return role !== undefined && grantsOf(role).some((p) => p.name === "user.contact");
};

async function call(method: string, path: string, op: Op, extra: string[] = []) {
  const { url, body } = request(method, path, op.operationId);
  const access = op["x-access"] ?? "";
  const seesAll = Object.entries(SEES_ALL).flatMap(([prefix, names]) => (path.startsWith(prefix) ? names : []));
  const role = GIVES[op.operationId];
  const roleGrants = role ? grantsOf(role).map((p) => p.name) : [];
  const permissions = [...(PERMISSION.test(access) ? [access] : []), ...seesAll, ...roleGrants, ...extra].filter(
    (name) => name !== "user.contact" || extra.includes(name),
  );
  const token = await t.token(CALLER, { [SCHOOL]: permissions });
  const res = await t.request(url, { method, token, school: SCHOOL, body });
  if (givesContact(op.operationId) && !extra.includes("user.contact")) {
    // Giving a role that grants user.contact needs it: refused before anything is read or written.
    expect(res.status, `${method} ${url}: ${await res.clone().text()}`).toBe(403);
    return res;
  }
  expect(res.status, `${method} ${url}: ${await res.clone().text()}`).toBeLessThan(300);
  return res;
}

describe("phones and emails need user.contact", () => {
  it("finds the routes that answer a person's phone or email, and their exports", () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(exports.map((e) => e.path).sort()).toEqual([
      "/api/v1/administrative-user/export",
      "/api/v1/parent/export",
      "/api/v1/teacher/export",
    ]);
  });

  for (const { method, path, op } of [...routes, ...exports]) {
    it(`${method} ${path}: masked without user.contact`, async () => {
      const res = await call(method, path, op);
      if (res.status === 403) {
        // The caller may not give this role at all: the refusal names no one's contact.
        expect(await res.text()).not.toMatch(/@|\+\d{6,}/);
        return;
      }
      const found = await contacts(res);
      const values = found.filter((v): v is string => v !== null);
      for (const v of values) expect(v, `${method} ${path}`).toMatch(MASKED);
      if (method !== "POST" || !path.includes("/invite/"))
        expect(values.length, "a contact to check").toBeGreaterThan(0);
    });
  }

  for (const { method, path, op } of [...routes, ...exports].filter((r) => r.method === "GET")) {
    it(`${method} ${path}: shown with user.contact`, async () => {
      const found = await contacts(await call(method, path, op, ["user.contact"]));
      const values = found.filter((v): v is string => v !== null);
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) expect(v, `${method} ${path}`).not.toMatch(MASKED);
    });
  }
});

describe("what a person always sees", () => {
  it("their own phone and email, with user.read alone", async () => {
    const token = await t.token(3, { [SCHOOL]: ["user.read"] });
    const me = await t.request("/api/v1/user/3", { token, school: SCHOOL });
    expect(await me.json()).toMatchObject({ phone: "+15550000003", email: "teacher.north@example.test" });
    const other = await t.request("/api/v1/user/4", { token, school: SCHOOL });
    expect(await other.json()).toMatchObject({ phone: "+15•••••••04", email: "p•••@example.test" });
  });

  it("a parent: their own delegates' phones, and their children's trusted people's", async () => {
    const parent = await t.token(4, { [SCHOOL]: grantsOf("parent").map((p) => p.name) });
    const registered = await t.request("/api/v1/trusted-person", {
      method: "POST",
      token: parent,
      school: SCHOOL,
      body: { studentId: 1, name: "Tía Rosa", relationship: "aunt", phone: "+52 55 1234 9876" },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const { id } = (await registered.json()) as { id: number };
    const decided = await t.request(`/api/v1/trusted-person/${id}/status`, {
      method: "PATCH",
      token: await superAdmin(),
      school: SCHOOL,
      body: { status: "approved" },
    });
    expect(decided.status, await decided.clone().text()).toBe(200);
    for (const path of [
      "/api/v1/trusted-person",
      `/api/v1/trusted-person/${id}`,
      "/api/v1/student/1/detail",
      "/api/v1/delegate",
    ]) {
      const values = (await contacts(await t.request(path, { token: parent, school: SCHOOL }))).filter(
        (v): v is string => v !== null,
      );
      expect(values.length, path).toBeGreaterThan(0);
      for (const v of values) expect(v, path).not.toMatch(MASKED);
    }
    expect(await contacts(await t.request("/api/v1/student/1/detail", { token: parent, school: SCHOOL }))).toContain(
      "+525512349876",
    );
  });

  it("a teacher reading a student of their group sees the trusted people's phones masked", async () => {
    const teacher = await t.token(CALLER, { [SCHOOL]: ["student.read"] });
    const values = (
      await contacts(await t.request("/api/v1/student/1/detail", { token: teacher, school: SCHOOL }))
    ).filter((v): v is string => v !== null);
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(v).toMatch(MASKED);
  });
});
