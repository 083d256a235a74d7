/** Test helpers: an app on the real local bindings with a settable clock, and signed-in callers. */
import { env } from "cloudflare:test";
import { inject } from "vitest";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { type Db, d1 } from "../src/db/client";
import { users } from "../src/db/schema/core";
import { shardOf } from "../src/db/shards";
import { getTableColumns, inArray, sql } from "../src/db/sql";
import type { Deps, QueueProducer } from "../src/deps";
import { PermissionSet } from "../src/lib/access";
import { dohResolver } from "../src/lib/dns";
import type { Module } from "../src/lib/module";
import { logPush } from "../src/lib/push";
import { s3Signer } from "../src/lib/s3";
import { logSms } from "../src/lib/sms";
import { signAccessToken } from "../src/lib/tokens";
import { permissionCatalogue } from "../src/modules";
import { PushQueue } from "./push-queue";
import { type AnswerDocument, assertAnswerShape } from "./response-schemas";

/** Every permission name of the catalogue. */
export const PERMISSION_NAMES = permissionCatalogue().map((p) => p.name);

/** The id of a permission by name (a misspelt name fails the test). */
export function permissionId(name: string): number {
  const found = permissionCatalogue().find((p) => p.name === name);
  if (!found) throw new Error(`no permission named ${name}`);
  return found.id;
}

