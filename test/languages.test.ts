/**
 * A school that speaks Spanish: the same requests answered in Spanish and in English (a 404, a 409,
 * a 422 with its fields, a validation 400 in zod's own Spanish, a 403 naming the permission, the
 * sign-in SMS in the development outbox, an Excel export's headers, sheet and file name, an import's
 * row errors; a lost article's 409 and an appointment's refusal, modules converted after they were
 * written), two languages in one isolate at once, and how the language is chosen without
 * `Accept-Language`: the user's (the token's `lng`), else the school's (`sl`), else English; new
 * people take the school's language.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { strFromU8, unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { dumpTables } from "../src/db/dump";
import { schools, users } from "../src/db/schema/core";
import worker from "../src/index";
import { PermissionSet } from "../src/lib/access";
import { m, verbatim } from "../src/lib/message";
import { stateName } from "../src/lib/names";
import { signAccessToken } from "../src/lib/tokens";
import { readXlsx, xlsxStream } from "../src/lib/xlsx";
import { fixturePhone, readJson } from "./fixture-kit";
import { makeFamily, parentToken } from "./fixtures/modules/exit-permission";
import { makeArticle } from "./fixtures/modules/lost-article";
import { DEMO, makeTestApp, PERMISSION_NAMES, permissionId, recordingBulkQueue } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const { sent, queue: bulk } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk } });

type Problem = {
  title: string;
  detail: string;
  errors?: { path: string; message: string }[];
  failures?: { code: string; message: string; reason?: unknown }[];
};

const es = { "accept-language": "es-MX,es;q=0.9,en;q=0.5" };
const en = { "accept-language": "en-US" };

async function problemOf(res: Response) {
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  return { status: res.status, language: res.headers.get("content-language"), ...(await readJson<Problem>(res)) };
}

/** A token as the app mints it from today on: the user's language, and each school's. */
const tokenWith = (userId: number, claims: { language?: "es" | "en"; schoolLanguages?: Record<string, "es" | "en"> }) =>
  signAccessToken(t.deps.config.authSecret, t.clock.now(), {
    userId,
    isSuperAdmin: false,
    schools: { [NORTH]: PermissionSet.encode(PERMISSION_NAMES.map(permissionId)) },
    ...claims,
  });

let admin: string;
beforeAll(async () => {
  admin = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
});

