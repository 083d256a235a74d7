/**
 * How the generated suites (test/conformance.test.ts) make a real record of each resource: every
 * module's `fixture.ts`, keyed by collection path. An operation uses the fixture whose path is the
 * longest prefix of its own; a route with an `{id}` whose resource has no fixture fails the suite,
 * so every new resource adds one beside its module.
 */
import type { Fixture, Fixtures } from "./fixture-kit";

const modules = import.meta.glob<{ fixtures: Fixtures }>("../src/modules/*/fixture.ts", { eager: true });

export const FIXTURES: Record<string, Fixture> = Object.assign({}, ...Object.values(modules).map((m) => m.fixtures));

export { asSuperAdmin, createVia, uniq } from "./fixture-kit";
export type { Fixture };