export class TestClock {
  constructor(public current = new Date("2026-11-23T15:00:00.000Z")) {}
  now() {
    return new Date(this.current);
  }
  advance(seconds: number) {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
  /** Waiting by this clock advances it (a school's move waits out the shard map's expiry: src/db/move.ts). */
  async wait(ms: number) {
    this.advance(ms / 1000);
  }
}

export const DEMO = {
  superAdmin: { id: 1, phone: "+15550000001" },
  northAdmin: { id: 2, phone: "+15550000002", school: 1 },
  northTeacher: { id: 3, phone: "+15550000003", school: 1 },
  northParent: { id: 4, phone: "+15550000004", school: 1 },
  southAdmin: { id: 5, phone: "+15550000012", school: 2 },
} as const;

/** The test bindings' settings with some vars changed, parsed as the Worker parses its env. */
export function configWith(vars: Record<string, string>) {
  return loadConfig({ ...env, ...vars });
}

/**
 * The production limits on codes and number checks, set explicitly: the test bindings say
 * ENVIRONMENT=development, whose defaults are relaxed.
 */
export const STRICT_AUTH_LIMITS = {
  AUTH_RESEND_COOLDOWN_SECONDS: "60",
  AUTH_CODES_PER_HOUR: "5",
  AUTH_PHONE_CHECKS_PER_NUMBER: "10",
  AUTH_PHONE_CHECKS_PER_ADDRESS: "30",
};

const TEXT = /^(text\/|application\/([\w.+-]*\+)?(json|xml)|application\/x-www-form-urlencoded)/i;

/**
 * An answer whose `text()` decodes its bytes when it is a file (an .xlsx, a PDF): tests print
 * answers in their assertion messages (`await res.clone().text()`), and workerd warns on `text()` of
 * a body that is not text (the decoding is the same). Everything else is the response's own.
 */
function readable(res: Response): Response {
  const type = res.headers.get("content-type") ?? "";
  if (type === "" || TEXT.test(type)) return res;
  return new Proxy(res, {
    get(target, prop) {
      if (prop === "text") return async () => new TextDecoder().decode(await target.arrayBuffer());
      if (prop === "clone") return () => readable(target.clone());
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * An app on the test bindings; `overrides` replace its parts (`config: configWith({...})`). Queues
 * not given are held in memory (`t.deps.queues.webhook`, a `PushQueue`).
 */
export function makeTestApp(
  overrides: Omit<Partial<Deps>, "queues"> & {
    queues?: Partial<Deps["queues"]>;
  } = {},
  /** Modules served besides the registry's (test/recipe/). */
  modules: readonly Module[] = [],
) {
  const clock = new TestClock();
  const config = overrides.config ?? loadConfig(env);
  const db = d1(env.DB);
  const deps: Deps = {
    config,
    db,
    clock,
    sms: logSms(db, clock),
    push: logPush(db, clock),
    storage: env.DOCUMENTS,
    signer: s3Signer(config.s3),
    assets: env.ASSETS,
    // The live board's hub: the Worker's own Durable Object, under Miniflare (wrangler.toml [env.dev]).
    live: env.DISMISSAL_LIVE,
    // DNS over HTTPS against the loopback receiver's DoH endpoint (test/node/webhook-receiver.ts).
    resolver: dohResolver(`${inject("webhookReceiver")}/dns-query`),
    ...overrides,
    // Pushes, imports and webhook deliveries are held in memory (delivered only when a test drains
    // them, test/push-queue.ts): the real queue's consumer would run in the background, racing the
    // test's own deliveries and past the end of the test file, and Miniflare's queue broker was seen
    // to stop delivering under a lane's load (docs/architecture.md "The suite's time"). The real
    // queue, consumed by the Worker, has its own test (test/bulk-process.test.ts "end to end").
    queues: {
      push: overrides.queues?.push ?? new PushQueue(),
      bulk: overrides.queues?.bulk ?? new PushQueue("school-bulk"),
      webhook: overrides.queues?.webhook ?? new PushQueue("school-webhook"),
    },
  };
  // Two databases, as every environment has (docs/scaling.md "Shards"): shard 0 is the handle the
  // app was given (a test's wrapper of DB too).
  deps.shards = overrides.shards ?? { DB: deps.db, DB_SHARD_1: d1(env.DB_SHARD_1) };
  const app = createApp({ deps: () => deps, development: true, modules });

  async function request(
    path: string,
    init: Omit<RequestInit, "body"> & { token?: string; school?: number; body?: unknown } = {},
  ) {
    const { token, school, body, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token) headers.set("authorization", `Bearer ${token}`);
    if (school !== undefined) headers.set("x-school-id", String(school));
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      if (typeof body === "string" || body instanceof Uint8Array) payload = body;
      else {
        payload = JSON.stringify(body);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
    }
    const res = await app.request(`http://localhost${path}`, { ...rest, headers, body: payload }, env);
    await assertDeclared(app, rest.method ?? "GET", path, res);
    return readable(res);
  }

  /** Signs in through the real flow: send a code, read it from the outbox, verify it. */
  async function signIn(phone: string) {
    const sent = await request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
    if (sent.status !== 202) throw new Error(`send code: ${sent.status} ${await sent.text()}`);
    const code = await lastCode(phone);
    const res = await request("/api/v1/auth/verify-code", { method: "POST", body: { phone, code } });
    if (res.status !== 200) throw new Error(`verify code: ${res.status} ${await res.text()}`);
    clock.advance(61); // past the resend cooldown, so a test can sign the same number in again
    return (await res.json()) as { accessToken: string; refreshToken: string; user: { id: number } };
  }

  async function lastCode(phone: string) {
    const res = await request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`);
    const page = (await res.json()) as { data: { code: string | null }[] };
    const code = page.data[0]?.code;
    if (!code) throw new Error(`no code in the outbox for ${phone}`);
    return code;
  }

  /**
   * Mints an access token directly: for callers with exactly the permissions a test needs. It says
   * the user speaks `language` (English unless told), as a token from sign-in says the user's own:
   * without Accept-Language, answers are in it (test/languages.test.ts mints tokens without it).
   */
  async function token(
    userId: number,
    schools: Record<number, string[] | "all">,
    superAdmin = false,
    language: "es" | "en" = "en",
  ) {
    const encoded = Object.fromEntries(
      Object.entries(schools).map(([id, perms]) => [
        id,
        PermissionSet.encode((perms === "all" ? PERMISSION_NAMES : perms).map(permissionId)),
      ]),
    );
    return signAccessToken(config.authSecret, clock.now(), {
      userId,
      isSuperAdmin: superAdmin,
      schools: encoded,
      language,
    });
  }

  /**
   * The database that holds `school`'s rows (docs/scaling.md "Shards"): demo school 2's is
   * `DB_SHARD_1`. A test reads and writes a school's rows there; `db` is the platform's (and school
   * 1's): a user row, a sign-in code, the shard map.
   */
  // The test's own handles (as `db`): not the app's, which a test may wrap to count or fail.
  const own: Record<string, Db> = { DB: db, DB_SHARD_1: d1(env.DB_SHARD_1) };
  async function schoolDb(school: number): Promise<Db> {
    const name = await shardOf(deps, school);
    const found = own[name] ?? deps.shards?.[name];
    if (!found) throw new Error(`school ${school} is on ${name}, a database this test app has no handle for`);
    return found;
  }

  /**
   * The anchors of platform user rows in `school`'s database (docs/scaling.md "Anchors"): each row
   * as the platform has it, written over any copy there; nothing on the platform's own database. A
   * test that inserts a user and then a school's row naming them calls this between the two.
   */
  async function anchorUsers(school: number, ...ids: number[]) {
    const target = await schoolDb(school);
    if (target === db || ids.length === 0) return;
    const rows = await db.select().from(users).where(inArray(users.id, ids));
    const columns = Object.entries(getTableColumns(users)).filter(([key]) => key !== "id");
    const set = Object.fromEntries(columns.map(([key, c]) => [key, sql.raw(`excluded."${c.name}"`)]));
    await target.insert(users).values(rows).onConflictDoUpdate({ target: users.id, set });
  }

  return { app, deps, clock, db, request, signIn, lastCode, token, schoolDb, anchorUsers };
}

export type TestApp = ReturnType<typeof makeTestApp>;

/**
 * A test app whose D1 binding counts round trips independently of the app's own count: a batch is
 * one, and so is each `all`/`run`/`first`/`raw` of a statement outside a batch.
 * @example const { t, measure } = countingTestApp(); expect((await measure(() => t.request(...))).calls).toBe(1);
 */
export function countingTestApp() {
  let calls = 0;
  const EXECUTES = new Set(["all", "run", "first", "raw"]);
  const countedStatement = (s: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(s, {
      get(target, p) {
        const v = Reflect.get(target, p, target);
        if (typeof v !== "function") return v;
        return (...a: unknown[]) => {
          if (EXECUTES.has(String(p))) calls++;
          const out = (v as (...x: unknown[]) => unknown).apply(target, a);
          return p === "bind" ? countedStatement(out as D1PreparedStatement) : out;
        };
      },
    });
  // The binding and each D1 session opened on it (every request runs in one) count alike.
  const counting = <B extends D1Database | D1DatabaseSession>(binding: B): B =>
    new Proxy(binding, {
      get(target, prop) {
        if (prop === "prepare") return (q: string) => countedStatement(target.prepare(q));
        if (prop === "batch") {
          return (statements: D1PreparedStatement[]) => {
            calls++;
            return target.batch(statements);
          };
        }
        if (prop === "withSession" && "withSession" in target) {
          return (start?: string) => counting(target.withSession(start));
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  // Every database's round trips count: a request on a school of the shard makes its calls there.
  const db = d1(counting(env.DB));
  const t = makeTestApp({ db, shards: { DB: db, DB_SHARD_1: d1(counting(env.DB_SHARD_1)) } });
  return {
    t,
    /** Runs `run` and answers its response and the D1 round trips it made. */
    async measure(run: () => Promise<Response>) {
      calls = 0;
      const res = await run();
      return { res, calls };
    },
  };
}

type Spec = AnswerDocument;
type Template = { path: string; pattern: RegExp; operations: Spec["paths"][string] };

// The OpenAPI document and its path templates, built once per test file and set of routes (a test
// that adds probe routes to its app gets a document that knows them).
const documents = new Map<string, Promise<{ spec: Spec; templates: Template[] }>>();

function documentOf(app: ReturnType<typeof createApp>): Promise<{ spec: Spec; templates: Template[] }> {
  const key = app.openAPIRegistry.definitions
    .map((d) => (d.type === "route" ? `${d.route.method} ${d.route.path}` : ""))
    .join("\n");
  let found = documents.get(key);
  if (!found) {
    found = (async () => {
      const res = await app.request("http://localhost/api/openapi.json", {}, env);
      const spec = (await res.json()) as Spec;
      const templates = Object.entries(spec.paths)
        .map(([path, operations]) => ({
          path,
          operations,
          // `{name}` matches one segment; everything else is literal (escape regex metacharacters).
          pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, "[^/]+")}$`),
        }))
        .sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
      return { spec, templates };
    })();
    documents.set(key, found);
  }
  return found;
}