describe("the same request, in Spanish and in English", () => {
  it("a 404", async () => {
    const ask = (headers: Record<string, string>) =>
      t.request("/api/v1/family/999999", { token: admin, school: NORTH, headers });
    const spanish = await problemOf(await ask(es));
    expect(spanish).toMatchObject({ status: 404, language: "es", title: "No encontrado" });
    expect(spanish.detail).toBe("Familia 999999 no existe");
    const english = await problemOf(await ask(en));
    expect(english).toMatchObject({
      status: 404,
      language: "en",
      title: "Not found",
      detail: "Family 999999 not found",
    });
  });

  it("a 409", async () => {
    const superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
    const create = (headers: Record<string, string>) =>
      t.request("/api/v1/permission", {
        method: "POST",
        token: superAdmin,
        body: { name: "student.read", description: "taken" },
        headers,
      });
    const spanish = await problemOf(await create(es));
    expect(spanish).toMatchObject({
      status: 409,
      title: "Conflicto",
      detail: "Ya existe un permiso con este nombre",
    });
    const english = await problemOf(await create(en));
    expect(english).toMatchObject({ title: "Conflict", detail: "A permission with this name already exists" });
  });

  it("a 422 with its fields: every failed rule, each message in the request's language", async () => {
    const family = await makeFamily(t, NORTH);
    const token = await parentToken(t, family, NORTH);
    // A Saturday, too far ahead.
    const ask = (headers: Record<string, string>) =>
      t.request("/api/v1/exit-permission/absence", {
        method: "POST",
        token,
        school: NORTH,
        body: { studentId: family.studentId, date: "2027-06-05" },
        headers,
      });
    const spanish = await problemOf(await ask(es));
    expect(spanish.status).toBe(422);
    expect(spanish.title).toBe("Solicitud rechazada por una regla de negocio");
    const weekend = "2027-06-05 no es día de clases (fin de semana)";
    expect(spanish.errors).toContainEqual({ path: "date", message: weekend });
    expect(spanish.failures?.find((f) => f.code === "not-school-day")?.message).toBe(weekend);
    expect(spanish.detail).toContain(weekend);
    const english = await problemOf(await ask(en));
    expect(english.errors).toContainEqual({ path: "date", message: "2027-06-05 is not a school day (a weekend)" });
    expect(english.title).toBe("Request refused by a business rule");
  });

  it("a validation 400 in Spanish that reads as Spanish, our field messages too", async () => {
    const spanish = await problemOf(await t.request("/api/v1/version?platform=web&version=1.0.0", { headers: es }));
    expect(spanish).toMatchObject({ status: 400, title: "Solicitud no válida" });
    expect(spanish.errors?.[0]?.path).toBe("platform");
    // Not zod's word-for-word locale ("Opción inválida: se esperaba una de ..."): src/lib/message.ts.
    expect(spanish.errors?.[0]?.message).toBe('Debe ser "ios" o "android"');
    expect(spanish.detail).toBe(`Consulta no válida: platform: ${spanish.errors?.[0]?.message}`);
    const english = await problemOf(await t.request("/api/v1/version?platform=web&version=1.0.0", { headers: en }));
    expect(english.detail).toBe('Invalid query: platform: Invalid option: expected one of "ios"|"android"');

    const unknown = await problemOf(
      await t.request("/api/v1/auth/send-verification-code", {
        method: "POST",
        body: { phone: "+15550000002", extra: 1 },
        headers: es,
      }),
    );
    expect(unknown.errors).toContainEqual({ path: "extra", message: "Campo desconocido" });
  });

  it("zod's common refusals in Spanish sentences; a missing required parameter is required, in both", async () => {
    const admin = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const get = (path: string, headers: Record<string, string>) =>
      t.request(path, { token: admin, school: NORTH, headers }).then(problemOf);
    // zod: "Invalid input: expected string, received undefined" / "se esperaba texto, recibido indefinido".
    const missing = "/api/v1/family/exists";
    expect((await get(missing, es)).errors).toEqual([{ path: "familyNumber", message: "Obligatorio" }]);
    expect((await get(missing, en)).errors).toEqual([{ path: "familyNumber", message: "Required" }]);
    // zod: "Demasiado grande: se esperaba que número fuera <=100".
    const big = await get("/api/v1/student?pageSize=1000", es);
    expect(big.errors).toEqual([{ path: "pageSize", message: "Debe ser 100 o menos" }]);
    expect((await get("/api/v1/student?pageSize=1000", en)).errors).toEqual([
      { path: "pageSize", message: "Too big: expected number to be <=100" },
    ]);
    const small = await get("/api/v1/student?page=0", es);
    expect(small.errors).toEqual([{ path: "page", message: "Debe ser 1 o más" }]);
    const word = await get("/api/v1/student?pageSize=many", es);
    expect(word.errors).toEqual([{ path: "pageSize", message: "Se esperaba un número" }]);
  });

  it("states and modules named in Spanish: a record's state, a switched-off module", async () => {
    const { accessToken } = await t.signIn(DEMO.southAdmin.phone);
    const rules = (headers: Record<string, string>) =>
      t.request("/api/v1/rules-transportation/content", { token: accessToken, school: SOUTH, headers }).then(problemOf);
    expect((await rules(es)).detail).toBe("El módulo «Transporte» está desactivado en la escuela 2");
    expect((await rules(en)).detail).toBe("The transport module is disabled in school 2");
  });

  it("two requests in one isolate at once, each in its own language (no global switch)", async () => {
    const ask = (headers: Record<string, string>) =>
      t.request("/api/v1/version?platform=web&version=1.0.0", { headers });
    const answers = await Promise.all(
      [ask(es), ask(en), ask(es), ask(en), ask(es), ask(en)].map((p) => p.then(problemOf)),
    );
    for (const [i, a] of answers.entries()) {
      if (i % 2 === 0) expect(a.detail).toMatch(/^Consulta no válida: platform: Debe ser/);
      else expect(a.detail).toMatch(/^Invalid query: platform: Invalid option/);
    }
  });

  it("a 403 naming the permission", async () => {
    const teacher = await t.token(DEMO.northTeacher.id, { [NORTH]: [] });
    const ask = (headers: Record<string, string>) =>
      t.request("/api/v1/permission", { token: teacher, school: NORTH, headers });
    const spanish = await problemOf(await ask(es));
    expect(spanish).toMatchObject({
      status: 403,
      title: "No permitido",
      detail: "Falta el permiso permission.read en la escuela 1",
    });
    const english = await problemOf(await ask(en));
    expect(english.detail).toBe("Missing permission permission.read in school 1");
  });

  it("the sign-in SMS in the development outbox, whose code the outbox still reads", async () => {
    const outbox = async (phone: string) => {
      const res = await t.request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`);
      return (await readJson<{ data: { body: string; code: string | null }[] }>(res)).data[0];
    };
    const send = (phone: string, headers: Record<string, string> = {}) =>
      t.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone }, headers });

    expect((await send(DEMO.northAdmin.phone, es)).status).toBe(202);
    const spanish = await outbox(DEMO.northAdmin.phone);
    expect(spanish?.body).toMatch(/^Su código de la app escolar es \d{6}\. Vence en 10 minutos\.$/);
    expect(spanish?.code).toMatch(/^\d{6}$/);
    expect(spanish?.body).toContain(spanish?.code ?? "none");

    t.clock.advance(61);
    expect((await send(DEMO.northAdmin.phone, en)).status).toBe(202);
    expect((await outbox(DEMO.northAdmin.phone))?.body).toMatch(
      /^Your school app code is \d{6}\. It expires in 10 minutes\.$/,
    );

    // No header: the number's own user's language (this demo teacher speaks Spanish).
    const [spanishUser] = await t.db.select({ phone: users.phone }).from(users).where(eq(users.id, 1001));
    if (!spanishUser) throw new Error("no demo user 1001");
    t.clock.advance(61);
    expect((await send(spanishUser.phone)).status).toBe(202);
    expect((await outbox(spanishUser.phone))?.body).toMatch(/^Su código/);
  });

  it("an Excel export: its sheet, headers and file name; its cells' data unchanged", async () => {
    const download = async (headers: Record<string, string>) => {
      const res = await t.request("/api/v1/student/export", { token: admin, school: NORTH, headers });
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const workbook = strFromU8(unzipSync(bytes)["xl/workbook.xml"] ?? new Uint8Array());
      return {
        disposition: res.headers.get("content-disposition"),
        language: res.headers.get("content-language"),
        sheet: /<sheet name="([^"]*)"/.exec(workbook)?.[1],
        rows: readXlsx(bytes),
      };
    };
    const spanish = await download(es);
    expect(spanish).toMatchObject({
      disposition: 'attachment; filename="alumnos.xlsx"',
      language: "es",
      sheet: "Alumnos",
    });
    expect(spanish.rows[0]).toEqual([
      "Id",
      "Nombre",
      "Apellidos",
      "Matrícula",
      "Nivel",
      "Fecha de nacimiento",
      "Estado",
      "Número de familia",
      "Familia",
      "Fecha de creación",
    ]);
    const english = await download(en);
    expect(english).toMatchObject({ disposition: 'attachment; filename="students.xlsx"', sheet: "Students" });
    expect(english.rows[0]?.slice(0, 4)).toEqual(["Id", "First name", "Last name", "Id number"]);
    expect(spanish.rows.slice(1)).toEqual(english.rows.slice(1));
  });

  it("a JSON answer's texts: the levels' names", async () => {
    const levels = async (headers: Record<string, string>) =>
      readJson<{ key: string; label: string }[]>(await t.request("/api/v1/school/levels", { token: admin, headers }));
    expect((await levels(es)).map((l) => l.label)).toEqual(["Preescolar", "Primaria", "Secundaria", "Preparatoria"]);
    expect((await levels(en)).map((l) => l.label)).toEqual([
      "Preschool",
      "Elementary school",
      "Middle school",
      "High school",
    ]);
  });
});

describe("the modules written before messages, in Spanish", () => {
  it("a lost article's claim on a claimed article: a 409 in each language", async () => {
    const id = await makeArticle(t, NORTH);
    const claim = (headers: Record<string, string>) =>
      t.request(`/api/v1/lost-article/${id}/claim`, {
        method: "PATCH",
        token: admin,
        school: NORTH,
        body: {},
        headers,
      });
    expect((await claim(en)).status).toBe(200);
    const spanish = await problemOf(await claim(es));
    expect(spanish).toMatchObject({
      status: 409,
      language: "es",
      title: "Conflicto",
      // The state in Spanish too (src/lib/names.ts); the English keeps the code.
      detail: `El objeto perdido ${id} está en estado reclamado; solo se puede reclamar un objeto encontrado (no reclamado, entregado ni donado)`,
    });
    const english = await problemOf(await claim(en));
    expect(english.detail).toBe(
      `Lost article ${id} is claimed; only a found article (not claimed, delivered or donated) can be claimed`,
    );
  });

  it("an appointment refused: one booking per family, in the singular", async () => {
    const family = await makeFamily(t, NORTH);
    const post = async (path: string, body: unknown, method = "POST") => {
      const res = await t.request(path, { method, token: admin, school: NORTH, body });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      return readJson<{ id: number }>(res);
    };
    const task = await post("/api/v1/pending", {
      title: "Entrevistas con docentes",
      requiresAppointment: true,
      studentIds: [family.studentId],
    });
    const session = await post("/api/v1/session", { taskId: task.id, slotMinutes: 15, bookingsPerFamily: 1 });
    // A Wednesday after the test clock's Monday: two slots, 10:00 and 10:15.
    await post("/api/v1/session-day", {
      sessionId: session.id,
      date: "2026-12-02",
      windows: [{ start: "10:00", end: "10:30" }],
    });
    await post(`/api/v1/session/${session.id}/slots`, {}, "PUT");
    await post(`/api/v1/session/${session.id}/publish`, undefined, "PUT");
    const slots = await readJson<{ data: { id: number }[] }>(
      await t.request(`/api/v1/time-slot?sessionId=${session.id}`, { token: admin, school: NORTH }),
    );
    const [first, second] = slots.data;
    if (!first || !second) throw new Error("two slots expected");
    const book = (slotId: number, headers: Record<string, string>) =>
      t.request(`/api/v1/time-slot/${slotId}/appointment`, {
        method: "POST",
        token: admin,
        school: NORTH,
        body: { studentId: family.studentId },
        headers,
      });
    expect((await book(first.id, en)).status).toBe(201);
    const spanish = await problemOf(await book(second.id, es));
    expect(spanish).toMatchObject({
      status: 422,
      language: "es",
      detail: "La familia ya tiene 1 reserva en esta sesión de citas (como máximo 1): cancele una para reservar otra",
    });
    const english = await problemOf(await book(second.id, en));
    expect(english.detail).toBe(
      "The family holds 1 booking in this session already (at most 1): cancel one to book another",
    );
  });
});

describe("an import's report, in the language of whoever started it", () => {
  /** Uploads a teachers file, starts the import in `headers`'s language, runs the consumer. */
  async function importTeachers(headers: Record<string, string>, columns: string[]) {
    const slug = `1/documents/teachers-${Math.random().toString(36).slice(2)}.xlsx`;
    const doc = await t.request("/api/v1/documents", {
      method: "POST",
      token: admin,
      school: NORTH,
      body: { name: "Teachers", slug },
    });
    expect(doc.status).toBe(201);
    const rows = [["not a phone", "Ana", "Ruiz", null, "es", null, null]];
    const file = xlsxStream({ name: verbatim("Hoja"), columns: columns.map(verbatim), rows });
    await env.DOCUMENTS.put(slug, new Uint8Array(await new Response(file).arrayBuffer()));
    const started = await t.request("/api/v1/teacher/upload-file", {
      method: "POST",
      token: admin,
      school: NORTH,
      body: { documentId: (await readJson<{ id: number }>(doc)).id },
      headers,
    });
    expect(started.status).toBe(201);
    const { id } = await readJson<{ id: number }>(started);
    const batch = createMessageBatch("school-bulk", [
      { id: `lang-${id}`, body: sent.at(-1), timestamp: new Date(), attempts: 1 },
    ]);
    const ctx = createExecutionContext();
    await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
    // Read back in the other language: the report stays as it was written.
    const read = await t.request(`/api/v1/bulk-process/${id}`, { token: admin, school: NORTH, headers: en });
    return readJson<{ status: string; errors: { row: number; column?: string; message: string }[] }>(read);
  }

  it("finds the columns by their Spanish headers and reports in Spanish; in English when started in English", async () => {
    const spanishHeaders = [
      "Teléfono",
      "Nombre",
      "Apellidos",
      "Correo electrónico",
      "Idioma",
      "Materias",
      "Número de empleado",
    ];
    const spanish = await importTeachers(es, spanishHeaders);
    expect(spanish.errors).toEqual([
      {
        row: 2,
        column: "Teléfono",
        message: "No es un número de teléfono con su código de país (como +52 55 1234 5678)",
      },
    ]);
    const englishHeaders = ["Phone", "First name", "Last name", "Email", "Language", "Subjects", "Employee number"];
    const english = await importTeachers(en, englishHeaders);
    expect(english.errors).toEqual([
      { row: 2, column: "Phone", message: "Not a phone number with its country code (like +52 55 1234 5678)" },
    ]);
  });
});

describe("without Accept-Language", () => {
  const ask = (token: string, school = NORTH) => t.request("/api/v1/family/999999", { token, school });

  it("the user's language (the token's lng claim), before the school's", async () => {
    const spanishUser = await tokenWith(DEMO.northAdmin.id, { language: "es", schoolLanguages: { [NORTH]: "en" } });
    expect((await problemOf(await ask(spanishUser))).detail).toBe("Familia 999999 no existe");
    const englishUser = await tokenWith(DEMO.northAdmin.id, { language: "en", schoolLanguages: { [NORTH]: "es" } });
    expect((await problemOf(await ask(englishUser))).detail).toBe("Family 999999 not found");
    // The header still wins over both.
    const res = await t.request("/api/v1/family/999999", { token: spanishUser, school: NORTH, headers: en });
    expect((await problemOf(res)).detail).toBe("Family 999999 not found");
  });

  it("signing in carries the user's language and each school's in the token", async () => {
    const [user] = await t.db.select({ phone: users.phone }).from(users).where(eq(users.id, 1001));
    if (!user) throw new Error("no demo user 1001");
    const session = await t.signIn(user.phone);
    const claims = JSON.parse(atob(session.accessToken.split(".")[1]?.replace(/-/g, "+").replace(/_/g, "/") ?? ""));
    expect(claims).toMatchObject({ lng: "es", sl: { [NORTH]: "es" } });
    expect((await problemOf(await ask(session.accessToken))).language).toBe("es");
  });

  it("else the school's language (the token's sl claim for the school acted in)", async () => {
    const token = await tokenWith(DEMO.northAdmin.id, { schoolLanguages: { [NORTH]: "es" } });
    expect((await problemOf(await ask(token))).detail).toBe("Familia 999999 no existe");
    const english = await tokenWith(DEMO.northAdmin.id, { schoolLanguages: { [NORTH]: "en" } });
    expect((await problemOf(await ask(english))).detail).toBe("Family 999999 not found");
  });

  it("a school a super-admin acts in: its language read with the school's lookup", async () => {
    // A token without the user's language (minted before it was carried), so the school's counts.
    const superAdmin = await signAccessToken(t.deps.config.authSecret, t.clock.now(), {
      userId: DEMO.superAdmin.id,
      isSuperAdmin: true,
      schools: {},
    });
    expect((await problemOf(await ask(superAdmin, NORTH))).language).toBe("es");
    expect((await problemOf(await ask(superAdmin, SOUTH))).language).toBe("en");
  });

  it("else English: a token minted before the claims existed", async () => {
    const old = await tokenWith(DEMO.northAdmin.id, {});
    expect((await problemOf(await ask(old))).detail).toBe("Family 999999 not found");
  });

  it("new people take the school's language; the school's own can be changed", async () => {
    const add = async (school: number, token: string) => {
      const phone = fixturePhone();
      const res = await t.request("/api/v1/user", {
        method: "POST",
        token,
        school,
        body: { phone, firstName: "Nueva", lastName: "Persona" },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const [row] = await t.db.select({ language: users.language }).from(users).where(eq(users.phone, phone));
      return row?.language;
    };
    const north = await tokenWith(DEMO.northAdmin.id, { schoolLanguages: { [NORTH]: "es" } });
    expect(await add(NORTH, north)).toBe("es");
    const south = await signAccessToken(t.deps.config.authSecret, t.clock.now(), {
      userId: DEMO.southAdmin.id,
      isSuperAdmin: false,
      schools: { [SOUTH]: PermissionSet.encode(PERMISSION_NAMES.map(permissionId)) },
      schoolLanguages: { [SOUTH]: "en" },
    });
    expect(await add(SOUTH, south)).toBe("en");

    const update = await t.request(`/api/v1/school/${SOUTH}`, {
      method: "PUT",
      token: south,
      school: SOUTH,
      body: { language: "es" },
    });
    expect(update.status).toBe(204);
    const [row] = await t.db.select({ language: schools.language }).from(schools).where(eq(schools.id, SOUTH));
    expect(row?.language).toBe("es");
    const school = await readJson<{ language: string }>(
      await t.request(`/api/v1/school/${SOUTH}`, { token: south, school: SOUTH }),
    );
    expect(school.language).toBe("es");
  });
});

describe("every state a record can be in has its Spanish name (src/lib/names.ts)", () => {
  it("each status column's values, and a state in a sentence", () => {
    const states = new Set<string>();
    for (const t of dumpTables()) {
      const status = t.columns.status as { enumValues?: string[] } | undefined;
      for (const v of status?.enumValues ?? []) states.add(v);
    }
    expect(states.size).toBeGreaterThan(20);
    const missing = [...states].filter((s) => stateName(s) === s);
    expect(missing).toEqual([]);
    const said = m`Exit permission ${7} is ${stateName("confirmed")}; it was decided meanwhile`;
    expect(said.render("es")).toBe("El permiso de salida 7 está en estado confirmado; se resolvió mientras tanto");
    expect(said.render("en")).toBe("Exit permission 7 is confirmed; it was decided meanwhile");
  });
});
