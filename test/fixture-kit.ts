/** What module fixtures (`test/fixtures/modules/<name>.ts`) are made of. */
import type { TestApp } from "./helpers";

/** A value a test makes when it needs it (a record the call refers to), in `school`. */
export type Made<T> = (t: TestApp, school: number) => Promise<T>;

export interface Fixture {
  /** Creates a record in `school` (through the API, as a caller allowed to) and returns its id. */
  create(t: TestApp, school: number): Promise<number>;
  /**
   * Valid request bodies by operationId, for operations that take one (updates, actions); a
   * `Made` body is made for each call (when it must name a record of its own).
   */
  bodies?: Record<string, unknown | Made<unknown>>;
  /**
   * Values of path parameters other than `{id}` and `{...Id}` (default: `documents`) and of required
   * query parameters (default: their example), made for each call: e.g. the key of a record the
   * call may change without disturbing other tests.
   */
  params?: Record<string, Made<string>>;
}

/** Fixtures of a module, keyed by the collection path they make records for. */
export type Fixtures = Record<string, Fixture>;

/** A super-admin token acting in `school`: the simplest caller that may create anything. */
export async function asSuperAdmin(t: TestApp) {
  return t.token(1, {}, true);
}

/** POSTs `body` to `path` in `school` and returns the created id (fails loudly otherwise). */
export async function createVia(t: TestApp, path: string, school: number, body: unknown, token?: string) {
  const res = await t.request(path, { method: "POST", token: token ?? (await asSuperAdmin(t)), school, body });
  if (res.status !== 201) throw new Error(`fixture POST ${path}: ${res.status} ${await res.text()}`);
  return (await readJson<{ id: number }>(res)).id;
}

/** A response body as the type a test expects of it. */
export async function readJson<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

let unique = 0;
/** A value unique within a test file (names, slugs, tokens). */
export const uniq = (prefix: string) => `${prefix}-${++unique}-${Math.random().toString(36).slice(2, 8)}`;

let phones = 0;
/**
 * A phone number no other fixture has made: every module's fixtures run in one file (the
 * conformance suite), and one person is one user, so two fixtures sharing a number would share a
 * person across schools. The demo's numbers are +1555000xxxx and +1555600xxxx.
 */
export const fixturePhone = () => `+1555${String(9_000_000 + ++phones)}`;