/**
 * Fails the test when a response is not what its OpenAPI operation declares: its status must be
 * one the operation declares, and a 2xx JSON body must match the declared schema
 * (test/response-schemas.ts). Every request a test makes checks the document. An unknown path is
 * not checked (its 404 is the app's); a known path with a method it does not serve must answer 405.
 */
async function assertDeclared(app: ReturnType<typeof createApp>, method: string, url: string, res: Response) {
  const { status } = res;
  // OPTIONS is the CORS layer's (preflights, src/middleware/cors.ts), never an operation's.
  if (method.toUpperCase() === "OPTIONS") return;
  const path = url.split("?")[0] ?? url;
  const { spec, templates: all } = await documentOf(app);
  const templates = all.filter((t) => t.pattern.test(path));
  if (templates.length === 0) return;
  const verb = method.toLowerCase() === "head" ? "get" : method.toLowerCase();
  const template = templates.find((t) => Object.hasOwn(t.operations, verb));
  const operation = template?.operations[verb];
  if (!template || !operation) {
    if (status !== 405) throw new Error(`${method} ${path}: no such operation, so 405 expected; got ${status}`);
    return;
  }
  const declared = Object.keys(operation.responses);
  if (!declared.includes(String(status)) && !declared.includes("default")) {
    throw new Error(
      `${method} ${path} answered ${status}, which ${operation.operationId} (${template.path}) does not declare; ` +
        `declared: ${declared.join(", ")}`,
    );
  }
  if (method.toUpperCase() !== "HEAD") await assertAnswerShape(spec, operation, template.path, verb, res);
}

