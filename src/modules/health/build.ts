/**
 * What this Worker was built from, as `/api/health` reports it: the commit, its date, when it was
 * built, and the last migration the code expects. Injected at build time with wrangler's `--define`
 * (scripts/wrangler.mjs runs every `npm run dev`, `build` and `deploy` through it; vitest.config.ts
 * defines them for the tests). A build without them (a bare `npx wrangler deploy`) reports
 * "unknown", and cannot tell whether the database lacks a migration.
 */
declare const __BUILD_COMMIT__: string | undefined;
declare const __BUILD_COMMITTED_AT__: string | undefined;
declare const __BUILD_AT__: string | undefined;
declare const __LATEST_MIGRATION__: string | undefined;

// `typeof` of a name the build did not define is "undefined", never a ReferenceError.
const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

export function buildInfo() {
  return {
    commit: text(typeof __BUILD_COMMIT__ === "undefined" ? undefined : __BUILD_COMMIT__) ?? "unknown",
    committedAt: text(typeof __BUILD_COMMITTED_AT__ === "undefined" ? undefined : __BUILD_COMMITTED_AT__),
    builtAt: text(typeof __BUILD_AT__ === "undefined" ? undefined : __BUILD_AT__),
  };
}

/** The last migration (its file name) the code was built with, or null when the build did not say. */
export const expectedMigration = (): string | null =>
  text(typeof __LATEST_MIGRATION__ === "undefined" ? undefined : __LATEST_MIGRATION__);