/** The example problems an operation of the OpenAPI document shows for a status (one, or several named). */
export function documentedProblems(
  op: {
    responses: Record<
      string,
      { content?: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }> }
    >;
  },
  status: number,
): { detail: string; title: string; instance: string }[] {
  const media = op.responses[String(status)]?.content?.["application/problem+json"];
  const values = media?.examples
    ? Object.values(media.examples).map((e) => e.value)
    : media?.example
      ? [media.example]
      : [];
  return values as { detail: string; title: string; instance: string }[];
}

/** Switches an application module on or off in a school, as the super-admin does through the API. */
export async function setModule(t: TestApp, school: number, module: string, enabled: boolean) {
  const res = await t.request(`/api/v1/application-module/school/${module}/enabled`, {
    method: "PUT",
    token: await t.token(DEMO.superAdmin.id, {}, true),
    school,
    body: { enabled },
  });
  if (res.status !== 204)
    throw new Error(`switching ${module} ${enabled ? "on" : "off"}: ${res.status} ${await res.text()}`);
}

/** Reads a problem+json body and checks its shape. */
export async function problem(res: Response) {
  const body = (await res.json()) as {
    type: string;
    title: string;
    status: number;
    detail: string;
    instance: string;
    errors?: { path: string; message: string }[];
  };
  if (!res.headers.get("content-type")?.startsWith("application/problem+json")) {
    throw new Error(`not problem+json: ${res.headers.get("content-type")} ${JSON.stringify(body)}`);
  }
  if (body.status !== res.status) throw new Error(`problem status ${body.status} != ${res.status}`);
  return body;
}

/**
 * Every row of a paginated list, page after page of 100 (the demo seed alone fills several pages
 * of some lists: scripts/demo-school.ts). `path` may carry a query of its own.
 */
export async function allPages<T = { id: number }>(
  t: TestApp,
  path: string,
  init: { token: string; school?: number },
): Promise<{ data: T[]; total: number }> {
  const data: T[] = [];
  for (let page = 1; ; page++) {
    const res = await t.request(`${path}${path.includes("?") ? "&" : "?"}pageSize=100&page=${page}`, init);
    if (res.status !== 200) throw new Error(`${path} page ${page}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: T[]; total: number; lastPage: number };
    data.push(...body.data);
    if (page >= body.lastPage) return { data, total: body.total };
  }
}

/**
 * The D1 binding, failing on demand as D1 fails: each execution `when` selects (a statement's
 * `all`/`run`/`first`/`raw`, or a whole `batch`, whose SQL is its statements' joined by `;\n`)
 * throws `text`, D1's own error text, the first `times` times (default: every time), then runs.
 * With `after`, the real call runs first and its answer is lost (a commit whose answer never came
 * back). `attempts` lists the SQL of every selected execution, failed or not.
 * @example const db = failingD1(env.DB, { text: "D1_ERROR: database is locked: SQLITE_BUSY", times: 1 });
 */
export function failingD1(
  binding: D1Database,
  fault: { text: string; times?: number; when?: (sql: string) => boolean; after?: boolean },
) {
  const attempts: string[] = [];
  let left = fault.times ?? Number.POSITIVE_INFINITY;
  const REAL = Symbol("real");
  type Wrapped = D1PreparedStatement & { [REAL]: D1PreparedStatement; sql: string };
  const selected = (sql: string) => {
    if (fault.when && !fault.when(sql)) return false;
    attempts.push(sql);
    if (left <= 0) return false;
    left--;
    return true;
  };
  // As the binding throws them: the text, with the database's own message as the cause.
  const error = () => new Error(fault.text, { cause: new Error(fault.text.replace(/^D1_ERROR: /, "")) });
  async function execute<T>(sql: string, run: () => Promise<T>): Promise<T> {
    if (!selected(sql)) return run();
    if (fault.after) await run();
    throw error();
  }
  const wrap = (real: D1PreparedStatement, sql: string): Wrapped =>
    ({
      [REAL]: real,
      sql,
      bind: (...values: unknown[]) => wrap(real.bind(...values), sql),
      first: (column?: string) => execute(sql, () => (column === undefined ? real.first() : real.first(column))),
      all: () => execute(sql, () => real.all()),
      run: () => execute(sql, () => real.run()),
      raw: (options?: { columnNames?: boolean }) =>
        execute(sql, () => (options?.columnNames ? real.raw({ columnNames: true }) : real.raw())),
    }) as unknown as Wrapped;
  // The binding and each D1 session opened on it (every request runs in one) fail alike.
  const statements = (target: D1Database | D1DatabaseSession) => ({
    prepare: (sql: string) => wrap(target.prepare(sql), sql),
    batch: (statements: Wrapped[]) =>
      execute(statements.map((s) => s.sql).join(";\n"), () => target.batch(statements.map((s) => s[REAL]))),
  });
  const db = {
    ...statements(binding),
    exec: (sql: string) => execute(sql, () => binding.exec(sql)),
    dump: () => binding.dump(),
    withSession: (constraint?: string) => {
      const session = binding.withSession(constraint);
      return { ...statements(session), getBookmark: () => session.getBookmark() };
    },
  } as unknown as D1Database;
  return { db, attempts };
}

/**
 * The bulk queue as the API sees it: every message sent is kept in `sent` (the consumer is run by
 * hand, one message at a time), so a test drives the pipeline step by step.
 */
export function recordingBulkQueue() {
  const sent: { bulkProcessId: number; schoolId: number }[] = [];
  const queue: QueueProducer = {
    send: async (body) => {
      sent.push(body as (typeof sent)[number]);
    },
    sendBatch: async (messages) => {
      for (const m of messages) sent.push(m.body as (typeof sent)[number]);
    },
  };
  return { sent, queue };
}

export type Recorded = { sql: string; args: unknown[] };

/** A D1 binding that records each statement it prepares, with its bound values. */
export function recordingD1<T extends D1Database | D1DatabaseSession>(real: T, log: Recorded[]): T {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === "prepare") {
        return (sql: string) => {
          const entry: Recorded = { sql, args: [] };
          log.push(entry);
          const statement = target.prepare(sql);
          return new Proxy(statement, {
            get(s, p) {
              if (p === "bind") {
                return (...args: unknown[]) => {
                  entry.args = args;
                  return s.bind(...args);
                };
              }
              const value = Reflect.get(s, p, s);
              return typeof value === "function" ? value.bind(s) : value;
            },
          });
        };
      }
      // Requests run their queries in a D1 session (the Sessions API): record those too.
      if (prop === "withSession" && "withSession" in target)
        return (start?: string) => recordingD1(target.withSession(start), log);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
